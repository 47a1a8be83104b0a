package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
	"github.com/helpdesk-gateway/gateway/testdeps"
)

// TestRun runs the bench briefly, so that it cannot rot: every phase must
// serve pages without a fault, count at the backend, and the gateway's
// sequential walks must cost exactly one backend call per page.
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("load bench")
	}
	cfg := defaultConfig()
	cfg.Duration, cfg.Rounds, cfg.Warmup = 600*time.Millisecond, 2, 100*time.Millisecond
	cfg.Clients, cfg.Records = []int{2}, 1005 // a short last page
	cfg.Targets = append(cfg.Targets, Window)
	cfg.ReadBuffer = "64KiB" // both proxies' transport, as Caddy adapts it
	var log bytes.Buffer
	rep, err := Run(t.Context(), cfg, &log)
	require.NoError(t, err, log.String())
	require.Len(t, rep.Results, len(cfg.PerPages)*len(cfg.Targets))
	for _, r := range rep.Results {
		assert.Positive(t, r.Requests, "%s perPage %d", r.Target, r.PerPage)
		assert.Zero(t, r.Errors)
		assert.Positive(t, r.CPU)
		assert.Positive(t, r.Alloc)
		assert.Positive(t, r.P50)
		assert.GreaterOrEqual(t, r.P99, r.P50)
		assert.Positive(t, r.Fetched)
		switch r.Target {
		case Gateway:
			// Read-ahead: a backend call per many pages. A list of a
			// thousand records is read mostly while windows grow, when a
			// page-numbered backend's windows start at its first record;
			// translate's TestReadaheadTargets holds the 5,000-record walk
			// to 1.10.
			assert.Less(t, float64(r.Calls), 0.5*float64(r.Requests), "%s perPage %d: read-ahead", r.Target, r.PerPage)
			assert.LessOrEqual(t, r.FetchedPerServed(), 1.35, "%s perPage %d", r.Target, r.PerPage)
		case Window:
			assert.Equal(t, r.Requests, r.Calls, "%s perPage %d: one backend call per page", r.Target, r.PerPage)
			assert.LessOrEqual(t, r.FetchedPerServed(), 2.0, "%s perPage %d", r.Target, r.PerPage)
			assert.Greater(t, r.FetchedPerServed(), 1.0, "%s perPage %d: the cursor's record and one more", r.Target, r.PerPage)
		default:
			assert.Equal(t, r.Requests, r.Calls, "%s perPage %d: one backend call per page", r.Target, r.PerPage)
			assert.Equal(t, r.Served, r.Fetched, "%s: the clients got what the backend sent", r.Target)
		}
	}

	var out bytes.Buffer
	rep.Write(&out)
	assert.Contains(t, out.String(), "| 2 | 100 | gateway |")
	assert.Contains(t, out.String(), "against the plain proxy")
	assert.Contains(t, out.String(), "| gateway | window | 2 | 100 |", "the gateway against the window walk")
	assert.Contains(t, out.String(), "read_buffer 64KiB")
}

// TestCaddyfileReadBuffer sets the transport's read buffer in every
// proxy's site alike, and leaves the sites alone without one.
func TestCaddyfileReadBuffer(t *testing.T) {
	for _, target := range []Target{Proxy, Gateway, Baseline, NoReadahead, Window} {
		assert.Equal(t, caddyfiles[target], caddyfile(target, ""), "%s", target)
		got := caddyfile(target, "64KiB")
		assert.Contains(t, got, "reverse_proxy {backend} {\n\t\ttransport http {\n\t\t\tread_buffer 64KiB\n\t\t}\n\t}\n", "%s", target)
		assert.Equal(t, strings.Contains(caddyfiles[target], "helpdesk_gateway"), strings.Contains(got, "helpdesk_gateway"), "%s", target)
	}
}

