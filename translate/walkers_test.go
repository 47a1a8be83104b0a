package translate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every walk of a caller is followed: any number of walks of one list
// identity read ahead, each on its own chain, bounded by memory and not
// by a count of slots.

// parallelWalks walks l with walkers walks of one caller in turns, each
// starting a page later than the one before, the clock moved by tick a
// page, and returns the pages served and the backend calls made.
func parallelWalks(t testing.TB, e *Engine, l *memList, clock *fakeClock, walkers, size int, tick time.Duration) (pages, calls int) {
	calls0, _ := l.counts()
	cursors := make([]string, walkers)
	done := make([]bool, walkers)
	for turn, left := 0, walkers; left > 0; turn++ {
		for i := range walkers {
			if done[i] || turn < i {
				continue
			}
			pg, err := e.Page(context.Background(), l, Request{List: "caller", After: cursors[i], Size: size})
			require.NoError(t, err)
			pages++
			if clock != nil {
				clock.add(tick)
			}
			if !pg.More {
				done[i] = true
				left--
				continue
			}
			cursors[i] = pg.IDs[len(pg.IDs)-1]
		}
	}
	calls1, _ := l.counts()
	return pages, calls1 - calls0
}

// TestParallelWalkersReadAhead: 8 walkers of one caller (a job with 8
// workers sending one key), each walking the whole list in turns, cost
// the backend no more calls per page than the targets: 0.05 at
// 10 a page, 0.25 at 100. Before, four walks were followed at most. A
// keyset list reads ahead as the others do (issue 40).
func TestParallelWalkersReadAhead(t *testing.T) {
	for _, tc := range []struct {
		dialect string
		size    int
		calls   float64
	}{
		{"pages", 10, 0.05}, {"offsets", 10, 0.05}, {"keyset", 10, 0.05},
		{"pages", 100, 0.25}, {"offsets", 100, 0.25}, {"keyset", 100, 0.25},
	} {
		t.Run(fmt.Sprintf("%s by %d", tc.dialect, tc.size), func(t *testing.T) {
			clock := newFakeClock()
			l := newMemList(evenIDs(20_000))
			l.offsets = tc.dialect == "offsets"
			e := ruleEngine(tc.dialect, clock)
			pages, calls := parallelWalks(t, e, l, clock, 8, tc.size, 100*time.Microsecond)
			perPage := float64(calls) / float64(pages)
			t.Logf("%d pages, %d calls, %.4f a page", pages, calls, perPage)
			assert.LessOrEqual(t, perPage, tc.calls, "backend calls per page")
		})
	}
}

// TestRandomJumpsCostNoMore: walkers that jump about at random (each page
// after a cursor of their own choosing, never a page's end) cost the
// backend no more calls with read-ahead on than with readahead_ttl 0.
func TestRandomJumpsCostNoMore(t *testing.T) {
	for _, dialect := range ruleDialects {
		t.Run(dialect, func(t *testing.T) {
			jump := func(ttl time.Duration) int {
				clock := newFakeClock()
				l := newMemList(evenIDs(20_000))
				l.offsets = dialect == "offsets"
				e := ruleEngine(dialect, clock)
				e.Lists = trustedStore(cursor.Numeric, ttl, 64<<20)
				r := rand.New(rand.NewPCG(11, 12))
				for range 2000 {
					after := strconv.Itoa(5 + 10*r.IntN(19_000)) // between two records
					_, err := e.Page(context.Background(), l, Request{List: "caller", After: after, Size: 10})
					require.NoError(t, err)
					clock.add(time.Millisecond)
				}
				calls, _ := l.counts()
				return calls
			}
			on, off := jump(2*time.Second), jump(0)
			t.Logf("%d calls with read-ahead, %d without", on, off)
			assert.LessOrEqual(t, on, off)
		})
	}
}

// TestWalkBacksOffWhenThrashing: a walk whose windows the store cannot
// keep (readahead_memory smaller than what its windows grow to, shared
// with another caller's walk) reads smaller windows after, as an
// operating system's readahead does under thrashing: the records it
// fetches stay within five times those it is served, where windows
// doubling to the backend's limit read twenty to fifty times more.
func TestWalkBacksOffWhenThrashing(t *testing.T) {
	for _, dialect := range ruleDialects {
		t.Run(dialect, func(t *testing.T) {
			clock := newFakeClock()
			l := newMemList(evenIDs(20_000))
			l.offsets = dialect == "offsets"
			e := ruleEngine(dialect, clock)
			e.Lists = trustedStore(cursor.Numeric, 2*time.Second, 12<<10)
			cursors := []string{"", ""}
			served := 0
			_, fetched0 := l.counts()
			for range 400 {
				for i := range cursors {
					pg, err := e.Page(context.Background(), l, Request{List: "caller " + strconv.Itoa(i), After: cursors[i], Size: 10})
					require.NoError(t, err)
					served += len(pg.IDs)
					cursors[i] = pg.IDs[len(pg.IDs)-1]
				}
				clock.add(time.Millisecond)
			}
			_, fetched := l.counts()
			ratio := float64(fetched-fetched0) / float64(served)
			t.Logf("%.2f records fetched per record served; %+v", ratio, e.Lists.(*MemoryStore).Stats())
			assert.Less(t, ratio, 5.0, "records fetched per record served")
		})
	}
}

// BenchmarkParallelWalkers: 8 goroutines walk one caller's list of 20,000
// records at once, each from the start to the end; reports backend calls
// per page (issue 29's targets: 0.05 at 10 a page, 0.25 at 100).
func BenchmarkParallelWalkers(b *testing.B) {
	for _, size := range []int{10, 100} {
		b.Run("perPage="+strconv.Itoa(size), func(b *testing.B) {
			var pages, calls int
			for b.Loop() {
				l := newMemList(evenIDs(20_000))
				e := readaheadEngine(false)
				var (
					wg sync.WaitGroup
					mu sync.Mutex
				)
				for range 8 {
					wg.Go(func() {
						n, cursor := 0, ""
						for {
							pg, err := e.Page(context.Background(), l, Request{List: "caller", After: cursor, Size: size})
							if err != nil {
								b.Error(err)
								return
							}
							n++
							if !pg.More {
								break
							}
							cursor = pg.IDs[len(pg.IDs)-1]
						}
						mu.Lock()
						pages += n
						mu.Unlock()
					})
				}
				wg.Wait()
				c, _ := l.counts()
				calls += c
			}
			b.ReportMetric(float64(calls)/float64(pages), "calls/page")
		})
	}
}
