package translate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The engine in front of a backend asked by offset and limit
// (Engine.Offsets): windows start where they are needed, with no alignment
// to page boundaries, and a clamp cuts an answer short without moving it.

func newOffsetEngine(maxPage, indexSize int) *Engine {
	e := newEngine(maxPage, indexSize)
	e.Offsets = true
	return e
}

func newOffsetList(ids []int64) *memList {
	l := newMemList(ids)
	l.offsets = true
	return l
}

// TestOffsetWalkCost holds issue 17's cost targets: a sequential walk over
// an offset backend costs 1.00 call per page and fetches only the page,
// the cursor's record and one look-ahead: at most 1.20 records per record
// served at 10 per page and 1.03 at 100, where aligned pages fetch more.
// Both dialects walk the same list in one run, so the ratio is measured.
func TestOffsetWalkCost(t *testing.T) {
	for _, tc := range []struct {
		n, size, maxPage int
		maxFetched       float64 // records fetched per record served
	}{
		{100000, 10, 1000, 1.20}, {100000, 100, 1000, 1.03}, {20000, 1000, 1000, 1.01}, {5000, 7, 50, 1.30},
	} {
		t.Run(fmt.Sprintf("n=%d/size=%d/max=%d", tc.n, tc.size, tc.maxPage), func(t *testing.T) {
			ids := evenIDs(tc.n)
			l := newOffsetList(ids)
			got, pages := walk(t, newOffsetEngine(tc.maxPage, 100000), l, tc.size)
			require.Equal(t, ids, got)
			calls, fetched := l.counts()

			aligned := newMemList(ids)
			_, alignedPages := walk(t, newEngine(tc.maxPage, 100000), aligned, tc.size)
			alignedCalls, alignedFetched := aligned.counts()
			require.Equal(t, alignedPages, pages)

			perPage, perRecord := float64(calls)/float64(pages), float64(fetched)/float64(tc.n)
			if 2*tc.size <= tc.maxPage {
				assert.Equal(t, 1.0, perPage, "backend calls per page")
			} else {
				// A page of the backend's largest size cannot also hold the
				// cursor's record and the look-ahead: two calls, stitched.
				assert.LessOrEqual(t, perPage, 2.0, "backend calls per page")
			}
			assert.LessOrEqual(t, perRecord, tc.maxFetched, "records fetched per record served")
			assert.LessOrEqual(t, fetched, alignedFetched, "never more than aligned pages")
			assert.LessOrEqual(t, calls, alignedCalls, "never more calls than aligned pages")
			t.Logf("offset: %.3f calls per page, %.3f records fetched per record served; aligned pages: %.3f, %.3f",
				perPage, perRecord, float64(alignedCalls)/float64(pages), float64(alignedFetched)/float64(tc.n))
		})
	}
}

// TestOffsetCursorCost: cold and warm cursors keep TestCursorCost's
// targets on an offset backend, and _page requests cost one call.
func TestOffsetCursorCost(t *testing.T) {
	const n = 100000
	for _, data := range costData(n) {
		for _, size := range []int{10, 100} {
			t.Run(fmt.Sprintf("%s/perPage=%d", data.name, size), func(t *testing.T) {
				bound := log2Ceil(float64(n) / float64(size))
				l := newOffsetList(data.ids)
				r := rand.New(rand.NewPCG(3, uint64(size)))
				var cursors []int64
				for _, pos := range []float64{0, 0.01, 0.25, 0.5, 0.5001, 0.75, 0.99, 0.99999} {
					i := int(pos * float64(n))
					cursors = append(cursors, data.ids[i], data.ids[i]+1)
				}
				for range 16 {
					cursors = append(cursors, data.ids[r.IntN(n)]+r.Int64N(2))
				}
				last := data.ids[n-1]
				cursors = append(cursors, -5, 0, last, last+1, last*1000)
				maxCold, maxWarm := 0, 0
				for _, cursor := range cursors {
					e := newOffsetEngine(1000, 100000)
					maxCold = max(maxCold, pageAt(t, e, l, cursor, size).Calls)
					e = newOffsetEngine(1000, 100000)
					pageAt(t, e, l, last, size)
					maxWarm = max(maxWarm, pageAt(t, e, l, cursor, size).Calls)
				}
				assert.LessOrEqual(t, maxCold, 2*bound+2, "cold cursor calls")
				assert.LessOrEqual(t, maxWarm, bound+2, "warm cursor calls")

				e := newOffsetEngine(1000, 100000)
				for _, page := range []int{1, 2, 77, n / size, n/size + 1} {
					pg, err := e.Page(context.Background(), l, Request{List: "l", Offset: (page - 1) * size, Size: size})
					require.NoError(t, err)
					from := min((page-1)*size, n)
					require.Equal(t, data.ids[from:min(from+size, n)], parseIDs(pg.IDs), "_page %d", page)
					assert.Equal(t, 1, pg.Calls, "_page %d", page)
					assert.LessOrEqual(t, pg.Fetched, size+1, "_page %d: the page and one look-ahead", page)
				}
				t.Logf("max calls: cold %d (bound %d), warm %d (bound %d)", maxCold, 2*bound+2, maxWarm, bound+2)
			})
		}
	}
}

