package redistest

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Cluster is a Redis Cluster of masters without replicas, each a
// redis-server on 127.0.0.1 that a test may kill and restart (as the
// same node, its slots kept, empty).
type Cluster struct {
	t     testing.TB
	Nodes []*Server
}

// clusterNodeTimeout is the nodes' cluster-node-timeout: long enough
// that a loaded test machine does not fail a node that is alive, short
// enough that a restarted node serves again soon.
const clusterNodeTimeout = "2000"

// StartCluster starts a cluster of n masters (3 at least, as Redis
// wants), the 16,384 slots split evenly between them, and waits until
// every node says the cluster is ok. It skips the test when redis-server
// is not installed. The cluster keeps serving the slots of a node that
// is down (cluster-require-full-coverage no), so that a test sees what
// losing one master costs.
func StartCluster(t testing.TB, n int) *Cluster {
	t.Helper()
	c := &Cluster{t: t}
	for range n {
		s := newServer(t, clusterPort(t), "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", clusterNodeTimeout, "--cluster-require-full-coverage", "no")
		s.start()
		c.Nodes = append(c.Nodes, s)
	}
	const slots = 16384
	for i, s := range c.Nodes {
		args := []string{"CLUSTER", "ADDSLOTS"}
		for slot := i * slots / n; slot < (i+1)*slots/n; slot++ {
			args = append(args, strconv.Itoa(slot))
		}
		if _, err := s.Do(args...); err != nil {
			t.Fatalf("CLUSTER ADDSLOTS on %s: %v", s.Addr(), err)
		}
		// Distinct config epochs, as redis-cli gives them: no collision
		// to resolve before the slots settle.
		if _, err := s.Do("CLUSTER", "SET-CONFIG-EPOCH", strconv.Itoa(i+1)); err != nil {
			t.Fatalf("CLUSTER SET-CONFIG-EPOCH on %s: %v", s.Addr(), err)
		}
	}
	for _, s := range c.Nodes[1:] {
		if _, err := c.Nodes[0].Do("CLUSTER", "MEET", "127.0.0.1", strconv.Itoa(s.port)); err != nil {
			t.Fatalf("CLUSTER MEET: %v", err)
		}
	}
	c.WaitOK()
	return c
}

// URL is the cluster's redis+cluster:// address, every node named.
func (c *Cluster) URL() string {
	addrs := make([]string, len(c.Nodes))
	for i, s := range c.Nodes {
		addrs[i] = s.Addr()
	}
	return "redis+cluster://" + strings.Join(addrs, ",")
}

