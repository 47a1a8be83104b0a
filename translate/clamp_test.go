package translate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// backendQuirk is how a test backend bends the page-size contract.
type backendQuirk struct {
	name           string
	clampAt, fixed int
}

func randomQuirk(r *rand.Rand, maxPage int) backendQuirk {
	switch r.IntN(4) {
	case 0:
		return backendQuirk{name: "honest"}
	case 1:
		c := []int{25, 100, 137, 500}[r.IntN(4)]
		return backendQuirk{name: fmt.Sprintf("clamp %d", c), clampAt: min(c, maxPage)}
	case 2:
		c := MinBackendPageSize + r.IntN(maxPage-MinBackendPageSize+1)
		return backendQuirk{name: fmt.Sprintf("clamp %d", c), clampAt: c}
	}
	p := MinBackendPageSize + r.IntN(min(maxPage, 200)-MinBackendPageSize+1)
	return backendQuirk{name: fmt.Sprintf("ignores _perPage, pages of %d", p), fixed: p}
}

func (q backendQuirk) list(ids []int64) *memList {
	l := newMemList(ids)
	l.clampAt, l.fixed = q.clampAt, q.fixed
	return l
}

// TestClampedWalksAreExact is the property of issue 11: whatever limit a
// backend clamps _perPage to, or whatever page size it sends instead, no
// cursor walk is short and every page, by cursor or by offset, is exactly
// the records it names: sequential walks, client-built cursors and _page
// requests, at page sizes below, at and above the limit.
func TestClampedWalksAreExact(t *testing.T) {
	checkQuirkyWalks(t, rand.New(rand.NewPCG(11, 11)), 150, false)
}

// checkQuirkyWalks runs iterations of random backend quirks (honest,
// clamping, ignoring _perPage), paged by number or, with offsets, by
// offset: every cursor walk, client-built cursor and _page request at
// sizes below, at and above the limit is exact, and a clamp is learned.
func checkQuirkyWalks(t *testing.T, r *rand.Rand, iterations int, offsets bool) {
	t.Helper()
	for iter := range iterations {
		maxPage := []int{100, 250, 1000}[r.IntN(3)]
		q := randomQuirk(r, maxPage)
		ids := randomIDs(r, 1+r.IntN(2500), 20)
		limit := max(q.clampAt, q.fixed)
		sizes := []int{1 + r.IntN(40), 1 + r.IntN(300)}
		if limit > 0 {
			sizes = append(sizes, limit-1, limit, limit+1)
		}
		e := newEngine(maxPage, []int{0, 16, 10000}[r.IntN(3)])
		e.Offsets = offsets
		l := q.list(ids)
		l.offsets = offsets
		name := fmt.Sprintf("iteration %d: %s, backend_max_per_page %d, %d records", iter, q.name, maxPage, len(ids))
		for _, size := range sizes {
			got, _ := walk(t, e, l, size)
			require.Equal(t, ids, got, "%s: cursor walk at %d per page", name, size)
			for range 3 { // client-built cursors
				cursor := ids[r.IntN(len(ids))] + r.Int64N(2) - 1
				pg, err := e.Page(context.Background(), l, Request{List: "l", After: fmt.Sprint(cursor), Size: size})
				require.NoError(t, err, name)
				want, more := after(ids, cursor, size)
				require.Equal(t, want, parseIDs(pg.IDs), "%s: after %d, %d per page", name, cursor, size)
				require.Equal(t, more, pg.More, name)
			}
			for range 3 { // _page requests, past the end too
				page := 1 + r.IntN(len(ids)/size+2)
				pg, err := e.Page(context.Background(), l, Request{List: "l", Offset: (page - 1) * size, Size: size})
				require.NoError(t, err, name)
				from := min((page-1)*size, len(ids))
				require.Equal(t, ids[from:min(from+size, len(ids))], parseIDs(pg.IDs), "%s: _page %d of %d", name, page, size)
			}
		}
		got, learned := e.pageSizeLimit()
		switch {
		case q.clampAt > 0 && learned:
			assert.Equal(t, q.clampAt, got, name)
		case q.fixed > 0 && learned:
			assert.LessOrEqual(t, got, q.fixed, name)
		case q.clampAt == 0 && q.fixed == 0:
			assert.False(t, learned, "%s: an honest backend taught a limit of %d", name, got)
		}
	}
}

