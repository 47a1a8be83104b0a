package main

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// cluster is the stage of the process mode: the backend, the plain proxy
// and the gateway, each a Caddy process of its own on loopback, and the
// balanced targets' groups of processes (roundrobin.go), started once
// for the whole run and always stopped by close.
type cluster struct {
	cfg    Config
	dir    string // temp dir: the binary, Caddyfiles, logs
	procs  map[Target]*caddyProc
	groups map[Target]*group
	admin  *http.Client // for the admin endpoints
	ids    []string     // the list's, for the cursors clients build
}

// startProcesses builds cmd/caddy and starts the three processes.
func startProcesses(ctx context.Context, cfg Config) (_ *cluster, err error) {
	dir, err := os.MkdirTemp("", "loadbench-")
	if err != nil {
		return nil, err
	}
	c := &cluster{cfg: cfg, dir: dir, procs: map[Target]*caddyProc{}, groups: map[Target]*group{},
		admin: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil}}}
	defer func() {
		if err != nil {
			c.close()
		}
	}()
	bin, err := buildCaddy(ctx, dir)
	if err != nil {
		return nil, err
	}
	ready := "/" + cfg.List + "?_perPage=1"
	be, err := startCaddy(ctx, bin, dir, "backend", fmt.Sprintf(backendSite, cfg.Seed, cfg.Records), "", ready)
	if err != nil {
		return nil, err
	}
	c.procs[Backend] = be
	if cfg.Random || cfg.SharedKey {
		if c.ids, err = listIDs(ctx, c.admin, be.url+"/"+cfg.List, cfg.Records); err != nil {
			return nil, err
		}
	}
	for _, t := range []Target{Proxy, Gateway, Baseline, NoReadahead} {
		b := bin
		if (t == Baseline || t == NoReadahead) && !slices.Contains(cfg.Targets, t) {
			continue
		}
		if t == Baseline {
			b = cfg.Baseline
		}
		p, err := startCaddy(ctx, b, dir, t.String(), caddyfile(t, cfg.ReadBuffer), be.url, ready)
		if err != nil {
			return nil, err
		}
		c.procs[t] = p
	}
	for _, t := range cfg.Targets {
		if t.balanced() && c.groups[t] == nil {
			g, err := startGroup(ctx, t, bin, dir, be.url, ready, cfg)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", t, err)
			}
			c.groups[t] = g
		}
	}
	return c, nil
}

// close stops every process that was started and removes the temp dir.
func (c *cluster) close() {
	for _, p := range c.procs {
		p.stop()
	}
	for _, g := range c.groups {
		g.stop()
	}
	c.admin.CloseIdleConnections()
	_ = os.RemoveAll(c.dir)
}

