package redisstore

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Which server answers, on a cluster and through sentinels.
//
// Every key of one list identity carries its hash tag (keys.go), so a
// cluster keeps them in one slot, and every script and pipeline of a
// call names keys of one list only: a call is answered by one server,
// the master of the list's slot (or the one server, or the master the
// sentinels name). What the walk rule needs of a store is then asked of
// that server alone:
//
//   - Times: the scripts take TIME themselves, so a list's times are all
//     read off the clock of the server that holds it. A Cut's time (At,
//     which the engine hands back to Walked as the time of the page's
//     answers) is tagged with the server's run (its nanoseconds, below a
//     microsecond, count the runs this store has met: runEpoch), and
//     Walked takes a time tagged with another run as none (the server's
//     own now, later than the page's calls, and no window kept), so that
//     a slot that moved, or a failover, between a page's Cut and its
//     Walked never compares one server's time with another's.
//   - run_id: every call is sent to the list's server itself (the
//     cluster client's node for the slot, never redirected: MOVED and
//     ASK are errors that cost calls and reload the slot map), with that
//     server's run_id, which each new connection reads (onConnect). So
//     the run_id an entry is checked against is the run of the server
//     that holds it: a master restarted, a replica promoted (its own
//     run_id) or a slot migrated to another master (whose run_id the
//     moved entries do not carry) serves nothing written before. A
//     connection to one server or through sentinels that finds a
//     replica, as a demoted master is, is refused: a replica holds the
//     new master's data, older than what the old master served (on a
//     cluster a replica answers MOVED). Epochs are this store's own: an
//     At is only ever handed back to the store that stamped it, and after
//     maxEpoch runs a stale tag could match again, which would take one
//     page's time as this run's: out of reach of any real failover rate.
//   - Not per list: there is nothing else. The done lists and claims of
//     reads ahead (ahead.go) are keys of the list; a chain entry lost to
//     a failed write is deleted by a pipeline of one-key DELs, which the
//     cluster client splits by slot; INFO and CONFIG GET are asked of
//     each server on each new connection, and the admin endpoint shows
//     the last one's.
//
// After a sentinel failover, go-redis learns the new master from the
// sentinels and closes its connections to the old one; the next call
// connects to the new master, reads its run_id, and the instances share
// again without a restart. Nothing written under the old master serves.

// node is one server the store sends calls to, and the run it has.
type node struct {
	client *redis.Client
	run    atomic.Pointer[run]
}

// run is a server's run_id and the epoch this store numbered it with.
type run struct {
	id    string
	epoch int // 1 to maxEpoch
}

// maxEpoch bounds the epochs, which tag a time's nanoseconds below a
// microsecond (runEpoch): after that many runs they are numbered again.
const maxEpoch = 999

var noRun = &run{}

// open makes the store's client for its address.
func (s *Store) open(a Address) error {
	tlsConfig := func() *tls.Config {
		if !a.TLS {
			return nil
		}
		return &tls.Config{MinVersion: tls.VersionTLS12} // the server name is the host dialed
	}
	switch a.Kind {
	case Cluster:
		opt := &redis.ClusterOptions{
			Addrs: a.Hosts, Username: a.Username, Password: a.Password, TLSConfig: tlsConfig(),
			MaxRedirects: -1, // a call goes to the slot's master alone (see above)
			DialTimeout:  s.cfg.Timeout, DialerRetries: 1, ReadTimeout: s.cfg.Timeout, WriteTimeout: s.cfg.Timeout,
			ContextTimeoutEnabled: true, MaxRetries: -1, PoolTimeout: s.cfg.Timeout, Protocol: 2, DisableIdentity: true,
		}
		opt.NewClient = func(o *redis.Options) *redis.Client {
			n := &node{}
			n.run.Store(noRun)
			o.OnConnect = s.onConnect(n, false) // a replica answers MOVED
			n.client = redis.NewClient(o)
			s.nodes.Store(n.client, n)
			return n.client
		}
		s.cluster = redis.NewClusterClient(opt)
		s.client = s.cluster
		return nil
	case Sentinel:
		opt := &redis.FailoverOptions{
			MasterName: a.Master, SentinelAddrs: a.Hosts, Username: a.Username, Password: a.Password,
			DB: a.DB, TLSConfig: tlsConfig(),
			DialTimeout: s.cfg.Timeout, DialerRetries: 1, ReadTimeout: s.cfg.Timeout, WriteTimeout: s.cfg.Timeout,
			ContextTimeoutEnabled: true, MaxRetries: -1, PoolTimeout: s.cfg.Timeout, Protocol: 2, DisableIdentity: true,
		}
		if a.SentinelAuth {
			opt.SentinelUsername, opt.SentinelPassword = a.Username, a.Password
		}
		s.one = &node{}
		s.one.run.Store(noRun)
		opt.OnConnect = s.onConnect(s.one, true)
		s.one.client = redis.NewFailoverClient(opt)
		s.client = s.one.client
		return nil
	}
	opt, err := redis.ParseURL(s.cfg.URL)
	if err != nil {
		return err
	}
	opt.DialTimeout = s.cfg.Timeout
	opt.DialerRetries = 1 // a store that refuses a connection is down: no page waits out retries
	opt.ReadTimeout = s.cfg.Timeout
	opt.WriteTimeout = s.cfg.Timeout
	opt.ContextTimeoutEnabled = true
	opt.MaxRetries = -1 // a failed call costs a backend call, not another try
	opt.PoolTimeout = s.cfg.Timeout
	opt.Protocol = 2 // any Redis-protocol server speaks RESP2
	opt.DisableIdentity = true
	s.one = &node{}
	s.one.run.Store(noRun)
	opt.OnConnect = s.onConnect(s.one, true)
	s.one.client = redis.NewClient(opt)
	s.client = s.one.client
	return nil
}

