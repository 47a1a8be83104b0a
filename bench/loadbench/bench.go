package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// Config is one run of the bench.
type Config struct {
	Duration time.Duration // measured time of each target, clients and page size
	Rounds   int           // slices Duration is cut into, the targets taking turns
	Warmup   time.Duration // unmeasured load before each slice
	Clients  []int         // concurrent clients; one set of phases each
	PerPages []int         // page sizes; one set of phases each
	Targets  []Target      // what to drive, in this order
	Records  int           // records in the walked list
	List     string        // the walked list, a cursor endpoint
	Seed     uint64

	// ReadBuffer, when set, is the read_buffer of both proxies' transport
	// (a Caddy size, e.g. 64KiB); unset, Caddy's default of 4 KiB.
	ReadBuffer string

	// StoreTimeout, when set, is rr-store's readahead_store_timeout (a
	// Caddy duration); unset, the gateway's default.
	StoreTimeout string

	// Profile, when set, receives a CPU profile of the whole run (in
	// process only).
	Profile io.Writer

	// Processes runs the backend, the proxy and the gateway each as its own
	// Caddy process, built from cmd/caddy into a temp dir, and reads each
	// one's CPU and allocations apart; this process is only the clients.
	Processes bool
	// ProfileDir, in the process mode, receives a CPU profile of the proxy
	// and the gateway process for each of their slices, taken through the
	// admin endpoint: <target>-c<clients>-pp<perPage>-r<round>.pprof.
	ProfileDir string
	// Baseline, in the process mode, is a Caddy binary with the gateway
	// built from other sources (say, the commit before a change): with the
	// target baseline among Targets it runs as a fourth process, walked as
	// the gateway is, so a before and an after share one run.
	Baseline string

	// SharedKey makes every client send the same API key: one caller
	// walking a list from several places at once, as the workers of one
	// sync job do, whose walks share the gateway's state for that caller.
	// Client i of n starts its first walk i/n of the way into the list (by
	// a cursor it builds), as a parallel export splits it. By default each
	// client is a caller of its own and starts at the first page.
	SharedKey bool
	// Random makes each client ask for pages at random places instead of
	// walking the list in order: the gateway by a cursor the client builds
	// from the id before the page (spec 4.1 rule 4), so that no page
	// continues the one before; the proxies by the same page's _page.
	Random bool
}

func defaultConfig() Config {
	return Config{
		Duration: 5 * time.Second,
		Rounds:   5,
		Warmup:   300 * time.Millisecond,
		Clients:  []int{1, 8},
		PerPages: []int{10, 100},
		Targets:  []Target{Backend, Proxy, Gateway},
		Records:  20000,
		List:     "calls",
		Seed:     1,
	}
}

// Target is what the clients drive.
type Target int

const (
	// Backend is the reference backend reached directly.
	Backend Target = iota
	// Proxy is the backend behind a plain Caddy reverse_proxy.
	Proxy
	// Gateway is the backend behind helpdesk_gateway and reverse_proxy.
	Gateway
	// Baseline is Gateway as built from another binary (Config.Baseline,
	// process mode only): a before beside the after, in one run.
	Baseline
	// NoReadahead is Gateway with readahead_ttl 0: what a caller costs
	// whose pages read-ahead cannot serve, to hold read-ahead's cost to.
	NoReadahead
	// Window is the plain proxy asked, for each page, for the backend
	// window the gateway asks for that page of a sequential walk: the
	// cursor's record, the page and one record more, as one page of the
	// backend's (translate.PlanWindow). It reads what the gateway reads,
	// so the gateway against it is the gateway's own work, and it against
	// the proxy is what the consistency guarantee's over-fetch costs.
	Window
	// RoundRobin is three gateway processes behind a fourth Caddy running
	// reverse_proxy with lb_policy round_robin (process mode only),
	// sharing read-ahead's walks and windows through one redis-server
	// (readahead_store) that the bench starts: issue 33's setup.
	RoundRobin
	// RoundRobinLocal is RoundRobin without the store: each instance's
	// read-ahead its own (shared-nothing), what round robin costs today.
	RoundRobinLocal
	// RoundRobinOff is RoundRobin with readahead_ttl 0 and no store: the
	// latency read-ahead behind round robin is held to.
	RoundRobinOff
	// RoundRobinProxy is three plain proxies behind the same balancer,
	// walked by _page: what the topology itself costs a proxy's CPU on
	// this machine, beside the lone proxy, the reference of every ratio.
	RoundRobinProxy
)

