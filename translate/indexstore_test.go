package translate

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/helpdesk-gateway/gateway/liststore"
	"github.com/helpdesk-gateway/gateway/locate"
)

// One place per list identity: the position index's samples live in the
// list's object in the store, under its one key and its one bound.

// TestIndexWithinTheStoresBound: thousands of identities with 8 KiB names
// each learn a run of long ids. The store counts every sample with its id,
// so its bytes, and the heap it holds, stay within its memory however
// generous index_size is; a list the store evicts takes its samples along,
// and the index's counts follow.
func TestIndexWithinTheStoresBound(t *testing.T) {
	const (
		lists   = 2000
		samples = 200
		memory  = 1 << 20
		slack   = 256 << 10 // the test's own
	)
	pad := strings.Repeat("x", 8<<10)
	run := make([]locate.Sample, samples)
	for i := range run {
		run[i] = locate.Sample{Off: i, ID: fmt.Sprintf("%032d", i+1)}
	}
	s := trustedStore(cursor.Lexical, 0, memory)
	x := s.Index(1 << 26)
	name := func(i int) string { return fmt.Sprintf("/calls?q=%s&n=%d", pad, i) }
	before := liveHeap()
	highest := int64(0)
	for i := range lists {
		x.learn(name(i), run, samples, -1)
		highest = max(highest, s.Stats().Bytes)
	}
	rise := liveHeap() - before
	st := s.Stats()
	t.Logf("heap rose by %d KiB for a bound of %d KiB; the store holds %d lists in %d KiB",
		rise>>10, memory>>10, st.Lists, st.Bytes>>10)
	assert.LessOrEqual(t, highest, int64(memory), "the store's bytes, all along")
	assert.LessOrEqual(t, rise, int64(memory+slack), "the heap the store holds")
	assert.Less(t, st.Lists, lists, "lists were evicted for memory")

	assert.Nil(t, x.held(name(0)), "the first list's samples left with it")
	assert.False(t, x.lookup(name(0), run[5].ID).HasLo)
	newest := x.held(name(lists - 1))
	require.NotNil(t, newest, "the list in use is kept")
	assert.Len(t, newest.samples, samples)

	heldLists, heldSamples := 0, 0
	for _, p := range x.heldLists() {
		heldLists++
		heldSamples += len(p.samples)
	}
	gotLists, gotSamples := x.Stats()
	assert.Equal(t, heldLists, gotLists, "the index counts the lists the store kept")
	assert.Equal(t, heldSamples, gotSamples)
	assert.Equal(t, st.Lists, gotLists, "each list the store holds has its samples")
	runtime.KeepAlive(x)
}

// TestIndexThinsTheListInUseToItsBound: a list whose samples alone would
// pass the store's memory keeps half of them at a time, never its ends.
func TestIndexThinsTheListInUseToItsBound(t *testing.T) {
	const memory = 16 << 10
	s := trustedStore(cursor.Numeric, 0, memory)
	x := s.Index(1 << 26)
	run := make([]locate.Sample, 2000)
	for i := range run {
		run[i] = locate.Sample{Off: i, ID: fmt.Sprint(10 * (i + 1))}
	}
	x.learn("l", run, len(run), -1)
	assert.LessOrEqual(t, s.Stats().Bytes, int64(memory))
	p := x.held("l")
	require.NotNil(t, p)
	assert.Less(t, len(p.samples), len(run))
	assert.Equal(t, run[0], p.samples[0])
	assert.Equal(t, run[len(run)-1], p.samples[len(p.samples)-1])
	assert.Equal(t, len(p.samples), x.len())
}

// TestIndexKeysListsInFull: the index used to know a list by a 64-bit
// hash of its name, and two names sharing one shared samples. The samples
// now hang off the list's object, found by the name in full: two names
// that differ only in their last byte, after 8 KiB, are apart, and each
// object is its name's. (A hash collision cannot be made on purpose: the
// old seed was random; what the test shows is the key.)
func TestIndexKeysListsInFull(t *testing.T) {
	pad := strings.Repeat("q", 8<<10)
	a, b := "/calls?q="+pad+"a", "/calls?q="+pad+"b"
	x := newIndex(cursor.Numeric, 100)
	x.learn(a, []locate.Sample{{Off: 0, ID: "10"}, {Off: 9, ID: "100"}}, 10, -1)
	x.learn(b, []locate.Sample{{Off: 0, ID: "7"}}, 1, 1)

	ha, hb := x.lookup(a, "50"), x.lookup(b, "50")
	assert.Equal(t, locate.Sample{Off: 0, ID: "10"}, ha.Lo)
	assert.Equal(t, -1, ha.End)
	assert.Equal(t, locate.Sample{Off: 0, ID: "7"}, hb.Lo)
	assert.Equal(t, 1, hb.End, "b ended; a did not")
	require.NotNil(t, x.held(a))
	require.NotNil(t, x.held(b))
	assert.Equal(t, a, x.held(a).list.Key())
	assert.Equal(t, b, x.held(b).list.Key())
	assert.NotSame(t, x.held(a), x.held(b))
}