// TestWindowsAreTheGateways holds the window target to what it stands
// for: through a real Caddy, a sequential cursor walk makes exactly the
// backend calls gatewayWindow names, page by page, so the window walk
// reads what the gateway reads. The list's length is not a multiple of
// the page, so the last window runs past its end.
func TestWindowsAreTheGateways(t *testing.T) {
	const records = 1005
	be := reference.New(reference.Config{Seed: 1, Records: records})
	var queries []url.Values
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/calls" {
			queries = append(queries, r.URL.Query()) // the walk is sequential
		}
		be.ServeHTTP(w, r)
	}))
	defer srv.Close()
	// The window target stands for the gateway's windows without
	// read-ahead, which reads a walk in fewer, larger windows.
	site := strings.Replace(caddyfiles[Gateway], "helpdesk_gateway\n", "helpdesk_gateway {\n\t\treadahead_ttl 0\n\t}\n", 1)
	require.NotEqual(t, caddyfiles[Gateway], site)
	c := gatewaytest.Start(t, site, srv.URL)
	defer c.Stop(t)
	for _, perPage := range []int{10, 37, 100} {
		t.Run(strconv.Itoa(perPage), func(t *testing.T) {
			queries = nil
			d := &driver{base: c.URL + "/calls", cursor: true, perPage: perPage, records: records, client: gatewaytest.Client}
			pages := (records + perPage - 1) / perPage
			var body bytes.Buffer
			next := ""
			for page := range pages {
				u := d.base + "?_perPage=" + strconv.Itoa(perPage)
				if next != "" {
					u += "&_cursor=" + url.QueryEscape(next)
				}
				var err error
				next, err = d.get(t.Context(), u, &body)
				require.NoError(t, err)
				require.Len(t, queries, page+1, "page %d: one backend call", page)
				w := gatewayWindow(page, perPage)
				got := queries[page]
				assert.Equal(t, []string{strconv.Itoa(w.Page()), strconv.Itoa(w.Size)}, []string{got.Get("_page"), got.Get("_perPage")}, "page %d", page)
			}
			assert.Empty(t, next, "the walk ends on its last page")
		})
	}
}

// TestSamePages checks what the bench compares: a cursor walk through the
// gateway serves, byte for byte, the pages a _page walk in id order gets
// through the plain proxy.
func TestSamePages(t *testing.T) {
	_, srv := gatewaytest.Backend(t, reference.Config{Seed: 1, Records: 250})
	proxy := walkBodies(t, Proxy, srv.URL)
	gateway := walkBodies(t, Gateway, srv.URL)
	require.Len(t, proxy, 3)
	assert.Equal(t, proxy, gateway)
}

// walkBodies walks the 250 records by 100 as the bench's clients do.
func walkBodies(t *testing.T, target Target, backendURL string) []string {
	c := gatewaytest.Start(t, caddyfiles[target], backendURL)
	defer c.Stop(t)
	d := &driver{base: c.URL + "/calls", cursor: target == Gateway, perPage: 100, records: 250, client: gatewaytest.Client}
	var pages []string
	var body bytes.Buffer
	next := ""
	for page := 1; page <= 3; page++ {
		u := d.base + "?_perPage=100&_sortField=id&_sortDir=ASC&_page=" + strconv.Itoa(page)
		if d.cursor {
			u = d.base + "?_perPage=100"
			if next != "" {
				u += "&_cursor=" + url.QueryEscape(next)
			}
		}
		var err error
		next, err = d.get(t.Context(), u, &body)
		require.NoError(t, err)
		pages = append(pages, body.String())
	}
	assert.Empty(t, next, "the walk ends on page 3")
	return pages
}

// TestFaultsAreCounted checks that an answer other than 200 counts as a
// fault, not as a request served.
func TestFaultsAreCounted(t *testing.T) {
	c := gatewaytest.Start(t, "http://:0 {\n\trespond `{\"message\":\"down\"}` 502\n}\n", "")
	d := &driver{base: c.URL + "/calls", perPage: 10, records: 100, client: gatewaytest.Client}
	l := d.run(t.Context(), 2, 100*time.Millisecond)
	assert.Zero(t, l.requests)
	assert.Positive(t, l.errors)
	require.Error(t, l.firstError)
	assert.Contains(t, l.firstError.Error(), "502 Bad Gateway")
}

