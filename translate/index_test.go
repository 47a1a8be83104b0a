package translate

import (
	"context"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/helpdesk-gateway/gateway/locate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newIndex returns an index holding at most limit samples of at most
// limit lists, in a MemoryStore of its own (read-ahead off, bounded as an
// Engine's own store), as the tests' engines take it; limit < 1 makes an
// index that remembers nothing. An Engine whose Lists is unset keeps its
// lists in that store too. A gateway's endpoints take theirs from the
// store they share (MemoryStore.Index).
func newIndex(order cursor.Order, limit int) *Index {
	return NewMemoryStore(order, 0, defaultListMemory).Index(limit)
}

// len returns the number of samples the index holds.
func (x *Index) len() int {
	_, samples := x.Stats()
	return samples
}

func TestIndexStaysBounded(t *testing.T) {
	for _, limit := range []int{1, 2, 10, 500} {
		e := newEngine(1000, limit)
		l := newMemList(evenIDs(20000))
		walk(t, e, l, 10)
		// other lists compete for the same budget
		for i := range 20 {
			_, err := e.Page(context.Background(), l, Request{List: "other" + strconv.Itoa(i), After: "5005", Size: 10})
			require.NoError(t, err)
		}
		assert.LessOrEqual(t, e.Index.len(), max(limit, 2), "limit %d", limit)
	}
	off := &Engine{Order: cursor.Numeric, MaxPageSize: 1000, Index: newIndex(cursor.Numeric, -1)}
	walk(t, off, newMemList(evenIDs(500)), 10)
	assert.Zero(t, off.Index.len())
}

func TestIndexKeepsOrderAndDropsStaleSamples(t *testing.T) {
	x := newIndex(cursor.Numeric, 100)
	x.learn("l", []locate.Sample{{Off: 0, ID: "10"}, {Off: 9, ID: "100"}}, 10, -1)
	x.learn("l", []locate.Sample{{Off: 20, ID: "200"}, {Off: 29, ID: "290"}}, 30, -1)
	// The list shifted: 150 now sits where 200 was seen. Samples whose
	// offsets contradict the fresh answer go.
	x.learn("l", []locate.Sample{{Off: 20, ID: "150"}, {Off: 25, ID: "180"}}, 26, -1)
	p := x.held("l")
	for i := 1; i < len(p.samples); i++ {
		assert.Less(t, cursor.Numeric.Compare(p.samples[i-1].ID, p.samples[i].ID), 0)
		assert.Less(t, p.samples[i-1].Off, p.samples[i].Off)
	}
	assert.NotContains(t, p.samples, locate.Sample{Off: 20, ID: "200"})
	h := x.lookup("l", "160")
	assert.Equal(t, locate.Sample{Off: 20, ID: "150"}, h.Lo)
	// A short answer tells where the list ends, and samples past it go.
	x.learn("l", []locate.Sample{{Off: 5, ID: "60"}}, 6, 6)
	assert.Equal(t, 6, x.lookup("l", "1").End)
	for _, s := range x.held("l").samples {
		assert.Less(t, s.Off, 6)
	}
}

// TestConcurrentWalkersShareOneIndex runs walkers in parallel on one engine
// while the list changes; run under -race. Every walk keeps the guarantee.
func TestConcurrentWalkersShareOneIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	ids := randomIDs(r, 3000, 20)
	l := newMemList(ids)
	var deleted sync.Map
	l.before = func(l *memList) { // called under l.mu
		if r.IntN(3) == 0 {
			l.insert(1 + r.Int64N(ids[len(ids)-1]))
		}
		if r.IntN(3) == 0 && len(l.ids) > 0 {
			id := l.ids[r.IntN(len(l.ids))]
			l.remove(id)
			deleted.Store(id, true)
		}
	}
	e := newEngine(100, 500)
	var wg sync.WaitGroup
	walks := make([][]int64, 8)
	for w := range walks {
		wg.Go(func() {
			cursor := ""
			for {
				pg, err := e.Page(context.Background(), l, Request{List: "l", After: cursor, Size: 5 + w*7})
				if !assert.NoError(t, err) {
					return
				}
				walks[w] = append(walks[w], parseIDs(pg.IDs)...)
				if !pg.More {
					return
				}
				cursor = pg.IDs[len(pg.IDs)-1]
			}
		})
	}
	wg.Wait()
	for w, got := range walks {
		for i := 1; i < len(got); i++ {
			require.Less(t, got[i-1], got[i], "walk %d", w)
		}
		for _, id := range ids {
			if _, gone := deleted.Load(id); !gone {
				_, found := slices.BinarySearch(got, id)
				require.True(t, found, "walk %d skipped %d", w, id)
			}
		}
	}
}