// TestIndexKeptWithReadaheadOff: with read-ahead off (a TTL of 0) the
// store still holds each list's one object, its samples and learned
// sizes, and a second walk of a list finds every cursor in the index.
func TestIndexKeptWithReadaheadOff(t *testing.T) {
	s := trustedStore(cursor.Numeric, 0, 64<<20)
	e := &Engine{Order: cursor.Numeric, MaxPageSize: 1000, Index: s.Index(100_000), Lists: s}
	l := newMemList(evenIDs(3000))
	walk(t, e, l, 50)
	st := s.Stats()
	assert.Equal(t, 1, st.Lists, "one object for the list: samples and learned state")
	assert.Zero(t, st.Windows+st.Chains)
	lists, samples := e.Index.Stats()
	assert.Equal(t, 1, lists)
	assert.Positive(t, samples)

	cursor := ""
	for {
		pg, err := e.Page(context.Background(), l, Request{List: "l", After: cursor, Size: 50})
		require.NoError(t, err)
		if cursor != "" {
			assert.True(t, pg.IndexHit, "cursor %s", cursor)
		}
		if !pg.More {
			break
		}
		cursor = pg.IDs[len(pg.IDs)-1]
	}
	_ = time.Second
}

// TestPositionsBytes: what the store counts for a list's samples (the
// positions object with its LRU element, each sample's struct and id, at
// the slice's capacity) is no less than what the heap holds for them, for
// many lists of a few samples and for one list of many.
func TestPositionsBytes(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's heap holds small allocations otherwise")
	}
	for _, tc := range []struct {
		name           string
		lists, samples int
	}{
		{"many lists", 10_000, 2},
		{"one long list", 1, 50_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := trustedStore(cursor.Numeric, 0, 1<<40)
			x := s.Index(1 << 26)
			names := make([]string, tc.lists)
			for i := range names {
				names[i] = fmt.Sprintf("/calls?list=%08d", i)
			}
			runs := make([][]locate.Sample, tc.lists)
			for i := range runs {
				for k := range tc.samples {
					runs[i] = append(runs[i], locate.Sample{Off: 10 * k, ID: fmt.Sprint(100 * (k + 1))})
				}
			}
			before := liveHeap()
			for i, name := range names {
				for k := 0; k < len(runs[i]); k += 100 { // learned in answers of 100
					run := runs[i][k:min(k+100, len(runs[i]))]
					x.learn(name, run, run[len(run)-1].Off+1, -1)
				}
			}
			rise := liveHeap() - before
			counted := s.Stats().Bytes
			t.Logf("%d lists of %d samples: %d bytes on the heap, %d counted (a list's positions %d, a sample %d and its id)",
				tc.lists, tc.samples, rise, counted, positionsBytes, sampleBytes)
			assert.LessOrEqual(t, rise, counted)
			_, held := x.Stats()
			assert.Equal(t, tc.lists*tc.samples, held)
			runtime.KeepAlive(x)
			runtime.KeepAlive(runs)
		})
	}
}

// TestIndexCountsUnderConcurrentEviction: walkers of many lists learn and
// look up in parallel while the store, small for them, evicts lists (and
// their samples) under them; run under -race. After, every byte the store
// counts is a list's own and its samples', exactly, and the index counts
// the lists and samples the store holds.
func TestIndexCountsUnderConcurrentEviction(t *testing.T) {
	s := trustedStore(cursor.Numeric, 0, 64<<10)
	x := s.Index(3000)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 3000 {
				name := fmt.Sprintf("/calls?w=%d&l=%d", w, i%40)
				off := 10 * (i / 40)
				run := []locate.Sample{{Off: off, ID: fmt.Sprint(100 * (off + 1))}, {Off: off + 9, ID: fmt.Sprint(100 * (off + 10))}}
				x.learn(name, run, off+10, -1)
				x.lookup(name, run[0].ID)
				if i%500 == 499 && w == 0 {
					s.Clear()
				}
			}
		})
	}
	wg.Wait()

	var sum int64
	found := 0
	for w := range 4 {
		for i := range 40 {
			name := fmt.Sprintf("/calls?w=%d&l=%d", w, i)
			var counted int64
			o := s.Own(name, false, func(l *liststore.List, _ *listObj) int64 {
				counted = l.Bytes() // under the store's lock
				return 0
			})
			if o == nil {
				continue
			}
			found++
			want := listBytes + int64(len(name))
			if o.pos != nil {
				want += positionsBytes + o.pos.counted
				assert.Equal(t, o.pos.bytes(), o.pos.counted, "%s: the store was told what its samples cost", name)
			}
			assert.Equal(t, want, counted, name)
			sum += counted
		}
	}
	st := s.Stats()
	assert.Equal(t, st.Lists, found, "the store holds only the walkers' lists")
	assert.Equal(t, sum, st.Bytes, "the store's bytes are its lists'")
	assert.LessOrEqual(t, st.Bytes, int64(64<<10))
	lists, samples := x.Stats()
	held := x.heldLists()
	n := 0
	for _, p := range held {
		n += len(p.samples)
	}
	assert.Equal(t, len(held), lists)
	assert.Equal(t, n, samples)
	assert.LessOrEqual(t, samples, 3000)
}