// TestClampedWalksUnderChurn is TestWalkUnderChurn on clamping backends:
// no duplicate, ids increase, and every record that existed throughout
// the walk is served.
func TestClampedWalksUnderChurn(t *testing.T) {
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 1111))
		q := randomQuirk(r, 1000)
		if q.fixed > 0 {
			// At the edges of pages the backend fixes no answer overlaps
			// the next: nothing proves the list did not move between the
			// two calls (see docs/backends.md, Verify).
			q = backendQuirk{name: "clamp 100", clampAt: 100}
		}
		ids := randomIDs(r, 300+r.IntN(1500), 20)
		l := q.list(ids)
		deleted := map[int64]bool{}
		var served []int64
		l.before = func(l *memList) {
			for range r.IntN(3) {
				if r.IntN(2) == 0 {
					l.insert(1 + r.Int64N(l.ids[len(l.ids)-1]+50))
				} else if len(l.ids) > 1 {
					id := l.ids[r.IntN(len(l.ids))]
					l.remove(id)
					deleted[id] = true
				}
			}
		}
		e := newEngine(1000, 1+r.IntN(500))
		size := []int{7, 60, 99, 100, 101, 250}[r.IntN(6)]
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
		require.True(t, slices.IsSorted(served), "seed %d %s: ids not increasing", seed, q.name)
		require.Len(t, slices.Compact(slices.Clone(served)), len(served), "seed %d: duplicate", seed)
		for _, id := range ids {
			if !deleted[id] {
				_, found := slices.BinarySearch(served, id)
				require.True(t, found, "seed %d %s, %d per page: record %d existed throughout but was skipped", seed, q.name, size, id)
			}
		}
	}
}

// TestClampLearningCost: once learned, a clamp costs what configuring it
// would, and learning it costs at most one call more than that.
func TestClampLearningCost(t *testing.T) {
	for _, tc := range []struct {
		clampAt, size int
	}{{100, 10}, {100, 100}, {137, 50}, {500, 200}, {100, 250}} {
		t.Run(fmt.Sprintf("clamp=%d/size=%d", tc.clampAt, tc.size), func(t *testing.T) {
			ids := evenIDs(20000)
			var learnedLimits []int
			e := newEngine(1000, 100000)
			e.OnLearn = func(_ string, limit int, fixed bool) {
				assert.False(t, fixed)
				learnedLimits = append(learnedLimits, limit)
			}
			l := backendQuirk{clampAt: tc.clampAt}.list(ids)
			got, pages := walk(t, e, l, tc.size)
			require.Equal(t, ids, got)
			calls, _ := l.counts()

			configured := newEngine(tc.clampAt, 100000)
			honest := newMemList(ids)
			_, pages2 := walk(t, configured, honest, tc.size)
			want, _ := honest.counts()
			require.Equal(t, pages2, pages)
			assert.LessOrEqual(t, calls, want+1, "learning costs at most one call")
			limit, learned := e.pageSizeLimit()
			if 2*tc.size+2 > tc.clampAt {
				// The walk's windows outgrow the clamp: it must be met.
				assert.Equal(t, []int{tc.clampAt}, learnedLimits, "learned once")
				assert.Equal(t, tc.clampAt, limit)
				assert.True(t, learned)
			} else {
				assert.LessOrEqual(t, len(learnedLimits), 1, "learned at most once")
				assert.True(t, !learned || limit == tc.clampAt)
			}

			// Steady state: a second walk costs exactly the configured one.
			before, _ := l.counts()
			walk(t, e, l, tc.size)
			after, _ := l.counts()
			configured = newEngine(tc.clampAt, 100000)
			honest = newMemList(ids)
			walk(t, configured, honest, tc.size)
			walk(t, configured, honest, tc.size)
			both, _ := honest.counts()
			assert.Equal(t, both-want, after-before, "steady state costs what the configured limit costs")
			t.Logf("clamp %d, %d per page: %d calls learning, %d configured", tc.clampAt, tc.size, calls, want)
		})
	}
}

