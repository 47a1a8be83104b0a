package translate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
)

// BenchmarkSequentialWalk walks a 100,000-record list by cursor and
// reports backend calls per page and records fetched per record served.
func BenchmarkSequentialWalk(b *testing.B) {
	for _, size := range []int{10, 100} {
		b.Run(fmt.Sprintf("perPage=%d", size), func(b *testing.B) {
			l := newMemList(evenIDs(100000))
			e := newEngine(1000, 100000)
			pages, served := 0, 0
			cursor := ""
			b.ReportAllocs()
			for b.Loop() {
				pg, err := e.Page(context.Background(), l, Request{List: "l", After: cursor, Size: size})
				if err != nil {
					b.Fatal(err)
				}
				pages++
				served += len(pg.IDs)
				cursor = ""
				if pg.More {
					cursor = pg.IDs[len(pg.IDs)-1]
				}
			}
			calls, fetched := l.counts()
			b.ReportMetric(float64(calls)/float64(pages), "calls/page")
			b.ReportMetric(float64(fetched)/float64(served), "fetched/served")
		})
	}
}

// BenchmarkCursorCost reports the backend calls of one cursor page at
// positions of a 100,000-record list: cold (a new index, end unknown) and
// warm (the index knows the list's extent, not the cursor).
func BenchmarkCursorCost(b *testing.B) {
	const n, size = 100000, 10
	l := newMemList(evenIDs(n))
	for _, pos := range []float64{0.01, 0.5, 0.99} {
		cursor := strconv.Itoa(int(pos*n)*10 + 5)
		for _, warm := range []bool{false, true} {
			b.Run(fmt.Sprintf("pos=%g/warm=%v", pos, warm), func(b *testing.B) {
				calls := 0
				for b.Loop() {
					e := newEngine(1000, 100000)
					if warm {
						if _, err := e.Page(context.Background(), l, Request{List: "l", After: strconv.Itoa(n * 10), Size: size}); err != nil {
							b.Fatal(err)
						}
					}
					pg, err := e.Page(context.Background(), l, Request{List: "l", After: cursor, Size: size})
					if err != nil {
						b.Fatal(err)
					}
					calls += pg.Calls
				}
				b.ReportMetric(float64(calls)/float64(b.N), "calls/page")
			})
		}
	}
}

// BenchmarkRandomColdCursors reports the average calls of hand-built
// cursors at random places of evenly spread numeric ids: each from a cold
// start (a fresh index, end unknown), and with one index shared by all of
// them, as clients jumping around a list would see.
func BenchmarkRandomColdCursors(b *testing.B) {
	const n, size = 100000, 10
	l := newMemList(evenIDs(n))
	for _, shared := range []bool{false, true} {
		b.Run(fmt.Sprintf("sharedIndex=%v", shared), func(b *testing.B) {
			e := newEngine(1000, 100000)
			r := rand.New(rand.NewPCG(1, 1))
			calls := 0
			b.ReportAllocs()
			for b.Loop() {
				if !shared {
					e = newEngine(1000, 100000)
				}
				pg, err := e.Page(context.Background(), l, Request{List: "l", After: strconv.FormatInt(1+r.Int64N(n*10), 10), Size: size})
				if err != nil {
					b.Fatal(err)
				}
				calls += pg.Calls
			}
			b.ReportMetric(float64(calls)/float64(b.N), "calls/page")
		})
	}
}

// BenchmarkClampedWalk is BenchmarkSequentialWalk on backends that bend
// _perPage, beside the same walk with backend_max_per_page set to the
// backend's real limit: learning costs at most one call per endpoint, and
// from then on the cost is the configured one. It also walks _page=1, 2,
// ... (offset mode), where a clamp would otherwise read wrong offsets.
func BenchmarkClampedWalk(b *testing.B) {
	for _, tc := range []struct {
		name                    string
		clampAt, fixed, maxPage int
		size                    int
		offsetMode              bool
	}{
		{"clamp=100/perPage=100/learned", 100, 0, 1000, 100, false},
		{"clamp=100/perPage=100/configured", 0, 0, 100, 100, false},
		{"clamp=137/perPage=250/learned", 137, 0, 1000, 250, false},
		{"clamp=137/perPage=250/configured", 0, 0, 137, 250, false},
		{"clamp=100/_page/perPage=100/learned", 100, 0, 1000, 100, true},
		{"clamp=100/_page/perPage=100/configured", 0, 0, 100, 100, true},
		{"fixed=40/perPage=10/learned", 0, 40, 1000, 10, false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			l := backendQuirk{clampAt: tc.clampAt, fixed: tc.fixed}.list(evenIDs(100000))
			e := newEngine(tc.maxPage, 100000)
			pages := 0
			cursor, page := "", 1
			for b.Loop() {
				req := Request{List: "l", After: cursor, Size: tc.size}
				if tc.offsetMode {
					req = Request{List: "l", Offset: (page - 1) * tc.size, Size: tc.size}
				}
				pg, err := e.Page(context.Background(), l, req)
				if err != nil {
					b.Fatal(err)
				}
				pages++
				cursor, page = "", page+1
				if pg.More {
					cursor = pg.IDs[len(pg.IDs)-1]
				} else {
					page = 1
				}
			}
			calls, _ := l.counts()
			b.ReportMetric(float64(calls)/float64(pages), "calls/page")
		})
	}
}
