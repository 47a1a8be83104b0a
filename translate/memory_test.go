package translate

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/helpdesk-gateway/gateway/liststore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Memory counted whole: the store's bound counts every byte a list keeps
// alive, and the sizes it counts are no smaller than what the heap holds.

// liveHeap is the heap in use after a collection.
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestListStateBytes measures what one list identity's object holds (its
// learned state, LRU element and map slot) and what one chain entry
// holds, against the sizes the store counts (listBytes, chainBytes, the
// figures docs/operating.md gives), which must be no smaller.
func TestListStateBytes(t *testing.T) {
	for _, n := range []int{3000, 12_000, 20_000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) { listStateBytes(t, n) })
	}
}

func listStateBytes(t *testing.T, n int) {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("/calls?list=%08d", i)
	}
	s := trustedStore(cursor.Numeric, time.Hour, 1<<40)
	before := liveHeap()
	for _, name := range names {
		s.stateOf(name)
	}
	perList := float64(liveHeap()-before) / float64(n)
	runtime.KeepAlive(s)

	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%08d", i)
	}
	now := time.Unix(1_800_000_000, 0)
	before = liveHeap()
	for _, id := range ids {
		s.Walked(context.Background(), names[0], liststore.Walked{Last: id, More: true, At: now, Now: now})
	}
	perChain := float64(liveHeap()-before)/float64(n) - 8 // less the id's bytes, cloned
	runtime.KeepAlive(s)

	t.Logf("a list's object: %.0f bytes measured, %d counted; a chain entry: %.0f measured, %d counted",
		perList, listBytes, perChain, chainBytes)
	assert.LessOrEqual(t, perList, float64(listBytes), "a list's object")
	assert.LessOrEqual(t, perChain, float64(chainBytes), "a chain entry")
	assert.Equal(t, int64(n)*(listBytes+chainBytes+8)+int64(len(strings.Join(names, ""))), s.Stats().Bytes)
}

// TestMemoryBoundWithLongIdentities: thousands of callers, each its own
// list identity with a 7 KB query, walk at _perPage=1 (each page a chain
// entry, each walk windows): the heap the store holds stays within
// readahead_memory, whatever the identities, ids and windows cost.
func TestMemoryBoundWithLongIdentities(t *testing.T) {
	const (
		callers = 3000
		memory  = 1 << 20
		slack   = 256 << 10 // the test's own
	)
	l := newMemList(evenIDs(2000)).withRecords()
	s := trustedStore(cursor.Numeric, time.Hour, memory)
	e := &Engine{Order: cursor.Numeric, MaxPageSize: 1000, Index: s.Index(1000), Lists: s}
	// Reads ahead run in the page that starts them: none is in flight,
	// holding an answer the store has not taken yet, when the heap is
	// read (in goroutines one sometimes was: 1,309 KiB once in CI).
	e.spawn = inline
	query := strings.Repeat("q", 7<<10)
	before := liveHeap()
	for c := range callers {
		list := fmt.Sprintf("/calls?caller=%d&%s", c, query)
		cursor := ""
		for range 6 {
			pg, err := e.Page(context.Background(), l, Request{List: list, After: cursor, Size: 1})
			require.NoError(t, err)
			cursor = pg.IDs[0]
		}
	}
	rise := liveHeap() - before
	st := e.Lists.(*MemoryStore).Stats()
	t.Logf("heap rose by %d KiB for a bound of %d KiB: %+v", rise>>10, memory>>10, st)
	assert.LessOrEqual(t, st.Bytes, int64(memory))
	assert.LessOrEqual(t, rise, int64(memory+slack), "the heap the store holds")
	assert.Positive(t, st.Windows, "windows were kept")
	runtime.KeepAlive(e)
}

// TestPurgeEvery: expired windows and chain entries are dropped by the
// timer, with no traffic, and the timer stops.
func TestPurgeEvery(t *testing.T) {
	s := trustedStore(cursor.Numeric, 20*time.Millisecond, 1<<20)
	keepFor(s, "l", "10", &liststore.StoredWindow{Span: liststore.Span{IDs: []string{"10", "20", "30"}, Floor: "10", Start: -1}}, time.Now())
	require.Equal(t, 1, s.Stats().Windows)
	stop := s.PurgeEvery(5 * time.Millisecond)
	assert.Eventually(t, func() bool { st := s.Stats(); return st.Windows == 0 && st.Chains == 0 },
		5*time.Second, 5*time.Millisecond, "expired windows go without traffic")
	stop()
	stop() // twice is fine
	assert.Equal(t, listBytes+1, s.Stats().Bytes, "the list's learned state stays")
}
