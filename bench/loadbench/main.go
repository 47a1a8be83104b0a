// Command loadbench measures what the gateway costs. In one process and on
// loopback only, it starts the reference backend, then drives it directly,
// through a plain Caddy reverse_proxy and through the gateway (Caddy with
// helpdesk_gateway in front of reverse_proxy), with the same concurrent
// clients for a bounded time each, the targets taking turns, and prints
// the figures side by side with the gateway's ratios to the plain proxy.
// It stops by itself; docs/performance.md holds its figures.
//
//	go run ./bench/loadbench -duration 6s -rounds 6
//
// With -processes the backend (helpdesk_legacy), the plain proxy and the
// gateway each run as a Caddy process of their own, built from cmd/caddy
// into a temp dir, on loopback ports, and this process is only the
// clients; the figures are then each process's own CPU (from /proc) and
// allocations (from its admin endpoint's /debug/vars):
//
//	go run ./bench/loadbench -processes -clients 8 -targets proxy,gateway -duration 10s -rounds 10
//
// and -pprof DIR adds a CPU profile of the proxy and the gateway process
// for each of their slices (go tool pprof merges the files it is given).
// -baseline BIN with the target baseline runs a fourth process, a Caddy
// built at another commit, walked as the gateway is: a before and an
// after in one interleaved run. The target window walks the plain proxy
// by the backend windows the gateway asks for, which splits what the
// gateway adds into its own work and the over-fetch of the consistency
// guarantee; -read-buffer gives both proxies' transport one read buffer.
// The process mode also counts each process's read and write syscalls.
//
// The clients walk one list from its first page to its last, again and
// again: by _cursor on the gateway, by _page (sorted by id, ascending) on
// the backend and the proxy, so every target serves the same pages. Each
// client is a caller of its own (an API key each) unless -shared-key
// makes them one caller's walkers; -random makes every page a jump to a
// random place (the gateway asked by a cursor the client builds), and the
// target gateway-ttl0, the gateway with readahead_ttl 0, is what such a
// caller should cost at most. Issue 29's figures, 8 walkers of one caller:
//
//	go run ./bench/loadbench -processes -clients 8 -shared-key -targets proxy,gateway,gateway-ttl0 -duration 10s -rounds 5
//	go run ./bench/loadbench -processes -clients 8 -shared-key -random -targets proxy,gateway,gateway-ttl0 -duration 10s -rounds 5
//
// The rr-* targets (process mode) are three gateway processes behind a
// fourth Caddy balancing round robin: rr-store with read-ahead shared
// through one redis-server the bench starts (skipped, saying so, where
// redis-server is not installed), rr-local with each instance's own,
// rr-ttl0 with read-ahead off; rr-proxy is three plain proxies behind
// the same balancer, what the topology costs a proxy. Issue 33's figures:
//
//	go run ./bench/loadbench -processes -clients 1,8 -targets proxy,rr-proxy,gateway,rr-store,rr-local,rr-ttl0 -read-buffer 64KiB -duration 10s -rounds 5
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
)

func main() {
	cfg := defaultConfig()
	var clients, perPages, targets, cpuProfile string
	flag.BoolVar(&cfg.Processes, "processes", false, "run the backend, the proxy and the gateway as separate Caddy processes, built from cmd/caddy, and report each one's CPU and allocations")
	flag.StringVar(&cfg.Baseline, "baseline", "", "with -processes and the target baseline: a Caddy binary whose gateway is the before of a change (go build -o old-caddy ./cmd/caddy at that commit)")
	flag.StringVar(&cfg.ProfileDir, "pprof", "", "with -processes: write a CPU profile of the proxy and the gateway process for each of their slices into this directory (slices are profiled for whole seconds)")
	flag.DurationVar(&cfg.Duration, "duration", cfg.Duration, "measured time of each target, per clients and page size")
	flag.IntVar(&cfg.Rounds, "rounds", cfg.Rounds, "slices the duration is cut into, the targets taking turns")
	flag.DurationVar(&cfg.Warmup, "warmup", cfg.Warmup, "unmeasured load before each slice")
	flag.StringVar(&clients, "clients", "1,8", "concurrent clients, a comma-separated list: one set of phases each")
	flag.StringVar(&perPages, "perpage", "10,100", "page sizes, a comma-separated list: one set of phases each")
	flag.StringVar(&targets, "targets", "backend,proxy,gateway", "targets to drive, in this order: backend, proxy, gateway, baseline (see -baseline), gateway-ttl0 (the gateway with readahead_ttl 0), window (the proxy asked for the gateway's backend windows); with -processes, rr-store, rr-local, rr-ttl0 (three gateways behind a round-robin balancer: read-ahead shared through a redis-server, each its own, off), rr-proxy (three plain proxies behind it)")
	flag.BoolVar(&cfg.SharedKey, "shared-key", false, "every client sends the same API key: one caller's concurrent walkers, each starting at its own part of the list (default: a key per client, each from the first page)")
	flag.BoolVar(&cfg.Random, "random", false, "clients ask for pages at random places (the gateway by cursors they build), never continuing a walk")
	flag.StringVar(&cfg.ReadBuffer, "read-buffer", "", "read_buffer of both proxies' reverse_proxy transport, a Caddy size such as 64KiB (default: Caddy's, 4 KiB)")
	flag.StringVar(&cfg.StoreTimeout, "store-timeout", "", "readahead_store_timeout of rr-store's gateways, a Caddy duration such as 200ms (default: the gateway's)")
	flag.IntVar(&cfg.Records, "records", cfg.Records, "records in the walked list")
	flag.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file (clients and backend run in the same process, so with -targets gateway it holds them too)")
	flag.Parse()

	var err error
	if cfg.Clients, err = intList(clients); err == nil {
		cfg.PerPages, err = intList(perPages)
	}
	if err == nil {
		cfg.Targets, err = targetList(targets)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadbench:", err)
		os.Exit(2)
	}
	if cfg.ProfileDir != "" && !cfg.Processes {
		fmt.Fprintln(os.Stderr, "loadbench: -pprof needs -processes; in process, use -cpuprofile")
		os.Exit(2)
	}
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "loadbench:", err)
			os.Exit(1)
		}
		defer f.Close()
		cfg.Profile = f
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := Run(ctx, cfg, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadbench:", err)
		os.Exit(1)
	}
	rep.Write(os.Stdout)
}

func intList(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q: want whole numbers of at least 1, separated by commas", s)
		}
		out = append(out, n)
	}
	return out, nil
}

func targetList(s string) ([]Target, error) {
	var out []Target
	for _, f := range strings.Split(s, ",") {
		t, ok := parseTarget(strings.TrimSpace(f))
		if !ok {
			return nil, fmt.Errorf("target %q: want backend, proxy, gateway, baseline, gateway-ttl0, window, rr-store, rr-local, rr-ttl0 or rr-proxy", f)
		}
		out = append(out, t)
	}
	return out, nil
}
