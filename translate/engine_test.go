package translate

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newEngine(maxPage, indexSize int) *Engine {
	return &Engine{Order: cursor.Numeric, MaxPageSize: maxPage, Index: newIndex(cursor.Numeric, indexSize)}
}

// walk pages through the whole list by cursor and returns the ids served.
func walk(t *testing.T, e *Engine, f Fetcher, size int) (ids []int64, pages int) {
	t.Helper()
	cursor := ""
	for pages = 1; ; pages++ {
		require.Less(t, pages, 1_000_000, "walk does not end")
		pg, err := e.Page(context.Background(), f, Request{List: "l", After: cursor, Size: size})
		require.NoError(t, err)
		ids = append(ids, parseIDs(pg.IDs)...)
		if !pg.More {
			require.LessOrEqual(t, len(pg.IDs), size)
			return ids, pages
		}
		require.Len(t, pg.IDs, size, "only the last page may be short")
		cursor = pg.IDs[len(pg.IDs)-1]
	}
}

func TestPageContract(t *testing.T) {
	ids := evenIDs(100) // 10 .. 1000
	for _, tc := range []struct {
		name    string
		after   string
		offset  int
		size    int
		maxPage int
		want    []int64
		more    bool
	}{
		{name: "first page", size: 3, maxPage: 1000, want: []int64{10, 20, 30}, more: true},
		{name: "existing id", after: "500", size: 2, maxPage: 1000, want: []int64{510, 520}, more: true},
		{name: "missing id", after: "505", size: 2, maxPage: 1000, want: []int64{510, 520}, more: true},
		{name: "below the first", after: "3", size: 2, maxPage: 1000, want: []int64{10, 20}, more: true},
		{name: "negative id", after: "-7", size: 1, maxPage: 1000, want: []int64{10}, more: true},
		{name: "at the last", after: "1000", size: 5, maxPage: 1000, want: nil},
		{name: "past the last", after: "99999999999999999999999", size: 5, maxPage: 1000, want: nil},
		{name: "ends exactly, no empty trailing page", after: "970", size: 3, maxPage: 1000, want: []int64{980, 990, 1000}},
		{name: "one short of the end", after: "960", size: 3, maxPage: 1000, want: []int64{970, 980, 990}, more: true},
		{name: "leading zeros", after: "000500", size: 1, maxPage: 1000, want: []int64{510}, more: true},
		{name: "page larger than backend pages", after: "100", size: 60, maxPage: 25, want: evenIDs(70)[10:70], more: true},
		{name: "whole list in small backend pages", size: 100, maxPage: 25, want: evenIDs(100)},
		{name: "offset page", offset: 20, size: 5, maxPage: 1000, want: []int64{210, 220, 230, 240, 250}, more: true},
		{name: "offset page past the end", offset: 200, size: 5, maxPage: 1000, want: nil},
		{name: "last offset page", offset: 95, size: 5, maxPage: 1000, want: []int64{960, 970, 980, 990, 1000}},
		{name: "offset page over small backend pages", offset: 30, size: 40, maxPage: 25, want: evenIDs(70)[30:], more: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, warm := range []bool{false, true} {
				e := newEngine(tc.maxPage, 1000)
				if warm { // the index learns the whole list first
					walk(t, e, newMemList(ids), 7)
				}
				pg, err := e.Page(context.Background(), newMemList(ids), Request{List: "l", After: tc.after, Offset: tc.offset, Size: tc.size})
				require.NoError(t, err)
				if tc.want == nil {
					assert.Empty(t, pg.IDs)
				} else {
					assert.Equal(t, tc.want, parseIDs(pg.IDs))
				}
				assert.Equal(t, tc.more, pg.More, "More")
			}
		})
	}
}

