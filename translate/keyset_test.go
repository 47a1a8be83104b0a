package translate

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// keysetEngine asks by keyset every cursor id made of digits only.
func keysetEngine(readahead bool) *Engine {
	e := &Engine{Order: Numeric, MaxPageSize: 1000, Index: NewIndex(Numeric, 100_000),
		Keyset: func(id string) error {
			if id == "" || len(id) > 18 {
				return errors.New("not a short number")
			}
			return nil
		}}
	if readahead {
		e.Lists = NewMemoryStore(Numeric, 2*time.Second, 64<<20)
	} else {
		e.Lists = NewMemoryStore(Numeric, 0, 0)
	}
	return e
}

// TestKeysetTargets holds a sequential keyset walk to issue 23's
// targets: one call a page besides the first, at most (p+1)/p records
// fetched per record served, at most p+1 records stepped through a page,
// and a cold cursor anywhere costs one call, on strict (id_gt) and
// inclusive (id_gte) backends alike when the template says which.
func TestKeysetTargets(t *testing.T) {
	const n = 5000
	for _, tc := range []struct {
		name      string
		inclusive bool // the backend sends the cursor's own record too
		expected  bool // Engine.KeysetInclusive: the template looks inclusive
		size      int
		fetched   float64
	}{
		{"id_gt by 10", false, false, 10, 1.1},
		{"id_gt by 100", false, false, 100, 1.01},
		// An inclusive condition also sends the cursor's own record.
		{"id_gte by 10", true, true, 10, 1.2},
		{"id_gte by 100", true, true, 100, 1.02},
		// Not expected, it is learned from the first keyset answer, at
		// one more call there (and for each cold cursor).
		{"inclusive, unexpected, by 10", true, false, 10, 1.2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newMemList(evenIDs(n))
			l.keysetInclusive = tc.inclusive
			newEngine := func() *Engine {
				e := keysetEngine(false)
				e.KeysetInclusive = tc.expected
				return e
			}
			ids, c := costlyWalk(t, newEngine(), l, tc.size)
			require.Equal(t, evenIDs(n), ids)
			extra := 0
			if tc.inclusive && !tc.expected {
				extra = 1 // the first keyset answer shows the condition inclusive; one more call tells whether more follow
			}
			assert.LessOrEqual(t, c.calls, c.pages+extra, "one call a page")
			assert.LessOrEqual(t, c.fetchedPerServed(), tc.fetched)
			assert.LessOrEqual(t, c.stepped-(tc.size+1), (c.pages-1)*(tc.size+2), "records stepped through a page")

			for _, at := range []int{0, 1234, 4000, n - 3} {
				e := newEngine() // cold: no index, nothing learned
				calls0, _ := l.counts()
				cursor := strconv.Itoa((at + 1) * 10)
				pg, err := e.Page(context.Background(), l, Request{List: "cold", After: cursor, Size: tc.size})
				require.NoError(t, err)
				want, more := after(evenIDs(n), int64((at+1)*10), tc.size)
				assert.Equal(t, want, parseIDs(pg.IDs))
				assert.Equal(t, more, pg.More)
				calls, _ := l.counts()
				assert.LessOrEqual(t, calls-calls0, 1+extra, "a cold cursor at %d", at)
			}
		})
	}
}

// TestKeysetWithReadahead: a keyset walk reads ahead as an offset walk
// does, and stays exact under churn.
func TestKeysetWithReadahead(t *testing.T) {
	l := newMemList(evenIDs(3000))
	c := churningWalk(t, 8, keysetEngine(true), l, 10)
	assert.Less(t, c.callsPerPage(), 0.1)
	assert.Less(t, c.stepped, 2*c.served, "each record read about once")
}

// TestKeysetMisread: a backend that ignores the condition never has its
// answer served as if it kept it: the page is read by offset, the list is
// read by offset from then on, and the observer hears of it once.
func TestKeysetMisread(t *testing.T) {
	l := newMemList(evenIDs(500))
	l.keysetIgnored = true
	e := keysetEngine(false)
	var heard []string
	e.OnKeysetMisread = func(reason string) { heard = append(heard, reason) }
	ids, c := costlyWalk(t, e, l, 10)
	assert.Equal(t, evenIDs(500), ids)
	assert.Len(t, heard, 1)
	assert.Contains(t, heard[0], "above id")
	assert.LessOrEqual(t, c.calls, c.pages+1, "one keyset call wasted, then offsets")

	// A cursor below every id: an answer from the list's start is right.
	l2 := newMemList(evenIDs(50))
	l2.keysetIgnored = true
	pg, err := keysetEngine(false).Page(context.Background(), l2, Request{List: "x", After: "5", Size: 3})
	require.NoError(t, err)
	assert.Equal(t, []int64{10, 20, 30}, parseIDs(pg.IDs))
	assert.True(t, pg.Keyset)
}

// TestKeysetRefusedIDsReadByOffset: a cursor id the template cannot
// carry is read by offset, as without keyset.
func TestKeysetRefusedIDsReadByOffset(t *testing.T) {
	l := newMemList(evenIDs(100))
	e := keysetEngine(false)
	e.Keyset = func(string) error { return errors.New("unsafe") }
	pg, err := e.Page(context.Background(), l, Request{List: "x", After: "200", Size: 5})
	require.NoError(t, err)
	assert.False(t, pg.Keyset)
	assert.Equal(t, []int64{210, 220, 230, 240, 250}, parseIDs(pg.IDs))
}

// TestKeysetClamp: a backend that clamps the limit is learned, and a
// short answer is never taken for the list's end.
func TestKeysetClamp(t *testing.T) {
	l := newMemList(evenIDs(2000))
	l.clampAt = 50
	e := keysetEngine(true)
	ids, _ := costlyWalk(t, e, l, 80)
	assert.Equal(t, evenIDs(2000), ids)
	limit, learned := e.PageSizeLimit()
	assert.True(t, learned)
	assert.Equal(t, 50, limit)
}

// recordingList is a memList that keeps every window asked of it.
type recordingList struct {
	*memList
	asked []Window
}

func (l *recordingList) Fetch(ctx context.Context, w Window) (Batch, error) {
	l.asked = append(l.asked, w)
	return l.memList.Fetch(ctx, w)
}

// TestKeysetAnchorsAreChecked: a page that needs a second keyset call
// anchors it at the last id the backend sent, and that id is written into
// the backend's query as the cursor is: one the template cannot carry is
// never asked by keyset; the page is read by offset and is exact.
func TestKeysetAnchorsAreChecked(t *testing.T) {
	l := &recordingList{memList: newMemList(evenIDs(1000))}
	l.clampAt = 50 // the first answer ends at 510: the page goes on after it
	e := keysetEngine(false)
	e.Keyset = func(id string) error {
		if id == "510" {
			return errors.New("unsafe")
		}
		return nil
	}
	pg, err := e.Page(context.Background(), l, Request{List: "x", After: "10", Size: 60})
	require.NoError(t, err)
	want, more := after(evenIDs(1000), 10, 60)
	assert.Equal(t, want, parseIDs(pg.IDs))
	assert.Equal(t, more, pg.More)
	require.NotEmpty(t, l.asked)
	assert.Equal(t, "10", l.asked[0].After, "the cursor is asked by keyset")
	for _, w := range l.asked {
		assert.NotEqual(t, "510", w.After, "an unsafe anchor is never asked by keyset")
	}
}