var targetNames = [...]string{Backend: "backend", Proxy: "proxy", Gateway: "gateway", Baseline: "baseline",
	NoReadahead: "gateway-ttl0", Window: "window", RoundRobin: "rr-store", RoundRobinLocal: "rr-local",
	RoundRobinOff: "rr-ttl0", RoundRobinProxy: "rr-proxy"}

// walksByCursor reports whether the target is a gateway, walked by cursor.
func (t Target) walksByCursor() bool {
	return t == Gateway || t == Baseline || t == NoReadahead || t.balanced() && t != RoundRobinProxy
}

// balanced reports whether the target is gateways behind a balancer.
func (t Target) balanced() bool {
	return t == RoundRobin || t == RoundRobinLocal || t == RoundRobinOff || t == RoundRobinProxy
}

// control is the target whose p99 and CPU the target's read-ahead is
// held to: the same gateways with readahead_ttl 0.
func (t Target) control() (Target, bool) {
	switch t {
	case Gateway:
		return NoReadahead, true
	case RoundRobin, RoundRobinLocal:
		return RoundRobinOff, true
	}
	return 0, false
}

func (t Target) String() string { return targetNames[t] }

func parseTarget(s string) (Target, bool) {
	i := slices.Index(targetNames[:], s)
	return Target(i), i >= 0
}

// caddyfiles are the two Caddy sites. Both are the same but for the
// gateway, so that the difference between them is the gateway's cost.
var caddyfiles = map[Target]string{
	Proxy:       "http://:0 {\n\treverse_proxy {backend}\n}\n",
	Gateway:     "http://:0 {\n\thelpdesk_gateway\n\treverse_proxy {backend}\n}\n",
	NoReadahead: "http://:0 {\n\thelpdesk_gateway {\n\t\treadahead_ttl 0\n\t}\n\treverse_proxy {backend}\n}\n",
}

func init() {
	caddyfiles[Baseline] = caddyfiles[Gateway]
	caddyfiles[Window] = caddyfiles[Proxy]
	caddyfiles[RoundRobinLocal] = caddyfiles[Gateway]
	caddyfiles[RoundRobinOff] = caddyfiles[NoReadahead]
	caddyfiles[RoundRobinProxy] = caddyfiles[Proxy]
	caddyfiles[RoundRobin] = "http://:0 {\n\thelpdesk_gateway {\n\t\treadahead_store {store}\n\t\treadahead_store_key {store_key}\n\t}\n\treverse_proxy {backend}\n}\n"
}

// caddyfile is target's site, with the transport's read buffer set when
// readBuffer is: the same setting on both proxies, so that their
// difference stays the gateway's.
func caddyfile(target Target, readBuffer string) string {
	site := caddyfiles[target]
	if readBuffer == "" {
		return site
	}
	return strings.Replace(site, "reverse_proxy {backend}\n",
		"reverse_proxy {backend} {\n\t\ttransport http {\n\t\t\tread_buffer "+readBuffer+"\n\t\t}\n\t}\n", 1)
}

// served is the process that serves target: the window walk is the plain
// proxy's.
func (t Target) served() Target {
	if t == Window {
		return Proxy
	}
	return t
}

// Result is the outcome of one measured phase.
type Result struct {
	Target  Target
	Clients int
	PerPage int

	Elapsed  time.Duration
	Requests int64 // answered 200 in full
	Errors   int64 // failed, not 200, or a walk that ended early
	Bytes    int64 // response bodies received
	Served   int64 // records the clients received
	P50, P99 time.Duration

	// In process: the whole process's (clients, Caddy and backend).
	// Processes: the target's own process's.
	CPU     time.Duration // user+system CPU time
	Alloc   uint64        // bytes allocated
	Mallocs uint64        // heap objects allocated (processes only)

	// Processes only: the target process's read and write syscalls.
	Reads, Writes uint64

	// Processes only: the backend process's CPU while this target was
	// driven (for the backend target, its own), and the clients'.
	BackendCPU, ClientCPU time.Duration
	// Balanced targets only: of CPU, redis-server's (RoundRobin); apart
	// from CPU, the balancer process's, which is not the gateway's.
	StoreCPU, BalancerCPU time.Duration
	// RoundRobin only: the commands redis-server processed, and the store
	// calls the gateways counted as failed (a deadline missed, say).
	StoreCommands uint64
	StoreErrors   int64

	Calls   int64 // list requests that reached the backend
	Fetched int64 // records the backend sent
}