// TestOffsetWindowsAreUnaligned: the calls of an offset walk start where
// the page needs them, never at an earlier page boundary.
func TestOffsetWindowsAreUnaligned(t *testing.T) {
	ids := evenIDs(1000)
	var windows []Window
	l := newOffsetList(ids)
	f := FetcherFunc(func(ctx context.Context, w Window) (Batch, error) {
		windows = append(windows, w)
		return l.Fetch(ctx, w)
	})
	e := newOffsetEngine(1000, 1000)
	cursor := ""
	for range 3 {
		pg, err := e.Page(context.Background(), f, Request{List: "l", After: cursor, Size: 10})
		require.NoError(t, err)
		cursor = pg.IDs[len(pg.IDs)-1]
	}
	// The first page and its look-ahead; then from the cursor's record.
	assert.Equal(t, []Window{{Start: 0, Size: 11}, {Start: 9, Size: 12}, {Start: 19, Size: 12}}, windows)
}

// TestOffsetWalksAreExact: on offset backends that are honest, clamp the
// limit, or ignore it, every walk, client-built cursor and _page request
// is exact, and a clamp is learned (issue 11 in this dialect).
func TestOffsetWalksAreExact(t *testing.T) {
	checkQuirkyWalks(t, rand.New(rand.NewPCG(17, 17)), 120, true)
}

// TestOffsetClampIsLearned: a walk whose windows outgrow the clamp learns
// it once, and then plans within it.
func TestOffsetClampIsLearned(t *testing.T) {
	ids := evenIDs(5000)
	l := backendQuirk{clampAt: 100}.list(ids)
	l.offsets = true
	e := newOffsetEngine(1000, 10000)
	var learned []int
	e.OnLearn = func(_ string, limit int, fixed bool) {
		assert.False(t, fixed)
		learned = append(learned, limit)
	}
	got, pages := walk(t, e, l, 250)
	require.Equal(t, ids, got)
	assert.Equal(t, []int{100}, learned)
	limit, ok := e.pageSizeLimit()
	assert.True(t, ok)
	assert.Equal(t, 100, limit)
	calls, _ := l.counts()
	t.Logf("%d pages of 250 over a clamp of 100: %d calls", pages, calls)
}

// TestOffsetWalkUnderChurn is TestWalkUnderChurn on offset backends, with
// clamps too: no duplicate, ids increase, and every record that existed
// throughout the walk is served.
func TestOffsetWalkUnderChurn(t *testing.T) {
	for seed := range uint64(60) {
		r := rand.New(rand.NewPCG(seed, 1717))
		ids := randomIDs(r, 200+r.IntN(1500), 20)
		l := newOffsetList(ids)
		if r.IntN(2) == 0 {
			l.clampAt = []int{25, 100, 137}[r.IntN(3)]
		}
		deleted := map[int64]bool{}
		var served []int64
		l.before = func(l *memList) {
			for range r.IntN(4) {
				switch r.IntN(4) {
				case 0:
					l.insert(1 + r.Int64N(l.ids[len(l.ids)-1]+50))
				case 1: // right before what was served last
					l.insert(served0(served) - int64(r.IntN(5)))
				default:
					if len(l.ids) > 1 {
						id := l.ids[r.IntN(len(l.ids))]
						if len(served) > 0 && r.IntN(2) == 0 {
							id = served[len(served)-1] + int64(r.IntN(3)) - 1
						}
						l.remove(id)
						deleted[id] = true
					}
				}
			}
		}
		e := newOffsetEngine([]int{25, 31, 50, 1000}[r.IntN(4)], 1+r.IntN(200))
		size := 1 + r.IntN(60)
		cursor := ""
		for {
			pg, err := e.Page(context.Background(), l, Request{List: "l", After: cursor, Size: size})
			require.NoError(t, err, "seed %d", seed)
			served = append(served, parseIDs(pg.IDs)...)
			if !pg.More {
				break
			}
			cursor = pg.IDs[len(pg.IDs)-1]
		}
		require.True(t, slices.IsSorted(served), "seed %d: ids not increasing", seed)
		require.Len(t, slices.Compact(slices.Clone(served)), len(served), "seed %d: duplicate", seed)
		for _, id := range ids {
			if !deleted[id] {
				_, found := slices.BinarySearch(served, id)
				require.True(t, found, "seed %d: record %d existed throughout but was skipped", seed, id)
			}
		}
	}
}

// TestOffsetPageIsASnapshotCut: with the list still during a page, each
// page on an offset backend is exactly the records after its cursor.
func TestOffsetPageIsASnapshotCut(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 17))
	checkSnapshotCuts(t, r, newOffsetList(randomIDs(r, 5000, 40)), newOffsetEngine(1000, 300), 1000)
}