func TestPageLexicalIDs(t *testing.T) {
	var ids []string
	for i := range 500 {
		ids = append(ids, fmt.Sprintf("k%04x", i*7))
	}
	f := FetcherFunc(func(_ context.Context, w Window) (Batch, error) {
		from := min(w.Start, len(ids))
		return Batch{IDs: ids[from:min(from+w.Size, len(ids))]}, nil
	})
	e := &Engine{Order: cursor.Lexical, MaxPageSize: 100, Index: newIndex(cursor.Lexical, 100)}
	for _, tc := range []struct{ after, first string }{
		{"k0007", "k000e"}, {"k0008", "k000e"}, {"a", "k0000"}, {"k", "k0000"}, {"k00", "k0000"},
	} {
		pg, err := e.Page(context.Background(), f, Request{List: "l", After: tc.after, Size: 3})
		require.NoError(t, err)
		require.NotEmpty(t, pg.IDs)
		assert.Equal(t, tc.first, pg.IDs[0], "after %q", tc.after)
	}
	pg, err := e.Page(context.Background(), f, Request{List: "l", After: "z", Size: 3})
	require.NoError(t, err)
	assert.Empty(t, pg.IDs)
	assert.False(t, pg.More)
}

// FetcherFunc adapts a function to Fetcher, for tests.
type FetcherFunc func(context.Context, Window) (Batch, error)

func (f FetcherFunc) Fetch(ctx context.Context, w Window) (Batch, error) { return f(ctx, w) }

func TestPageRejectsUnusableAnswers(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ids     []string
		order   cursor.Order
		want    string
		setting string
	}{
		{"out of order", []string{"1", "3", "2"}, cursor.Numeric, "ignores backend_sort", "backend_sort"},
		{"descending", []string{"3", "2", "1"}, cursor.Numeric, "sorts ids descending", "backend_sort"},
		{"numbers sorted as strings", []string{"1", "10", "9"}, cursor.Numeric, "set id_order lexical", "id_order"},
		{"duplicate", []string{"1", "1"}, cursor.Numeric, "id_field must name", "id_field"},
		{"not a number", []string{"1", "x"}, cursor.Numeric, "not a whole number", "id_order"},
		{"empty id", []string{""}, cursor.Lexical, "empty", "id_field"},
		// Each hint names a setting that would change the outcome, given
		// the one configured.
		{"numbers sorted as numbers, lexical set", []string{"8", "9", "10"}, cursor.Lexical, "sorts ids as numbers; set id_order numeric", "id_order"},
		{"not UTF-8, lexical set", []string{"a", "b\xff"}, cursor.Lexical, "not valid UTF-8", "id_field"},
		{"text out of order, lexical set", []string{"a", "c", "b"}, cursor.Lexical, "ignores backend_sort", "backend_sort"},
		{"one number two ways", []string{"1", "01"}, cursor.Numeric, "same number written two ways; set id_order lexical", "id_order"},
		{"same text twice, lexical set", []string{"a", "a"}, cursor.Lexical, "id_field must name", "id_field"},
		{"too long, numeric set", []string{strings.Repeat("7", cursor.MaxIDLength+1)}, cursor.Numeric, "set id_field", "id_field"},
		{"too many", []string{"1", "2", "3", "4", "5", "6"}, cursor.Numeric, "6 records for a page of 4", "backend_max_per_page"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := FetcherFunc(func(context.Context, Window) (Batch, error) { return Batch{IDs: tc.ids}, nil })
			e := &Engine{Order: tc.order, MaxPageSize: 4, Index: newIndex(tc.order, 10)}
			_, err := e.Page(context.Background(), f, Request{List: "l", Size: 3})
			var be *BackendError
			require.ErrorAs(t, err, &be)
			assert.Contains(t, err.Error(), tc.want)
			assert.Equal(t, tc.setting, be.Setting)
			if tc.order == cursor.Lexical || tc.setting != "id_order" {
				assert.NotContains(t, err.Error(), "set id_order lexical", "moot: the setting changes nothing")
			}
			if tc.order == cursor.Numeric || tc.setting != "id_order" {
				assert.NotContains(t, err.Error(), "set id_order numeric")
			}
			assert.Zero(t, e.Index.len(), "a bad answer must not reach the index")
		})
	}
}

func TestPageCallLimit(t *testing.T) {
	// Quadratic ids defeat the guesses, so a cold search takes many calls.
	l := newMemList(skewedIDs(100000))
	e := &Engine{Order: cursor.Numeric, MaxPageSize: 100, MaxCalls: 3}
	_, err := e.Page(context.Background(), l, Request{List: "l", After: "2500000000", Size: 10})
	var ce *CallLimitError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, 3, ce.Calls)
	calls, _ := l.counts()
	assert.Equal(t, 3, calls)
}

func TestWalkIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{1, 2, 10, 99, 100, 101, 250} {
		for _, maxPage := range []int{25, 26, 100, 1000} {
			ids := randomIDs(r, 1+r.IntN(600), 30)
			e := newEngine(maxPage, 64)
			got, _ := walk(t, e, newMemList(ids), size)
			require.Equal(t, ids, got, "size %d max %d", size, maxPage)
		}
	}
}

// TestWalkUnderChurn checks the consistency guarantee: while records are
// inserted and deleted between backend calls (before, at and after the
// cursor), a walk has no duplicate, strictly increasing ids, and every
// record that existed throughout appears.
func TestWalkUnderChurn(t *testing.T) {
	for seed := range uint64(60) {
		r := rand.New(rand.NewPCG(seed, 99))
		ids := randomIDs(r, 200+r.IntN(800), 20)
		l := newMemList(ids)
		size := 1 + r.IntN(40)
		maxPage := []int{25, 31, 50, 1000}[r.IntN(4)]
		initial := slices.Clone(ids)
		deleted := map[int64]bool{}
		var served []int64
		l.before = func(l *memList) {
			for range r.IntN(4) {
				maxID := l.ids[len(l.ids)-1] + 50
				switch r.IntN(5) {
				case 0, 1: // insert anywhere, often right before what was served last
					if len(served) > 0 && r.IntN(2) == 0 {
						l.insert(served[len(served)-1] - int64(r.IntN(5)))
					} else {
						l.insert(1 + r.Int64N(maxID))
					}
				case 2: // a burst of inserts before the cursor
					for range 20 {
						l.insert(1 + r.Int64N(max(1, served0(served))))
					}
				default: // delete, often the cursor record itself or its neighbours
					var id int64
					if len(served) > 0 && r.IntN(2) == 0 {
						id = served[len(served)-1] + int64(r.IntN(3)) - 1
					} else if len(l.ids) > 0 {
						id = l.ids[r.IntN(len(l.ids))]
					}
					l.remove(id)
					deleted[id] = true
				}
			}
		}
		e := newEngine(maxPage, 1+r.IntN(200))
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
		for _, id := range initial {
			if !deleted[id] {
				_, found := slices.BinarySearch(served, id)
				require.True(t, found, "seed %d: record %d existed throughout but was skipped", seed, id)
			}
		}
	}
}

func served0(served []int64) int64 {
	if len(served) == 0 {
		return 1
	}
	return served[len(served)-1]
}

// TestPageIsASnapshotCut checks each page on its own: when the list does
// not change during the page, the page equals the records after the cursor.
func TestPageIsASnapshotCut(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	checkSnapshotCuts(t, r, newMemList(randomIDs(r, 5000, 40)), newEngine(1000, 300), 2000)
}

// checkSnapshotCuts changes l between pages, never during one, and checks
// that each of rounds pages at a random cursor and size is exactly the
// records after the cursor.
func checkSnapshotCuts(t *testing.T, r *rand.Rand, l *memList, e *Engine, rounds int) {
	t.Helper()
	for range rounds {
		for range r.IntN(20) {
			if r.IntN(2) == 0 {
				l.insert(1 + r.Int64N(5000*40))
			} else if n := len(l.ids); n > 0 {
				l.remove(l.ids[r.IntN(n)])
			}
		}
		cursor := 1 + r.Int64N(5000*40)
		size := 1 + r.IntN(120)
		pg, err := e.Page(context.Background(), l, Request{List: "l", After: strconv.FormatInt(cursor, 10), Size: size})
		require.NoError(t, err)
		want, more := after(l.snapshot(), cursor, size)
		require.Equal(t, want, parseIDs(pg.IDs), "cursor %d size %d", cursor, size)
		require.Equal(t, more, pg.More)
	}
}