// Report is every phase of a run, in the order run.
type Report struct {
	Config  Config
	Results []Result
}

// stage is what the clients drive: the targets in this process, or as
// processes of their own.
type stage interface {
	// phase warms target up, measures it for d with clients walking pages
	// of perPage, and returns the counts and the latency of every request.
	phase(ctx context.Context, target Target, clients, perPage, round int, d time.Duration) (Result, []time.Duration, error)
	close()
}

// Run starts the backend and drives each target in turn, for every
// number of clients and page size. The targets take turns in cfg.Rounds
// slices of cfg.Duration/cfg.Rounds each, their order rotating, so that a
// machine busy with other work slows each alike. Progress goes to log.
func Run(ctx context.Context, cfg Config, log io.Writer) (*Report, error) {
	if slices.Contains(cfg.Targets, Baseline) && (!cfg.Processes || cfg.Baseline == "") {
		return nil, errors.New("the baseline target needs the process mode and a baseline binary")
	}
	if slices.ContainsFunc(cfg.Targets, Target.balanced) && !cfg.Processes {
		return nil, errors.New("the rr-* targets run several Caddy processes: they need -processes")
	}
	if slices.Contains(cfg.Targets, RoundRobin) {
		if _, err := redisServer(); err != nil {
			fmt.Fprintf(log, "skipping the target rr-store: %v\n", err)
			cfg.Targets = slices.DeleteFunc(slices.Clone(cfg.Targets), func(t Target) bool { return t == RoundRobin })
		}
	}
	if cfg.Duration <= 0 || cfg.Rounds < 1 || cfg.Records < 1 || len(cfg.Clients) == 0 || len(cfg.PerPages) == 0 || len(cfg.Targets) == 0 {
		return nil, errors.New("nothing to run: set a duration, rounds, records, clients, page sizes and targets")
	}
	var (
		st  stage
		err error
	)
	if cfg.Processes {
		fmt.Fprintln(log, "building cmd/caddy and starting the backend, proxy and gateway processes")
		st, err = startProcesses(ctx, cfg)
	} else {
		st, err = startInProcess(cfg)
	}
	if err != nil {
		return nil, err
	}
	defer st.close()

	if cfg.Profile != nil && !cfg.Processes {
		if err := pprof.StartCPUProfile(cfg.Profile); err != nil {
			return nil, err
		}
		defer pprof.StopCPUProfile()
	}
	rep := &Report{Config: cfg}
	slice := cfg.Duration / time.Duration(cfg.Rounds)
	for _, clients := range cfg.Clients {
		for _, perPage := range cfg.PerPages {
			fmt.Fprintf(log, "clients=%d perPage=%d:", clients, perPage)
			sums := make([]Result, len(cfg.Targets))
			lats := make([][]time.Duration, len(cfg.Targets))
			for round := range cfg.Rounds {
				for k := range cfg.Targets {
					i := (k + round) % len(cfg.Targets)
					target := cfg.Targets[i]
					if err := ctx.Err(); err != nil {
						return rep, err
					}
					fmt.Fprintf(log, " %s", target)
					r, l, err := st.phase(ctx, target, clients, perPage, round, slice)
					if err != nil {
						return rep, fmt.Errorf("%s, %d clients, perPage %d: %w", target, clients, perPage, err)
					}
					sums[i].add(r)
					lats[i] = append(lats[i], l...)
				}
			}
			fmt.Fprintln(log)
			for i, r := range sums {
				slices.Sort(lats[i])
				if len(lats[i]) > 0 {
					r.P50 = percentile(lats[i], 0.50)
					r.P99 = percentile(lats[i], 0.99)
				}
				rep.Results = append(rep.Results, r)
			}
		}
	}
	return rep, nil
}