// TestShortListsDoNotShrinkTheLimit: answers short because the list is
// short (a client's filter leaving a few records) never teach a limit.
func TestShortListsDoNotShrinkTheLimit(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	e := newEngine(1000, 1000)
	for range 300 {
		l := newMemList(randomIDs(r, r.IntN(400), 10))
		size := 1 + r.IntN(300)
		if r.IntN(2) == 0 {
			walk(t, e, l, size)
		} else {
			_, err := e.Page(context.Background(), l, Request{List: fmt.Sprint(r.IntN(5)), Offset: r.IntN(300), Size: size})
			require.NoError(t, err)
		}
	}
	limit, learned := e.pageSizeLimit()
	assert.Equal(t, 1000, limit)
	assert.False(t, learned)
}

// TestPageSizeLimitIsSafeForConcurrentUse runs walkers on a clamping
// backend while others read the limit (run with -race).
func TestPageSizeLimitIsSafeForConcurrentUse(t *testing.T) {
	ids := evenIDs(3000)
	e := newEngine(1000, 1000)
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := backendQuirk{clampAt: 137}.list(ids)
			cursor := ""
			var got []int64
			for {
				pg, err := e.Page(context.Background(), l, Request{List: "l", After: cursor, Size: 50 + 40*w})
				if !assert.NoError(t, err) {
					return
				}
				got = append(got, parseIDs(pg.IDs)...)
				e.pageSizeLimit()
				if !pg.More {
					break
				}
				cursor = pg.IDs[len(pg.IDs)-1]
			}
			assert.Equal(t, ids, got)
		}()
	}
	wg.Wait()
	limit, learned := e.pageSizeLimit()
	assert.Equal(t, 137, limit)
	assert.True(t, learned)
}

// TestLongAnswers: a backend that sends more than asked is served exactly
// from offset 0, learned as one that ignores _perPage, and refused with
// the setting to change past backend_max_per_page.
func TestLongAnswers(t *testing.T) {
	ids := evenIDs(500)
	l := backendQuirk{fixed: 40}.list(ids)
	e := newEngine(1000, 1000)
	var fixed []int
	e.OnLearn = func(_ string, limit int, f bool) {
		assert.True(t, f)
		fixed = append(fixed, limit)
	}
	pg, err := e.Page(context.Background(), l, Request{List: "l", Offset: 120, Size: 10})
	require.NoError(t, err)
	assert.Equal(t, ids[120:130], parseIDs(pg.IDs))
	assert.Equal(t, []int{40}, fixed)

	small := newEngine(30, 1000)
	_, err = small.Page(context.Background(), l, Request{List: "l", Size: 10})
	var be *BackendError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, "backend_max_per_page", be.Setting)
	assert.Contains(t, err.Error(), "set backend_max_per_page 40 or more")
}

// TestClampedPagesReleaseOnlyWhatTheyDoNotUse walks backends that clamp
// or ignore _perPage with a fetcher that scribbles over released answers:
// the asked-again and re-read answers are released after their last use,
// and no answer a page's records come from is.
func TestClampedPagesReleaseOnlyWhatTheyDoNotUse(t *testing.T) {
	ids := evenIDs(3000)
	for _, q := range []backendQuirk{{name: "clamp 100", clampAt: 100}, {name: "fixed 40", fixed: 40}, {name: "clamp 137", clampAt: 137}} {
		t.Run(q.name, func(t *testing.T) {
			e := newEngine(1000, 1000)
			base := q.list(ids)
			for _, size := range []int{7, 39, 40, 41, 150, 400} {
				cursor := ""
				var got []int64
				for {
					l := &releasingList{memList: base} // call numbers are per page
					pg, err := e.Page(context.Background(), l, Request{List: "l", After: cursor, Size: size})
					require.NoError(t, err)
					got = append(got, parseIDs(pg.IDs)...)
					for _, rec := range pg.Records {
						call, err := strconv.Atoi(string(rec))
						require.NoError(t, err)
						require.False(t, l.released[call], "%s: call %d gave the page records but was released", q.name, call)
					}
					require.Zero(t, l.twice)
					if !pg.More {
						break
					}
					cursor = pg.IDs[len(pg.IDs)-1]
				}
				require.Equal(t, ids, got, "%s at %d per page", q.name, size)
			}
		})
	}
}