func TestSequentialWalkCost(t *testing.T) {
	for _, tc := range []struct{ n, size, maxPage int }{
		{100000, 10, 1000}, {100000, 100, 1000}, {20000, 1000, 1000}, {5000, 7, 50},
	} {
		t.Run(fmt.Sprintf("n=%d/size=%d/max=%d", tc.n, tc.size, tc.maxPage), func(t *testing.T) {
			l := newMemList(evenIDs(tc.n))
			e := newEngine(tc.maxPage, 100000)
			ids, pages := walk(t, e, l, tc.size)
			require.Len(t, ids, tc.n)
			calls, fetched := l.counts()
			perPage := float64(calls) / float64(pages)
			if 2*tc.size <= tc.maxPage {
				assert.Equal(t, 1.0, perPage, "backend calls per page")
			} else {
				// A page of the backend's largest size cannot also hold the
				// cursor record and the lookahead: two calls, stitched.
				assert.LessOrEqual(t, perPage, 2.0, "backend calls per page")
			}
			t.Logf("%.3f calls per page", perPage)
			assert.LessOrEqual(t, float64(fetched)/float64(tc.n), 2.0, "records fetched per record served")
		})
	}
}

func log2Ceil(x float64) int { return int(math.Ceil(math.Log2(x))) }

// TestCursorCost holds the cost targets of one cursor page in N = 100,000
// records, at fixed and random positions, on ids spread in several ways:
// at most ceil(log2(N/perPage)) + 2 backend calls once the index knows
// the list's extent, and at most twice that + 2 from a cold start.
func TestCursorCost(t *testing.T) {
	const n = 100000
	for _, data := range costData(n) {
		for _, size := range []int{10, 100} {
			t.Run(fmt.Sprintf("%s/perPage=%d", data.name, size), func(t *testing.T) {
				bound := log2Ceil(float64(n) / float64(size))
				l := newMemList(data.ids)
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
				cursors = append(cursors, -5, 0, last, last+1, last*1000) // before the first, at and past the last
				maxCold, maxWarm := 0, 0
				for _, cursor := range cursors {
					// cold: a fresh index knows nothing, not even the end
					e := newEngine(1000, 100000)
					pg := pageAt(t, e, l, cursor, size)
					maxCold = max(maxCold, pg.Calls)
					// warm: the index knows the list's extent but not the cursor
					e = newEngine(1000, 100000)
					pageAt(t, e, l, last, size)
					pg = pageAt(t, e, l, cursor, size)
					maxWarm = max(maxWarm, pg.Calls)
				}
				assert.LessOrEqual(t, maxCold, 2*bound+2, "cold cursor calls")
				assert.LessOrEqual(t, maxWarm, bound+2, "warm cursor calls")
				t.Logf("max calls: cold %d (bound %d), warm %d (bound %d)", maxCold, 2*bound+2, maxWarm, bound+2)
			})
		}
	}
}

// costData returns n ids spread in ways that help or defeat the guesses.
func costData(n int) []struct {
	name string
	ids  []int64
} {
	r := rand.New(rand.NewPCG(3, 4))
	sparseThenDense := make([]int64, n)
	denseThenSparse := make([]int64, n)
	var a, b int64
	for i := range n {
		gapA, gapB := int64(1), int64(1000)
		if i < n/10 {
			gapA, gapB = gapB, gapA
		}
		a += gapA
		b += gapB
		sparseThenDense[i], denseThenSparse[i] = a, b
	}
	return []struct {
		name string
		ids  []int64
	}{
		{"even", evenIDs(n)},
		{"random gaps", randomIDs(r, n, 100)},
		{"skewed", skewedIDs(n)},
		{"sparse then dense", sparseThenDense},
		{"dense then sparse", denseThenSparse},
	}
}

// skewedIDs grows quadratically, which defeats plain interpolation.
func skewedIDs(n int) []int64 {
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(i+1) * int64(i+1)
	}
	return ids
}

func pageAt(t *testing.T, e *Engine, l *memList, cursor int64, size int) *Page {
	t.Helper()
	pg, err := e.Page(context.Background(), l, Request{List: "l", After: strconv.FormatInt(cursor, 10), Size: size})
	require.NoError(t, err)
	l.mu.Lock()
	want, more := after(l.ids, cursor, size)
	l.mu.Unlock()
	require.Equal(t, want, parseIDs(pg.IDs))
	require.Equal(t, more, pg.More)
	return pg
}