// add sums the counts of one slice into r.
func (r *Result) add(s Result) {
	r.Target, r.Clients, r.PerPage = s.Target, s.Clients, s.PerPage
	r.Elapsed += s.Elapsed
	r.Requests += s.Requests
	r.Errors += s.Errors
	r.Bytes += s.Bytes
	r.Served += s.Served
	r.CPU += s.CPU
	r.Alloc += s.Alloc
	r.Mallocs += s.Mallocs
	r.Reads += s.Reads
	r.Writes += s.Writes
	r.BackendCPU += s.BackendCPU
	r.ClientCPU += s.ClientCPU
	r.StoreCPU += s.StoreCPU
	r.BalancerCPU += s.BalancerCPU
	r.StoreCommands += s.StoreCommands
	r.StoreErrors += s.StoreErrors
	r.Calls += s.Calls
	r.Fetched += s.Fetched
}

// inProcess is the stage of the first mode: the backend in this process,
// and a fresh in-process Caddy for each slice of the proxy and the gateway.
type inProcess struct {
	cfg        Config
	be         *reference.Backend
	srv        *http.Server
	backendURL string
	ids        []string // the list's, for the cursors clients build
}

func startInProcess(cfg Config) (*inProcess, error) {
	be := reference.New(reference.Config{Seed: cfg.Seed, Records: cfg.Records})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: be, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	s := &inProcess{cfg: cfg, be: be, srv: srv, backendURL: "http://" + ln.Addr().String()}
	if cfg.Random || cfg.SharedKey {
		for _, id := range be.IDs(cfg.List) {
			s.ids = append(s.ids, strconv.FormatInt(id, 10))
		}
	}
	return s, nil
}

func (s *inProcess) close() { _ = s.srv.Close() }

func (s *inProcess) phase(ctx context.Context, target Target, clients, perPage, _ int, d time.Duration) (Result, []time.Duration, error) {
	cfg, be := s.cfg, s.be
	base := s.backendURL
	if target != Backend {
		c, err := gatewaytest.Run(caddyfile(target, cfg.ReadBuffer), s.backendURL)
		if err != nil {
			return Result{}, nil, err
		}
		defer c.Close()
		base = c.URL
	}
	dr := newDriver(cfg, base, target, clients, perPage, s.ids)
	defer dr.client.CloseIdleConnections()
	if cfg.Warmup > 0 {
		dr.run(ctx, clients, cfg.Warmup)
	}

	runtime.GC()
	cpu0, err := cpuTime()
	if err != nil {
		return Result{}, nil, err
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	alloc0 := ms.TotalAlloc
	calls0, fetched0 := be.Requests(cfg.List), be.Served(cfg.List)
	start := time.Now()

	load := dr.run(ctx, clients, d)

	elapsed := time.Since(start)
	cpu1, err := cpuTime()
	if err != nil {
		return Result{}, nil, err
	}
	runtime.ReadMemStats(&ms)
	r := load.result(target, clients, perPage, elapsed)
	r.CPU = cpu1 - cpu0
	r.Alloc = ms.TotalAlloc - alloc0
	r.Calls = be.Requests(cfg.List) - calls0
	r.Fetched = be.Served(cfg.List) - fetched0
	if load.firstError != nil {
		return r, nil, fmt.Errorf("%d failed requests, the first: %w", load.errors, load.firstError)
	}
	return r, load.latencies, nil
}

// newDriver returns the clients of one phase against base; ids are the
// list's, for random clients.
func newDriver(cfg Config, base string, target Target, clients, perPage int, ids []string) *driver {
	d := &driver{
		base:    base + "/" + cfg.List,
		cursor:  target.walksByCursor(),
		windows: target == Window,
		perPage: perPage,
		records: cfg.Records,
		random:  cfg.Random,
		ids:     ids,
		client: &http.Client{
			Timeout: 10 * time.Second,
			Transport: &http.Transport{
				Proxy:               nil,
				MaxIdleConnsPerHost: clients,
				DisableCompression:  true,
			},
		},
	}
	if cfg.SharedKey {
		d.key = "one-caller"
	}
	return d
}

// result is the counts of a load as a Result.
func (l load) result(target Target, clients, perPage int, elapsed time.Duration) Result {
	return Result{
		Target:   target,
		Clients:  clients,
		PerPage:  perPage,
		Elapsed:  elapsed,
		Requests: l.requests,
		Errors:   l.errors,
		Bytes:    l.bytes,
		Served:   l.served,
	}
}

// percentile returns the q-quantile of sorted latencies, nearest rank.
func percentile(sorted []time.Duration, q float64) time.Duration {
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// cpuTime is the user and system CPU time the process has used: the
// clients, the targets and the backend together, as all run here.
func cpuTime() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