// TestRunProcesses runs the process mode briefly: the backend, the proxy
// and the gateway each a Caddy process built from cmd/caddy. Every figure
// must be a count the processes really reported: CPU from /proc, and
// allocations from /debug/vars, for the target and the backend alike, and
// the gateway's own count of one backend call per page.
func TestRunProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("load bench: builds cmd/caddy")
	}
	cfg := defaultConfig()
	cfg.Processes = true
	// The baseline is the same build here: a fourth process, walked as the
	// gateway is, to show the before-and-after mode works.
	var err error
	cfg.Baseline, err = buildCaddy(t.Context(), t.TempDir())
	require.NoError(t, err)
	cfg.Targets = []Target{Backend, Proxy, Gateway, Baseline, NoReadahead}
	cfg.Duration, cfg.Rounds, cfg.Warmup = time.Second, 2, 100*time.Millisecond
	cfg.Clients, cfg.Records = []int{2}, 1005
	cfg.ProfileDir = t.TempDir()
	var log bytes.Buffer
	rep, err := Run(t.Context(), cfg, &log)
	require.NoError(t, err, log.String())
	require.Len(t, rep.Results, len(cfg.PerPages)*len(cfg.Targets))
	for _, r := range rep.Results {
		name := fmt.Sprintf("%s perPage %d", r.Target, r.PerPage)
		assert.Positive(t, r.Requests, name)
		assert.Zero(t, r.Errors, name)
		assert.Positive(t, r.CPU, name)
		if r.Target != Gateway && r.Target != Baseline {
			// Read-ahead leaves the backend so little to do in a short
			// run that its CPU may not reach one clock tick.
			assert.Positive(t, r.BackendCPU, name)
		}
		assert.Positive(t, r.ClientCPU, name)
		// Each request allocates in the process that served it: at least
		// the request and a few objects, and less than a megabyte for pages
		// of at most 100 records (20 KB).
		assert.Greater(t, r.Mallocs, uint64(r.Requests), name)
		assert.Greater(t, r.Alloc, uint64(r.Requests)*100, name)
		assert.Less(t, r.allocPerRequest(), 1e6, name)
		// A request is read and answered: at least one read and one write
		// syscall on the client's connection.
		assert.GreaterOrEqual(t, r.Reads, uint64(r.Requests), name)
		assert.GreaterOrEqual(t, r.Writes, uint64(r.Requests), name)
		assert.Positive(t, r.P50, name)
		assert.GreaterOrEqual(t, r.P99, r.P50, name)
		// Every page of the walk is full but the last.
		assert.InDelta(t, float64(r.PerPage), float64(r.Served)/float64(r.Requests), float64(r.PerPage)/10, name)
		switch r.Target {
		case Gateway, Baseline:
			// Read-ahead serves most pages of a walk from windows.
			assert.Positive(t, r.Calls, name)
			assert.Less(t, r.Calls, r.Requests, "%s: fewer backend calls than pages, as the gateway counts them", name)
		case NoReadahead:
			// A sequential walk with a warm index: one call a page.
			assert.Equal(t, r.Requests, r.Calls, "%s: a backend call per page, as the gateway counts them", name)
		}
	}
	profiles, err := filepath.Glob(filepath.Join(cfg.ProfileDir, "gateway-c2-pp100-r*.pprof"))
	require.NoError(t, err)
	assert.Len(t, profiles, cfg.Rounds, "a profile of each gateway slice")

	var out bytes.Buffer
	rep.Write(&out)
	assert.Contains(t, out.String(), "| 2 | 100 | gateway |")
	assert.Contains(t, out.String(), "| 2 | 100 | baseline |")
	assert.Contains(t, out.String(), "| baseline | proxy | 2 | 100 |", "the baseline's ratios to the proxy")
	assert.Contains(t, out.String(), "| gateway | gateway-ttl0 | 2 | 100 |", "the gateway's ratios to itself without read-ahead")
	assert.Contains(t, out.String(), "| throughput ratio | CPU/req ratio |")
}