// TestIndexBoundsListsNotOnlySamples checks that lists that hold no sample
// (they ended empty) count against the limit too: a client sending a new
// query that selects nothing with every request must not grow the index.
func TestIndexBoundsListsNotOnlySamples(t *testing.T) {
	x := newIndex(cursor.Numeric, 100)
	for i := range 10000 {
		x.learn("/calls?q="+strconv.Itoa(i), nil, 0, 0)
	}
	assert.LessOrEqual(t, len(x.heldLists()), 100)
	assert.Equal(t, len(x.heldLists()), x.lru.Len())
	assert.Equal(t, 0, x.lookup("/calls?q=9999", "5").End, "the newest list is kept")
}

func TestIndexForgetsTheLeastRecentlyUsedList(t *testing.T) {
	x := newIndex(cursor.Numeric, 4)
	x.learn("a", []locate.Sample{{Off: 0, ID: "1"}, {Off: 9, ID: "10"}}, 10, -1)
	x.learn("b", []locate.Sample{{Off: 0, ID: "1"}, {Off: 9, ID: "10"}}, 10, -1)
	x.lookup("a", "5") // a is now used more recently than b
	x.learn("c", []locate.Sample{{Off: 0, ID: "1"}, {Off: 9, ID: "10"}}, 10, -1)
	assert.True(t, x.lookup("a", "5").HasLo, "a was used last, so kept")
	assert.False(t, x.lookup("b", "5").HasLo, "b was least recently used")
	assert.True(t, x.lookup("c", "5").HasLo)
	assert.Equal(t, 4, x.len())
}

// BenchmarkIndexNewListWhenFull is a client sending a new query with every
// request to a full index: each learn forgets the least recently used list.
func BenchmarkIndexNewListWhenFull(b *testing.B) {
	x := newIndex(cursor.Numeric, 100000)
	run := []locate.Sample{{Off: 0, ID: "1"}, {Off: 10, ID: "11"}}
	for i := range 60000 {
		x.learn("/calls?q="+strconv.Itoa(i), run, 11, -1)
	}
	names := make([]string, b.N)
	for i := range names {
		names[i] = "/calls?new=" + strconv.Itoa(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		x.learn(names[i], run, 11, -1)
	}
}

// TestIndexStats checks the counts the admin endpoint shows against what
// the index holds, through learning, trimming at a list's end, forgetting
// lists and thinning.
func TestIndexStats(t *testing.T) {
	held := func(x *Index) (lists, samples int) {
		held := x.heldLists()
		for _, p := range held {
			samples += len(p.samples)
		}
		return len(held), samples
	}
	for _, tc := range []struct {
		name  string
		limit int
		learn func(x *Index)
		lists int
	}{
		{"empty", 10, func(*Index) {}, 0},
		{"two lists", 100, func(x *Index) {
			x.learn("a", []locate.Sample{{Off: 0, ID: "1"}, {Off: 9, ID: "10"}}, 10, -1)
			x.learn("b", []locate.Sample{{Off: 0, ID: "1"}, {Off: 4, ID: "5"}, {Off: 9, ID: "10"}}, 10, -1)
		}, 2},
		{"an end trims samples", 100, func(x *Index) {
			x.learn("a", []locate.Sample{{Off: 0, ID: "1"}, {Off: 9, ID: "10"}, {Off: 19, ID: "20"}}, 20, -1)
			x.learn("a", nil, 0, 10)
		}, 1},
		{"an empty list counts", 100, func(x *Index) { x.learn("a", nil, 0, 0) }, 1},
		{"lists forgotten", 3, func(x *Index) {
			for i := range 10 {
				x.learn(strconv.Itoa(i), []locate.Sample{{Off: 0, ID: "1"}}, 1, -1)
			}
		}, 3},
		{"one list thinned", 4, func(x *Index) {
			run := make([]locate.Sample, 10)
			for i := range run {
				run[i] = locate.Sample{Off: i, ID: strconv.Itoa(i + 1)}
			}
			x.learn("a", run, 10, -1)
		}, 1},
		{"off", -1, func(x *Index) { x.learn("a", []locate.Sample{{Off: 0, ID: "1"}}, 1, -1) }, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := newIndex(cursor.Numeric, tc.limit)
			tc.learn(x)
			lists, samples := x.Stats()
			wantLists, wantSamples := held(x)
			assert.Equal(t, tc.lists, lists)
			assert.Equal(t, wantLists, lists)
			assert.Equal(t, wantSamples, samples)
			assert.LessOrEqual(t, samples, max(tc.limit, 2))
		})
	}
	var none *Index
	lists, samples := none.Stats()
	assert.Zero(t, lists+samples, "a nil index holds nothing")
}
