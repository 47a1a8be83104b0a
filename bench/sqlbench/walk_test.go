package sqlbench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/helpdesk-gateway/gateway/bench/costmodel"
	"github.com/helpdesk-gateway/gateway/legacy"
)

// Run from this directory (a module of its own):
//
//	go test -run '^$' -bench . -benchtime 1x
//
// BenchmarkWalk walks the whole list three ways at each list size and
// page size, read-ahead on: through the gateway's engine in the page
// dialect (_page/_perPage: LIMIT/OFFSET) and with backend_keyset
// "id_gt={id}", and as a client of the backend's own keyset API
// (id_gt=X&_perPage=S, no gateway). It reports the backend's CPU time
// for each gateway walk against the backend's own keyset walk (x-own),
// and the walks' wall times likewise. BenchmarkCallCost measures what
// the crossover of docs/performance.md needs: a call's fixed CPU cost
// and a row's cost to step over by OFFSET.

// sizes are the list sizes walked; SQLBENCH_RECORDS (comma-separated)
// sets others.
func sizes(b *testing.B) []int {
	s := os.Getenv("SQLBENCH_RECORDS")
	if s == "" {
		return []int{100_000, 300_000}
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			b.Fatalf("SQLBENCH_RECORDS: %q is not a list size", f)
		}
		out = append(out, n)
	}
	return out
}

// open opens the benchmark's database of n items, kept in the temporary
// directory between runs (filling 300,000 rows takes seconds).
func open(b *testing.B, n int) *Backend {
	path := filepath.Join(os.TempDir(), fmt.Sprintf("helpdesk-sqlbench-%d.db", n))
	be, err := Open(path, n)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { be.Close() })
	return be
}

// cost is what one walk cost the backend.
type cost struct {
	calls, rows int64
	cpu, wall   time.Duration
	records     int
}

func measure(be *Backend, walk func() int) cost {
	s0 := be.Stats()
	t0 := time.Now()
	n := walk()
	wall := time.Since(t0)
	s1 := be.Stats()
	return cost{calls: s1.Calls - s0.Calls, rows: s1.Rows - s0.Rows, cpu: s1.CPU - s0.CPU, wall: wall, records: n}
}

// gatewayWalk walks the list through the engine in dialect d.
func gatewayWalk(b *testing.B, be *Backend, d legacy.Dialect, size int) int {
	e := costmodel.NewEngine(d, costmodel.ReadaheadTTL)
	f := &costmodel.Fetcher{Backend: be, Path: "/items", Dialect: d}
	w, err := costmodel.WalkList(context.Background(), e, f, "caller", size)
	if err != nil {
		b.Fatal(err)
	}
	return w.Records
}

// ownWalk walks the list by the backend's own keyset API, as a client
// that knows it would.
func ownWalk(b *testing.B, be *Backend, size int) int {
	records, after := 0, ""
	for {
		target := "/items?_perPage=" + strconv.Itoa(size)
		if after != "" {
			target += "&id_gt=" + after
		}
		rec := httptest.NewRecorder()
		be.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
		if rec.Code != http.StatusOK {
			b.Fatalf("%s: %d %s", target, rec.Code, rec.Body)
		}
		body, err := legacy.ParseBody(rec.Body.Bytes(), "", "id")
		if err != nil {
			b.Fatal(err)
		}
		records += len(body.IDs)
		if len(body.IDs) < size {
			return records
		}
		after = body.IDs[len(body.IDs)-1]
	}
}

func BenchmarkWalk(b *testing.B) {
	for _, n := range sizes(b) {
		be := open(b, n)
		for _, size := range []int{10, 100} {
			b.Run(fmt.Sprintf("records=%d/size=%d", n, size), func(b *testing.B) {
				for b.Loop() {
					own := measure(be, func() int { return ownWalk(b, be, size) })
					page := measure(be, func() int { return gatewayWalk(b, be, legacy.Dialect{}, size) })
					keyset := measure(be, func() int { return gatewayWalk(b, be, legacy.Dialect{Keyset: "id_gt={id}"}, size) })
					for _, c := range []cost{own, page, keyset} {
						if c.records != n {
							b.Fatalf("a walk served %d records of %d", c.records, n)
						}
					}
					b.ReportMetric(own.cpu.Seconds(), "own-cpu-s")
					b.ReportMetric(page.cpu.Seconds()/own.cpu.Seconds(), "page-cpu-x-own")
					b.ReportMetric(keyset.cpu.Seconds()/own.cpu.Seconds(), "keyset-cpu-x-own")
					b.ReportMetric(page.wall.Seconds()/own.wall.Seconds(), "page-wall-x-own")
					b.ReportMetric(keyset.wall.Seconds()/own.wall.Seconds(), "keyset-wall-x-own")
					b.Logf("records=%d size=%d: own keyset %d calls %v CPU %v wall; page %d calls %v CPU %v wall; keyset %d calls %v CPU %v wall",
						n, size, own.calls, own.cpu.Round(time.Millisecond), own.wall.Round(time.Millisecond),
						page.calls, page.cpu.Round(time.Millisecond), page.wall.Round(time.Millisecond),
						keyset.calls, keyset.cpu.Round(time.Millisecond), keyset.wall.Round(time.Millisecond))
				}
			})
		}
	}
}

// BenchmarkCallCost measures, on the largest list, a call's fixed CPU
// cost (a keyset call for one row, at ids spread over the list) and a
// row's cost to step over (a call for one row at offset N/2, less a
// call's cost, over N/2 rows), and their ratio K, a call's cost in rows
// stepped over: the crossover of a page-dialect walk with windows of w
// against the backend's own keyset walk by p is N = 2K(w/p - 1).
func BenchmarkCallCost(b *testing.B) {
	ns := sizes(b)
	n := ns[len(ns)-1]
	be := open(b, n)
	get := func(target string) {
		rec := httptest.NewRecorder()
		be.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
		if rec.Code != http.StatusOK {
			b.Fatalf("%s: %d %s", target, rec.Code, rec.Body)
		}
	}
	for b.Loop() {
		const calls = 2000
		s0 := be.Stats()
		for i := range calls {
			get("/items?_perPage=1&id_gt=" + strconv.Itoa(i*n/calls))
		}
		call := float64(be.Stats().CPU-s0.CPU) / calls // ns
		const deep = 20
		s0 = be.Stats()
		for range deep {
			get("/items?_perPage=1&_page=" + strconv.Itoa(n/2))
		}
		skip := (float64(be.Stats().CPU-s0.CPU)/deep - call) / float64(n/2) // ns a row
		k := call / skip
		b.ReportMetric(call/1e3, "call-us")
		b.ReportMetric(skip, "skip-ns/row")
		b.ReportMetric(k, "K-rows/call")
		for _, p := range []int{10, 100} {
			for _, w := range []int{950, 1000} {
				b.Logf("K = %.0f rows a call: a page-dialect walk by %d in windows of %d passes the own keyset walk at N = %.0f",
					k, p, w, 2*k*(float64(w)/float64(p)-1))
			}
		}
	}
}