// TestParseStatCPU reads utime+stime from /proc/<pid>/stat, whatever the
// command name holds, and refuses what is not such a line.
func TestParseStatCPU(t *testing.T) {
	for _, tc := range []struct {
		name, stat string
		want       time.Duration
		err        bool
	}{
		{"plain", "4242 (caddy) S 1 4242 4242 0 -1 4194560 2405 0 0 0 150 25 0 0 20 0 9 0 100 0 0", 1750 * time.Millisecond, false},
		{"spaces and parens in the name", "7 (a) b (c) R 1 7 7 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0 1 0 0", 70 * time.Millisecond, false},
		{"no name", "4242 caddy S 1", 0, true},
		{"cut short", "4242 (caddy) S 1 2 3", 0, true},
		{"not a number", "1 (x) S 1 1 1 0 -1 0 0 0 0 0 u s 0", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStatCPU([]byte(tc.stat))
			if tc.err {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	own, err := procCPU(os.Getpid())
	require.NoError(t, err)
	assert.Positive(t, own, "this process has run")
}

// TestParseIOSyscalls reads syscr and syscw from /proc/<pid>/io and
// refuses a text without both.
func TestParseIOSyscalls(t *testing.T) {
	const io = "rchar: 323934931\nwchar: 323929600\nsyscr: 632687\nsyscw: 632675\nread_bytes: 0\nwrite_bytes: 0\ncancelled_write_bytes: 0\n"
	for _, tc := range []struct {
		name, io      string
		reads, writes uint64
		err           bool
	}{
		{"proc io", io, 632687, 632675, false},
		{"no syscw", "syscr: 1\n", 0, 0, true},
		{"not a number", "syscr: x\nsyscw: 1\n", 0, 0, true},
		{"empty", "", 0, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reads, writes, err := parseIOSyscalls([]byte(tc.io))
			if tc.err {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.reads, reads)
			assert.Equal(t, tc.writes, writes)
		})
	}
	reads, _, err := procSyscalls(os.Getpid())
	require.NoError(t, err)
	assert.Positive(t, reads, "this process has read its own /proc")
}

// TestRunOneCaller runs the bench briefly with every client one caller:
// walking in order from their own places (each page a 200 of the right
// size, the last page without a next cursor), and jumping to random
// pages by cursors the clients build, where the gateway with
// readahead_ttl 0 calls the backend at least once a page.
func TestRunOneCaller(t *testing.T) {
	if testing.Short() {
		t.Skip("load bench")
	}
	for _, random := range []bool{false, true} {
		t.Run(fmt.Sprintf("random=%v", random), func(t *testing.T) {
			cfg := defaultConfig()
			cfg.SharedKey, cfg.Random = true, random
			cfg.Duration, cfg.Rounds, cfg.Warmup = 400*time.Millisecond, 2, 50*time.Millisecond
			cfg.Clients, cfg.PerPages, cfg.Records = []int{2}, []int{10}, 1005
			cfg.Targets = []Target{Proxy, Gateway, NoReadahead}
			var log bytes.Buffer
			rep, err := Run(t.Context(), cfg, &log)
			require.NoError(t, err, log.String())
			require.Len(t, rep.Results, len(cfg.Targets))
			for _, r := range rep.Results {
				assert.Positive(t, r.Requests, "%s", r.Target)
				assert.Zero(t, r.Errors, "%s", r.Target)
				assert.InDelta(t, float64(r.PerPage), float64(r.Served)/float64(r.Requests), 0.5, "%s", r.Target)
				switch r.Target {
				case Proxy:
					assert.Equal(t, r.Requests, r.Calls, "one backend call per page")
				case NoReadahead:
					assert.GreaterOrEqual(t, r.Calls, r.Requests, "no read-ahead: a backend call per page at least")
				case Gateway:
					if !random {
						assert.Less(t, r.Calls, r.Requests, "two walkers of one caller are read ahead")
					}
				}
			}
			var out bytes.Buffer
			rep.Write(&out)
			assert.Contains(t, out.String(), "The clients are one caller (one API key)")
			assert.Contains(t, out.String(), "| gateway | gateway-ttl0 | 2 | 10 |", "the gateway against itself without read-ahead")
		})
	}
}

// TestListIDs reads a list's ids in order, across the backend's pages,
// and refuses a list of another length.
func TestListIDs(t *testing.T) {
	b, srv := gatewaytest.Backend(t, reference.Config{Seed: 1, Records: 2100})
	ids, err := listIDs(t.Context(), gatewaytest.Client, srv.URL+"/calls", 2100)
	require.NoError(t, err)
	want := make([]string, 0, 2100)
	for _, id := range b.IDs("calls") {
		want = append(want, strconv.FormatInt(id, 10))
	}
	assert.Equal(t, want, ids)
	_, err = listIDs(t.Context(), gatewaytest.Client, srv.URL+"/calls", 2000)
	assert.ErrorContains(t, err, "2100 records, not 2000")
}

// TestRunRoundRobin runs the balanced targets briefly, one client walking
// so that no two pages in a row reach the same gateway: three gateway
// processes behind a round-robin Caddy, with read-ahead shared through a
// redis-server the bench starts (rr-store), each instance's own
// (rr-local) and off (rr-ttl0), and plain proxies in their place
// (rr-proxy). Only the shared store follows a walk
// across instances; the figures are the processes' own counts. An
// instance of rr-local serves a page from its window only when it served
// the page before in an earlier walk within the TTL: a walk of 120 pages
// (a multiple of the 3 instances) sends each page to the instance of the
// same page of the walk before, and with no warm-up a target's slices
// are more than the TTL (2s) apart.
func TestRunRoundRobin(t *testing.T) {
	if testing.Short() {
		t.Skip("load bench: builds cmd/caddy, runs ten processes")
	}
	if _, err := redisServer(); err != nil {
		testdeps.Missing(t, "%v", err)
	}
	cfg := defaultConfig()
	cfg.Processes = true
	cfg.Targets = []Target{Proxy, RoundRobin, RoundRobinLocal, RoundRobinOff, RoundRobinProxy}
	cfg.Duration, cfg.Rounds, cfg.Warmup = 2*time.Second, 2, 0
	cfg.Clients, cfg.PerPages, cfg.Records = []int{1}, []int{10}, 1195
	var log bytes.Buffer
	rep, err := Run(t.Context(), cfg, &log)
	require.NoError(t, err, log.String())
	require.Len(t, rep.Results, len(cfg.Targets))
	for _, r := range rep.Results {
		name := r.Target.String()
		assert.Positive(t, r.Requests, name)
		assert.Zero(t, r.Errors, name)
		assert.Positive(t, r.CPU, name)
		if !r.Target.balanced() {
			continue
		}
		assert.Positive(t, r.BalancerCPU, "%s: the balancer's CPU, apart", name)
		assert.Greater(t, r.Mallocs, uint64(r.Requests), "%s: the gateways' allocations", name)
		if r.Target == RoundRobinProxy {
			assert.Zero(t, r.Calls+r.Fetched, "%s: counted by gateways only", name)
			continue
		}
		assert.Greater(t, r.Fetched, int64(0), "%s: records fetched, from the gateways' admin endpoints", name)
		switch r.Target {
		case RoundRobin:
			assert.Less(t, float64(r.Calls), 0.2*float64(r.Requests), "%s: the store follows the walk across instances", name)
			assert.GreaterOrEqual(t, r.StoreCommands, uint64(r.Requests), "%s: a store round trip a page at least", name)
			assert.LessOrEqual(t, r.StoreCPU, r.CPU, "%s: the store's CPU is part of the gateways'", name)
		case RoundRobinLocal:
			assert.GreaterOrEqual(t, float64(r.Calls), 0.9*float64(r.Requests), "%s: no page continues its instance's walk", name)
			assert.Zero(t, r.StoreCommands, name)
		case RoundRobinOff:
			assert.GreaterOrEqual(t, r.Calls, r.Requests, "%s: a backend call a page at least", name)
			assert.Greater(t, r.Fetched, r.Served, "%s: each page's cursor record and one more", name)
		}
	}
	var out bytes.Buffer
	rep.Write(&out)
	assert.Contains(t, out.String(), "| 1 | 10 | rr-store |")
	assert.Contains(t, out.String(), "| rr-store | rr-ttl0 | 1 | 10 |", "rr-store against read-ahead off")
	assert.Contains(t, out.String(), "| gateways' CPU/req | ratio to proxy | of it the store's | balancer CPU/req |")
	assert.Regexp(t, `\| 1 \| 10 \| rr-proxy \| \d+ µs \| \d\.\d{3} \| 0 µs \| \d+ µs \| 0\.00 \| 0 \| — \| — \|`, out.String())
	assert.Regexp(t, `\| 1 \| 10 \| rr-store \|.*calls (met|MISSED), fetched (met|MISSED), CPU (met|MISSED), p99 (met|MISSED) \|`, out.String())
}

// TestRoundRobinWithoutRedis: where redis-server is missing, rr-store is
// skipped with a message saying how to install it, and a run of nothing
// else refuses to start.
func TestRoundRobinWithoutRedis(t *testing.T) {
	t.Setenv("HELPDESK_REDIS_SERVER", filepath.Join(t.TempDir(), "redis-server"))
	cfg := defaultConfig()
	cfg.Processes, cfg.Targets = true, []Target{RoundRobin}
	var log bytes.Buffer
	_, err := Run(t.Context(), cfg, &log)
	assert.ErrorContains(t, err, "nothing to run")
	assert.Contains(t, log.String(), "skipping the target rr-store:")
	assert.Contains(t, log.String(), "apt-get install redis-server")

	cfg.Processes, cfg.Targets = false, []Target{Proxy, RoundRobinLocal}
	_, err = Run(t.Context(), cfg, &log)
	assert.ErrorContains(t, err, "need -processes")
}

// TestMeets names each of issue 33's targets met or missed.
func TestMeets(t *testing.T) {
	proxy := Result{Requests: 100, CPU: 100 * time.Millisecond}
	off := Result{P99: 3 * time.Millisecond}
	for _, tc := range []struct {
		name string
		r    Result
		want string
	}{
		{"all met at 10", Result{PerPage: 10, Requests: 100, Calls: 5, Served: 1000, Fetched: 1100, CPU: 100 * time.Millisecond, P99: 3 * time.Millisecond},
			"calls met, fetched met, CPU met, p99 met"},
		{"all missed at 10", Result{PerPage: 10, Requests: 100, Calls: 6, Served: 1000, Fetched: 1101, CPU: 101 * time.Millisecond, P99: 3*time.Millisecond + 1},
			"calls MISSED, fetched MISSED, CPU MISSED, p99 MISSED"},
		{"calls at 100", Result{PerPage: 100, Requests: 100, Calls: 25, Served: 1000, Fetched: 1000, CPU: 50 * time.Millisecond, P99: time.Millisecond},
			"calls met, fetched met, CPU met, p99 met"},
		{"no calls target at 37", Result{PerPage: 37, Requests: 100, Calls: 100, Served: 1000, Fetched: 1000, CPU: 50 * time.Millisecond, P99: time.Millisecond},
			"fetched met, CPU met, p99 met"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.r.meets(proxy, true, off, true))
		})
	}
	assert.Equal(t, "calls met, fetched met", Result{PerPage: 10, Requests: 1, Served: 1}.meets(Result{}, false, Result{}, false))
}
