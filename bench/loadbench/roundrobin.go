package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/helpdesk-gateway/gateway/redisstore/redistest"
)

// Issue 33's setup, process by process: three gateway processes behind a
// fourth Caddy whose reverse_proxy spreads the clients' pages over them
// round robin, so that no two pages of a walk in a row reach the same
// instance, and, for the target rr-store, one redis-server the three
// share read-ahead's walks and windows through. The gateways' CPU, summed,
// and the store's are what the gateway costs; the balancer's is what any
// deployment of several instances pays, and is reported apart.

// balancedInstances is the gateway (or, for rr-proxy, plain proxy)
// processes behind the balancer.
const balancedInstances = 3

// group is a balanced target's processes.
type group struct {
	front    *caddyProc   // the balancer the clients reach
	gateways []*caddyProc // behind it
	store    *redisProc   // RoundRobin only
}

// groupSample is what a group's processes have used so far.
type groupSample struct {
	procSample                  // the gateways', summed, and the store's CPU
	store, front  time.Duration // of that CPU the store's; the balancer's
	storeCommands uint64        // commands the store has processed
}

// startGroup starts target's gateways (with a redis-server for
// RoundRobin) in front of backend, then the balancer in front of them.
func startGroup(ctx context.Context, target Target, bin, dir, backend, ready string, cfg Config) (_ *group, err error) {
	g := &group{}
	defer func() {
		if err != nil {
			g.stop()
		}
	}()
	site := caddyfile(target, cfg.ReadBuffer)
	if target == RoundRobin {
		if cfg.StoreTimeout != "" {
			site = strings.Replace(site, "readahead_store_key {store_key}\n", "readahead_store_key {store_key}\n\t\treadahead_store_timeout "+cfg.StoreTimeout+"\n", 1)
		}
		if g.store, err = startRedis(ctx, dir); err != nil {
			return nil, err
		}
		key := make([]byte, 24)
		_, _ = rand.Read(key)
		site = strings.NewReplacer("{store}", "redis://"+g.store.addr+"/0", "{store_key}", hex.EncodeToString(key)).Replace(site)
	}
	upstreams := make([]string, balancedInstances)
	for i := range balancedInstances {
		p, err := startCaddy(ctx, bin, dir, fmt.Sprintf("%s-gw%d", target, i+1), site, backend, ready)
		if err != nil {
			return nil, err
		}
		g.gateways = append(g.gateways, p)
		upstreams[i] = strings.TrimPrefix(p.url, "http://")
	}
	front := fmt.Sprintf("http://:0 {\n\treverse_proxy %s {\n\t\tlb_policy round_robin\n\t}\n}\n", strings.Join(upstreams, " "))
	if g.front, err = startCaddy(ctx, bin, dir, target.String()+"-balancer", front, "", ready); err != nil {
		return nil, err
	}
	return g, nil
}

func (g *group) stop() {
	for _, p := range append([]*caddyProc{g.front}, g.gateways...) {
		if p != nil {
			p.stop()
		}
	}
	if g.store != nil {
		g.store.stop()
	}
}

// sample sums the gateways' samples and adds the store's CPU to theirs:
// its round trips are the gateway's cost. The balancer's CPU is apart.
func (g *group) sample(ctx context.Context, client *http.Client, gateways bool) (groupSample, error) {
	var s groupSample
	for _, p := range g.gateways {
		ps, err := p.sample(ctx, client, gateways)
		if err != nil {
			return s, err
		}
		s.cpu += ps.cpu
		s.alloc += ps.alloc
		s.mallocs += ps.mallocs
		s.reads += ps.reads
		s.writes += ps.writes
		s.calls += ps.calls
		s.fetched += ps.fetched
		s.storeErrors += ps.storeErrors
	}
	if g.store != nil {
		var err error
		if s.storeCommands, err = g.store.commands(); err != nil {
			return s, err
		}
		if s.store, err = procCPU(g.store.cmd.Process.Pid); err != nil {
			return s, err
		}
		s.cpu += s.store
	}
	var err error
	s.front, err = procCPU(g.front.cmd.Process.Pid)
	return s, err
}

// redisProc is a redis-server on a loopback port: nothing persisted,
// killed with this process (Pdeathsig) if not stopped before.
type redisProc struct {
	addr string
	cmd  *exec.Cmd
	done chan struct{}
}

// redisServer finds redis-server as redisstore/redistest does: the
// HELPDESK_REDIS_SERVER variable, else the PATH.
func redisServer() (string, error) {
	bin := os.Getenv("HELPDESK_REDIS_SERVER")
	if bin == "" {
		bin = "redis-server"
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return "", errors.New(bin + " is not installed (apt-get install redis-server, or set HELPDESK_REDIS_SERVER)")
	}
	return path, nil
}

// startRedis starts redis-server with its files in dir and waits until
// it answers PING.
func startRedis(ctx context.Context, dir string) (*redisProc, error) {
	bin, err := redisServer()
	if err != nil {
		return nil, err
	}
	addr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(addr)
	r := &redisProc{addr: addr, done: make(chan struct{})}
	logFile, err := os.Create(filepath.Join(dir, "redis.log"))
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	r.cmd = exec.Command(bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--daemonize", "no", "--loglevel", "warning", "--dir", dir)
	r.cmd.Stdout, r.cmd.Stderr = logFile, logFile
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := r.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting redis-server: %v", err)
	}
	go func() { _ = r.cmd.Wait(); close(r.done) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if out, err := r.do("PING"); err == nil && out == "PONG" {
			return r, nil
		}
		select {
		case <-r.done:
			b, _ := os.ReadFile(logFile.Name())
			return nil, fmt.Errorf("redis-server exited before it answered: %.2000s", b)
		case <-ctx.Done():
			r.stop()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			r.stop()
			return nil, fmt.Errorf("redis-server did not answer PING on %s within 10s", addr)
		}
	}
}

func (r *redisProc) stop() {
	_ = r.cmd.Process.Kill()
	<-r.done
}

// commands reads total_commands_processed from INFO stats: the store
// round trips, for the report.
func (r *redisProc) commands() (uint64, error) {
	out, err := r.do("INFO", "stats")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(out) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "total_commands_processed:"); ok {
			return strconv.ParseUint(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("redis INFO stats: no total_commands_processed")
}

// do sends one command to the store (redistest.Command).
func (r *redisProc) do(args ...string) (string, error) { return redistest.Command(r.addr, args...) }