func (c *cluster) phase(ctx context.Context, target Target, clients, perPage, round int, d time.Duration) (Result, []time.Duration, error) {
	cfg := c.cfg
	be, sample := c.procs[Backend], c.sampler(target)
	var (
		base     string       // where the clients go
		profiled []*caddyProc // what -pprof profiles
	)
	if g := c.groups[target]; g != nil {
		base, profiled = g.front.url, g.gateways
	} else {
		p := c.procs[target.served()]
		base, profiled = p.url, []*caddyProc{p}
	}
	dr := newDriver(cfg, base, target, clients, perPage, c.ids)
	defer dr.client.CloseIdleConnections()
	if cfg.Warmup > 0 {
		dr.run(ctx, clients, cfg.Warmup)
	}

	profiles := make(chan error, len(profiled))
	if cfg.ProfileDir != "" && target != Backend {
		// The profile runs for whole seconds from here; the slice is
		// measured inside it. A group's gateways each get a file.
		seconds := int(math.Ceil(d.Seconds()))
		for i, p := range profiled {
			name := target.String()
			if len(profiled) > 1 {
				name += "-gw" + strconv.Itoa(i+1)
			}
			file := filepath.Join(cfg.ProfileDir, fmt.Sprintf("%s-c%d-pp%d-r%d.pprof", name, clients, perPage, round))
			go func() { profiles <- p.profile(ctx, seconds, file) }()
		}
	} else {
		profiled = nil
	}

	s0, err := sample(ctx)
	if err != nil {
		return Result{}, nil, err
	}
	be0, err := procCPU(be.cmd.Process.Pid)
	if err != nil {
		return Result{}, nil, err
	}
	self0, err := cpuTime()
	if err != nil {
		return Result{}, nil, err
	}
	start := time.Now()

	load := dr.run(ctx, clients, d)

	elapsed := time.Since(start)
	self1, err := cpuTime()
	if err != nil {
		return Result{}, nil, err
	}
	be1, err := procCPU(be.cmd.Process.Pid)
	if err != nil {
		return Result{}, nil, err
	}
	s1, err := sample(ctx)
	if err != nil {
		return Result{}, nil, err
	}
	for range profiled {
		if err := <-profiles; err != nil {
			return Result{}, nil, fmt.Errorf("profiling %s: %w", target, err)
		}
	}

	r := load.result(target, clients, perPage, elapsed)
	r.CPU = s1.cpu - s0.cpu
	r.Alloc = s1.alloc - s0.alloc
	r.Mallocs = s1.mallocs - s0.mallocs
	r.Reads, r.Writes = s1.reads-s0.reads, s1.writes-s0.writes
	r.StoreCPU, r.BalancerCPU = s1.store-s0.store, s1.front-s0.front
	r.StoreCommands = s1.storeCommands - s0.storeCommands
	r.StoreErrors = s1.storeErrors - s0.storeErrors
	r.BackendCPU = be1 - be0
	if target == Backend {
		r.BackendCPU = r.CPU
	}
	r.ClientCPU = self1 - self0
	if target.walksByCursor() {
		r.Calls = int64(s1.calls - s0.calls)
		r.Fetched = s1.fetched - s0.fetched
	}
	if load.firstError != nil {
		return r, nil, fmt.Errorf("%d failed requests, the first: %w", load.errors, load.firstError)
	}
	return r, load.latencies, nil
}

// sampler returns how to sample what target's processes have used: the
// one process's, or a group's (group.sample).
func (c *cluster) sampler(target Target) func(context.Context) (groupSample, error) {
	if g := c.groups[target]; g != nil {
		return func(ctx context.Context) (groupSample, error) { return g.sample(ctx, c.admin, target.walksByCursor()) }
	}
	p := c.procs[target.served()]
	return func(ctx context.Context) (groupSample, error) {
		s, err := p.sample(ctx, c.admin, target.walksByCursor())
		return groupSample{procSample: s}, err
	}
}

// processNote says what the figures of the process mode are.
func processNote(c Config) string {
	return "Each target is its own Caddy process (cmd/caddy, built for the run), the backend a third (helpdesk_legacy, seed " +
		strconv.FormatUint(c.Seed, 10) + "); this process is only the clients.\n" +
		"CPU/req is the target process's user+system time (/proc/<pid>/stat) per request; alloc/req and mallocs/req its runtime.MemStats " +
		"TotalAlloc and Mallocs (admin /debug/vars); reads and writes/req its read and write syscalls (/proc/<pid>/io syscr, syscw); backend CPU/req the backend process's, client CPU/req this process's, over the same slices.\n" +
		"A baseline is the gateway built from other sources (-baseline), walked as the gateway is. Backend calls are the gateway's own count (helpdesk_gateway_backend_subrequests at its admin /metrics), records fetched its admin /helpdesk/endpoints' records_fetched.\n" +
		"An rr-* target is " + strconv.Itoa(balancedInstances) + " gateway processes behind a fourth Caddy (reverse_proxy, lb_policy round_robin); its CPU/req is the gateways' summed plus, for rr-store, the redis-server they share (readahead_store); the balancer's CPU is apart.\n\n"
}