// onConnect returns what reads a server's run_id on every new connection
// to n, so that a restarted server (every connection to the old one
// broken), or the new master after a failover, is known before the
// first command on the new connection; and its maxmemory-policy, which
// the admin endpoint shows: a policy that evicts can drop a newer chain
// entry and leave an older one. A sentinel's connections pass (go-redis
// makes them with the same hook); a replica's are refused where a
// replica would answer the scripts (not on a cluster, where it answers
// MOVED).
func (s *Store) onConnect(n *node, masterOnly bool) func(ctx context.Context, cn *redis.Conn) error {
	return func(ctx context.Context, cn *redis.Conn) error {
		info, err := cn.Info(ctx).Result()
		if err != nil {
			return err
		}
		if infoField(info, "redis_mode") == "sentinel" {
			return nil
		}
		if role := infoField(info, "role"); masterOnly && role != "" && role != "master" {
			return fmt.Errorf("the store at %s is a %s, not a master", n.addr(), role)
		}
		id := infoField(info, "run_id")
		if id == "" {
			return errors.New("the store's INFO has no run_id")
		}
		if old := n.run.Load(); old.id != id {
			e := int(s.epochs.Add(1)-1)%maxEpoch + 1
			n.run.Store(&run{id: id, epoch: e})
		}
		s.lastRun.Store(&id)
		if kv, err := cn.ConfigGet(ctx, "maxmemory-policy").Result(); err == nil {
			p := kv["maxmemory-policy"]
			s.policy.Store(&p)
		}
		return nil
	}
}

func (n *node) addr() string {
	if n.client == nil {
		return "?"
	}
	return n.client.Options().Addr
}

// infoField returns the value of one field of an INFO answer.
func infoField(info, name string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			return v
		}
	}
	return ""
}

// nodeFor returns the server that holds the keys under base (a list's
// hash-tagged prefix) and its run, connecting first when it has none
// yet: every entry carries the run.
func (s *Store) nodeFor(ctx context.Context, base string) (*node, *run, error) {
	n := s.one
	if s.cluster != nil {
		c, err := s.cluster.MasterForKey(ctx, base)
		if err != nil {
			return nil, nil, err
		}
		v, ok := s.nodes.Load(c)
		if !ok {
			return nil, nil, errors.New("the cluster client named a node it did not make")
		}
		n = v.(*node)
	}
	if r := n.run.Load(); r.id != "" {
		return n, r, nil
	}
	if err := n.client.Ping(ctx).Err(); err != nil {
		return nil, nil, err
	}
	r := n.run.Load()
	if r.id == "" {
		return nil, nil, errors.New("the store did not say its run_id")
	}
	return n, r, nil
}

// stamp is a time read off a server's clock, in microseconds, tagged
// with the server's run (see above).
func stamp(micros int64, r *run) time.Time {
	return time.UnixMicro(micros).Add(time.Duration(r.epoch))
}

// runEpoch is the epoch a stamp's time carries; 0 for a time no server
// gave.
func runEpoch(t time.Time) int { return t.Nanosecond() % 1000 }