// TestRandomColdCursorsAverage: over 1,000 hand-built cursors at random
// places of evenly spread numeric ids, each met from a cold start (a fresh
// index that knows nothing of the list, not even its end), a page costs at
// most 2 backend calls on average: a fresh gateway instance behind a
// balancer meets such cursors all the time. With one index shared by all of them, as
// one gateway serving clients that jump around would have, it is less.
func TestRandomColdCursorsAverage(t *testing.T) {
	const n, size, cursors = 100000, 10, 1000
	r := rand.New(rand.NewPCG(5, 6))
	l := newMemList(evenIDs(n))
	shared := newEngine(1000, 100000)
	cold, warm := 0, 0
	for range cursors {
		cursor := 1 + r.Int64N(int64(n)*10)
		cold += pageAt(t, newEngine(1000, 100000), l, cursor, size).Calls
		warm += pageAt(t, shared, l, cursor, size).Calls
	}
	t.Logf("average calls per random cursor: %.2f cold, %.2f with a shared index", float64(cold)/cursors, float64(warm)/cursors)
	assert.LessOrEqual(t, float64(cold)/cursors, 2.0, "cold start")
	assert.LessOrEqual(t, warm, cold, "a shared index never costs more")
}

func TestPageSizeTooSmallFailsCleanly(t *testing.T) {
	// Every page size up to 3 divides offset 6, so no call can hold the
	// records at offsets 5 and 6 together.
	l := newMemList(evenIDs(100))
	e := &Engine{Order: cursor.Numeric, MaxPageSize: 3}
	_, err := e.Page(context.Background(), l, Request{List: "l", Offset: 3, Size: 10})
	require.ErrorIs(t, err, ErrPageSizeTooSmall)
}

// TestCursorPagesUnderChange drives cursors from a cold or a stale index
// (galloping, leaping, bisecting, relocating) while the list changes
// between every two backend calls, and checks each page on its own: ids
// ascend past the cursor, a page that says more follows is full, and no
// record that existed throughout the page's calls is left out before the
// page's last id, or at all when the page says it is the last.
func TestCursorPagesUnderChange(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for iter := range 400 {
		n := 200 + r.IntN(3000)
		var ids []int64
		switch iter % 3 {
		case 0:
			ids = randomIDs(r, n, 30)
		case 1:
			ids = skewedIDs(n)
		default:
			ids = evenIDs(n)
		}
		l := newMemList(ids)
		deleted := map[int64]bool{}
		maxID := ids[len(ids)-1]
		l.before = func(l *memList) {
			for range r.IntN(4) {
				switch r.IntN(8) {
				case 0, 1, 2:
					l.insert(1 + r.Int64N(maxID+50))
				case 3: // a burst low in the list shifts every offset after it
					for range 1 + r.IntN(20) {
						l.insert(1 + r.Int64N(maxID/4+1))
					}
				default:
					if len(l.ids) > 1 {
						id := l.ids[r.IntN(len(l.ids))]
						l.remove(id)
						deleted[id] = true
					}
				}
			}
		}
		e := newEngine([]int{25, 40, 1000}[r.IntN(3)], []int{0, 8, 1000}[r.IntN(3)])
		size := 1 + r.IntN(60)
		for range 3 { // the same engine: a cold start, then a stale index
			cursor := r.Int64N(maxID + 100)
			before := l.snapshot()
			clear(deleted)
			pg, err := e.Page(context.Background(), l, Request{List: "l", After: strconv.FormatInt(cursor, 10), Size: size})
			require.NoError(t, err, "iteration %d", iter)
			got := parseIDs(pg.IDs)
			for i, id := range got {
				require.Greater(t, id, cursor, "iteration %d", iter)
				if i > 0 {
					require.Less(t, got[i-1], id, "iteration %d", iter)
				}
			}
			if pg.More {
				require.Len(t, got, size, "iteration %d: a page with more after it is full", iter)
			}
			for _, id := range before {
				if id <= cursor || deleted[id] || pg.More && id > got[len(got)-1] {
					continue
				}
				_, found := slices.BinarySearch(got, id)
				require.True(t, found, "iteration %d: %d existed throughout but is not on the page after %d", iter, id, cursor)
			}
		}
	}
}
