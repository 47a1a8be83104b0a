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
// and the gateway, each a Caddy process of its own on loopback, started
// once for the whole run and always stopped by close.
type cluster struct {
	cfg   Config
	dir   string // temp dir: the binary, Caddyfiles, logs
	procs map[Target]*caddyProc
	admin *http.Client // for the admin endpoints
	ids   []string     // the list's, for the cursors clients build
}

// startProcesses builds cmd/caddy and starts the three processes.
func startProcesses(ctx context.Context, cfg Config) (_ *cluster, err error) {
	dir, err := os.MkdirTemp("", "loadbench-")
	if err != nil {
		return nil, err
	}
	c := &cluster{cfg: cfg, dir: dir, procs: map[Target]*caddyProc{},
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
	return c, nil
}

// close stops every process that was started and removes the temp dir.
func (c *cluster) close() {
	for _, p := range c.procs {
		p.stop()
	}
	c.admin.CloseIdleConnections()
	_ = os.RemoveAll(c.dir)
}

func (c *cluster) phase(ctx context.Context, target Target, clients, perPage, round int, d time.Duration) (Result, []time.Duration, error) {
	cfg := c.cfg
	p, be := c.procs[target.served()], c.procs[Backend]
	dr := newDriver(cfg, p.url, target, clients, perPage, c.ids)
	defer dr.client.CloseIdleConnections()
	if cfg.Warmup > 0 {
		dr.run(ctx, clients, cfg.Warmup)
	}

	profiled := make(chan error, 1)
	if cfg.ProfileDir != "" && target != Backend {
		// The profile runs for whole seconds from here; the slice is
		// measured inside it.
		seconds := int(math.Ceil(d.Seconds()))
		file := filepath.Join(cfg.ProfileDir, fmt.Sprintf("%s-c%d-pp%d-r%d.pprof", target, clients, perPage, round))
		go func() { profiled <- p.profile(ctx, seconds, file) }()
	} else {
		profiled <- nil
	}

	s0, err := p.sample(ctx, c.admin, target.walksByCursor())
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
	s1, err := p.sample(ctx, c.admin, target.walksByCursor())
	if err != nil {
		return Result{}, nil, err
	}
	if err := <-profiled; err != nil {
		return Result{}, nil, fmt.Errorf("profiling %s: %w", target, err)
	}

	r := load.result(target, clients, perPage, elapsed)
	r.CPU = s1.cpu - s0.cpu
	r.Alloc = s1.alloc - s0.alloc
	r.Mallocs = s1.mallocs - s0.mallocs
	r.Reads, r.Writes = s1.reads-s0.reads, s1.writes-s0.writes
	r.BackendCPU = be1 - be0
	if target == Backend {
		r.BackendCPU = r.CPU
	}
	r.ClientCPU = self1 - self0
	if target.walksByCursor() {
		r.Calls = int64(s1.calls - s0.calls)
	}
	if load.firstError != nil {
		return r, nil, fmt.Errorf("%d failed requests, the first: %w", load.errors, load.firstError)
	}
	return r, load.latencies, nil
}

// processNote says what the figures of the process mode are.
func processNote(c Config) string {
	return "Each target is its own Caddy process (cmd/caddy, built for the run), the backend a third (helpdesk_legacy, seed " +
		strconv.FormatUint(c.Seed, 10) + "); this process is only the clients.\n" +
		"CPU/req is the target process's user+system time (/proc/<pid>/stat) per request; alloc/req and mallocs/req its runtime.MemStats " +
		"TotalAlloc and Mallocs (admin /debug/vars); reads and writes/req its read and write syscalls (/proc/<pid>/io syscr, syscw); backend CPU/req the backend process's, client CPU/req this process's, over the same slices.\n" +
		"A baseline is the gateway built from other sources (-baseline), walked as the gateway is. Backend calls are the gateway's own count (helpdesk_gateway_backend_subrequests at its admin /metrics).\n\n"
}