// WaitOK waits until every node that runs says the cluster is ok and
// knows every node and slot.
func (c *Cluster) WaitOK() {
	c.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for _, s := range c.Nodes {
		if !s.Running() {
			continue
		}
		for {
			info, err := s.Do("CLUSTER", "INFO")
			if err == nil && strings.Contains(info, "cluster_state:ok") &&
				strings.Contains(info, "cluster_slots_assigned:16384") &&
				strings.Contains(info, fmt.Sprintf("cluster_known_nodes:%d", len(c.Nodes))) {
				break
			}
			if time.Now().After(deadline) {
				c.t.Fatalf("the cluster is not ok on %s within 20s: %v\n%s", s.Addr(), err, info)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// Busiest returns the running node that holds the most keys: the one
// whose slots hold a test's one list.
func (c *Cluster) Busiest() *Server {
	c.t.Helper()
	var best *Server
	most := -1
	for _, s := range c.Nodes {
		if !s.Running() {
			continue
		}
		out, err := s.Do("DBSIZE")
		if err != nil {
			c.t.Fatalf("DBSIZE on %s: %v", s.Addr(), err)
		}
		if n, _ := strconv.Atoi(out); n > most {
			best, most = s, n
		}
	}
	return best
}

// Flush empties every running node.
func (c *Cluster) Flush() {
	c.t.Helper()
	for _, s := range c.Nodes {
		if s.Running() {
			s.Flush()
		}
	}
}

// Running reports whether the server runs (it was not killed, or was
// restarted since).
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd != nil
}

// clusterPort returns a free loopback port below 55536 whose cluster bus
// port (the port + 10000) is free too.
func clusterPort(t testing.TB) int {
	t.Helper()
	for range 100 {
		p := freePort(t)
		if p >= 55536 {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p+10000)))
		if err != nil {
			continue
		}
		_ = l.Close()
		return p
	}
	t.Fatal("no free loopback port below 55536 with its bus port free")
	return 0
}

// Sentinels is a master with one replica and a sentinel watching them,
// each a redis-server on 127.0.0.1.
type Sentinels struct {
	t        testing.TB
	Name     string  // the master's name the sentinel knows
	Master   *Server // the master now
	Replica  *Server
	Sentinel *Server
	// Failovers counts the failovers seen: those Failover asked for, and
	// any the sentinel made on its own before one.
	Failovers int
}

// StartSentinels starts a master, a replica of it, and a sentinel that
// watches them as "gwmaster", and waits until the replica is in sync.
// It skips the test when redis-server is not installed.
func StartSentinels(t testing.TB) *Sentinels {
	t.Helper()
	st := &Sentinels{t: t, Name: "gwmaster"}
	// A full sync at once, not after the default 5 seconds' wait for
	// more replicas.
	st.Master = Start(t, "--repl-diskless-sync-delay", "0")
	st.Replica = Start(t, "--repl-diskless-sync-delay", "0", "--replicaof", "127.0.0.1", strconv.Itoa(st.Master.port))
	st.waitRole(st.Replica, "slave", "master_link_status:up")
	st.Sentinel = newServer(t, freePort(t))
	conf := filepath.Join(st.Sentinel.dir, "sentinel.conf")
	cfg := fmt.Sprintf("sentinel monitor %[1]s 127.0.0.1 %[2]d 1\n"+
		"sentinel down-after-milliseconds %[1]s 2000\n"+
		"sentinel failover-timeout %[1]s 10000\n", st.Name, st.Master.port)
	if err := os.WriteFile(conf, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	st.Sentinel.pre = []string{conf, "--sentinel"}
	st.Sentinel.start()
	// Redis 7's sentinel asks its servers' INFO every 10 seconds, and
	// knows a replica it may promote only from there: every 100ms here.
	// An older sentinel refuses: its failover then takes longer.
	_, _ = st.Sentinel.Do("SENTINEL", "DEBUG", "info-period", "100", "ping-period", "100", "publish-period", "200")
	return st
}

// URL is the redis+sentinel:// address of the master, database 0.
func (st *Sentinels) URL() string {
	return "redis+sentinel://" + st.Sentinel.Addr() + "/" + st.Name
}

// Failover has the sentinel fail the master over to the replica (SENTINEL
// FAILOVER), and waits until the sentinel names the replica, which is
// then a master, and the old master its replica, in sync: Master and
// Replica are then swapped. On a loaded machine the sentinel may have
// failed over on its own before (a master slow to answer its pings for
// down-after-milliseconds): Master and Replica are first set to what it
// names, and Failovers counts both.
func (st *Sentinels) Failover() {
	st.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	named := func() string {
		out, err := st.Sentinel.Do("SENTINEL", "GET-MASTER-ADDR-BY-NAME", st.Name)
		if err != nil {
			return ""
		}
		return strings.ReplaceAll(out, "\n", ":")
	}
	if named() == st.Replica.Addr() {
		st.Master, st.Replica = st.Replica, st.Master
		st.Failovers++
		st.waitRole(st.Replica, "slave", "master_link_status:up")
	}
	for {
		// Refused (NOGOODSLAVE) until the sentinel has seen the replica.
		_, err := st.Sentinel.Do("SENTINEL", "FAILOVER", st.Name)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			st.t.Fatalf("SENTINEL FAILOVER: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	asked := time.Now()
	for named() != st.Replica.Addr() {
		if time.Now().After(deadline) {
			st.t.Fatalf("the sentinel does not name %s as the master within 60s: %q", st.Replica.Addr(), named())
		}
		if time.Since(asked) > 5*time.Second {
			// A failover that a loaded machine let time out: ask again.
			_, _ = st.Sentinel.Do("SENTINEL", "FAILOVER", st.Name)
			asked = time.Now()
		}
		time.Sleep(20 * time.Millisecond)
	}
	st.Master, st.Replica = st.Replica, st.Master
	st.Failovers++
	st.waitRole(st.Master, "master", "")
	st.waitRole(st.Replica, "slave", "master_link_status:up")
}

// waitRole waits until s has the role, and says want in its INFO.
func (st *Sentinels) waitRole(s *Server, role, want string) {
	st.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		info, err := s.Do("INFO", "replication")
		if err == nil && strings.Contains(info, "role:"+role) && strings.Contains(info, want) &&
			(role != "slave" || strings.Contains(info, fmt.Sprintf("master_port:%d", st.Master.port))) {
			return
		}
		if time.Now().After(deadline) {
			st.t.Fatalf("%s is not a %s (%s) within 30s: %v\n%s", s.Addr(), role, want, err, info)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// MoveSlot moves the slot that holds key, and its keys, from the node
// that serves it to the node to, as redis-cli --cluster reshard does:
// IMPORTING and MIGRATING, MIGRATE of its keys, then every node told the
// slot is to's. It returns the slot.
func (c *Cluster) MoveSlot(key string, to *Server) int {
	c.t.Helper()
	do := func(s *Server, args ...string) string {
		c.t.Helper()
		out, err := s.Do(args...)
		if err != nil {
			c.t.Fatalf("%s on %s: %v", strings.Join(args, " "), s.Addr(), err)
		}
		return out
	}
	slotText := do(to, "CLUSTER", "KEYSLOT", key)
	var from *Server
	for _, s := range c.Nodes {
		if s.Running() && s != to {
			if n := do(s, "CLUSTER", "COUNTKEYSINSLOT", slotText); n != "0" {
				from = s
			}
		}
	}
	if from == nil {
		c.t.Fatalf("no other node holds keys in slot %s", slotText)
	}
	fromID, toID := do(from, "CLUSTER", "MYID"), do(to, "CLUSTER", "MYID")
	do(to, "CLUSTER", "SETSLOT", slotText, "IMPORTING", fromID)
	do(from, "CLUSTER", "SETSLOT", slotText, "MIGRATING", toID)
	for {
		keys := do(from, "CLUSTER", "GETKEYSINSLOT", slotText, "1000")
		if keys == "" {
			break
		}
		do(from, append([]string{"MIGRATE", "127.0.0.1", strconv.Itoa(to.port), "", "0", "5000", "KEYS"}, strings.Split(keys, "\n")...)...)
	}
	for _, s := range c.Nodes {
		if s.Running() {
			do(s, "CLUSTER", "SETSLOT", slotText, "NODE", toID)
		}
	}
	slot, _ := strconv.Atoi(slotText)
	return slot
}
