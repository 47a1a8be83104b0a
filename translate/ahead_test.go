package translate

import (
	"context"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// aheadList is a memList that counts the calls the walker's own pages make
// (through it), apart from those made reading ahead of the walker in the
// background (through the memList Detach returns).
type aheadList struct {
	*memList
	own atomic.Int64
}

func (l *aheadList) Fetch(ctx context.Context, w Window) (Batch, error) {
	l.own.Add(1)
	return l.memList.Fetch(ctx, w)
}

func (l *aheadList) Detach() (Fetcher, context.Context, func(error), bool) {
	return l.memList, context.Background(), func(error) {}, true
}

// noDetach hides memList's Detach: a fetcher that cannot read ahead.
type noDetach struct{ l *memList }

func (f noDetach) Fetch(ctx context.Context, w Window) (Batch, error) { return f.l.Fetch(ctx, w) }

// TestReadAheadOfTheWalker: the page at a window's end is cut from the
// window read ahead in the background, started at the window's marker:
// after the walk's first window, no page of a sequential walk waits for
// a backend call, in every dialect, with the walk's calls and records
// fetched as reading at the window's end costs. Reads ahead run in
// goroutines here, as in the gateway; the walker lets those in flight end
// before each page, because one that gets there first waits only a bound
// (a few of the list's reads, from 20 ms) and then reads for itself, by
// design (TestPageDoesNotWaitOnAHungReadAhead), which a loaded machine
// running -race turns into calls this test would count.
func TestReadAheadOfTheWalker(t *testing.T) {
	const n = 20_000
	for _, dialect := range []string{"pages", "offsets"} {
		for _, size := range []int{10, 100} {
			t.Run(dialect+" by "+strconv.Itoa(size), func(t *testing.T) {
				l := &aheadList{memList: newMemList(evenIDs(n))}
				l.offsets = dialect == "offsets"
				e := readaheadEngine(l.offsets)
				e.spawn = nil // goroutines, as in the gateway
				var ids []int64
				pages := 0
				cursor := ""
				for {
					e.WaitAhead()
					pg, err := e.Page(context.Background(), l, Request{List: "caller", After: cursor, Size: size})
					require.NoError(t, err)
					pages++
					ids = append(ids, parseIDs(pg.IDs)...)
					if !pg.More {
						break
					}
					cursor = pg.IDs[len(pg.IDs)-1]
				}
				e.aheadWG.Wait()
				require.Equal(t, evenIDs(n), ids)
				calls, fetched := l.counts()
				own := int(l.own.Load())
				bg := calls - own
				t.Logf("%d pages: %d calls in the walker's requests, %d read ahead; %.3f calls a page, %.3f fetched per served",
					pages, own, bg, float64(calls)/float64(pages), float64(fetched)/float64(n))
				assert.LessOrEqual(t, own, 2, "calls the walker waited for: its first page and its first window")
				assert.Positive(t, bg)
				limit := map[int]float64{10: 0.05, 100: 0.25}[size]
				assert.LessOrEqual(t, float64(calls)/float64(pages), limit, "calls per page")
				assert.LessOrEqual(t, float64(fetched)/float64(n), 1.10, "records fetched per served")

				// A fetcher that cannot detach reads each window when the
				// walker gets to it, as before.
				l2 := newMemList(evenIDs(n))
				l2.offsets = l.offsets
				e2 := readaheadEngine(l.offsets)
				e2.spawn = nil
				cursor, waited := "", 0
				for {
					calls0, _ := l2.counts()
					pg, err := e2.Page(context.Background(), noDetach{l2}, Request{List: "caller", After: cursor, Size: size})
					require.NoError(t, err)
					if calls, _ := l2.counts(); calls > calls0 {
						waited++
					}
					if !pg.More {
						break
					}
					cursor = pg.IDs[len(pg.IDs)-1]
				}
				assert.Greater(t, waited, 2+pages/200, "without detaching, each window's end waits")
			})
		}
	}
}

// TestReadAheadUnderChurnInGoroutines: one caller walks a churning list
// again and again, back to back, with reads ahead in goroutines as in
// the gateway, the list changing before every backend call, the reads
// ahead's too: every record that lived through a walk reaches it with
// the bytes it had (ruleWalker.check compares whole records), and most
// pages come from windows.
func TestReadAheadUnderChurnInGoroutines(t *testing.T) {
	for _, dialect := range []string{"pages", "offsets"} {
		for _, size := range []int{10, 100} {
			t.Run(dialect+" by "+strconv.Itoa(size), func(t *testing.T) {
				l := ruleList(uint64(size), 3000, 2, dialect)
				e := readaheadEngine(dialect == "offsets")
				e.spawn = nil // goroutines, as in the gateway
				pages := 0
				calls0, _ := l.counts()
				for i := range 4 {
					w := &ruleWalker{name: "walk " + strconv.Itoa(i), size: size}
					for !w.done {
						w.step(t, e, l)
					}
					e.WaitAhead()
					w.check(t, l)
					pages += w.pages
				}
				calls, _ := l.counts()
				assert.Less(t, float64(calls-calls0)/float64(pages), 0.35, "most pages from windows")
			})
		}
	}
}

// TestReadAheadSkipsASlowWalker: a walker that reads a window in more
// than half its lifetime is not read ahead (Walk.Ahead): the window
// would lose that time of its TTL for nothing.
func TestReadAheadSkipsASlowWalker(t *testing.T) {
	clock := newFakeClock()
	l := &aheadList{memList: newMemList(evenIDs(2000))}
	e := clock.engine(readaheadEngine(false))
	cursor := ""
	for range 40 {
		pg, err := e.Page(context.Background(), l, Request{List: "caller", After: cursor, Size: 10})
		require.NoError(t, err)
		cursor = pg.IDs[len(pg.IDs)-1]
		clock.add(300 * time.Millisecond) // 33 records a second; windows of 2s
	}
	calls, _ := l.counts()
	assert.Equal(t, calls, int(l.own.Load()), "every call the walker's own")
	assert.True(t, slices.IsSorted(l.ids))
}
