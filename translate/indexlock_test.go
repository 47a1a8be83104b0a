package translate

import (
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/helpdesk-gateway/gateway/liststore"
)

// learnings returns how many times the index took its lock to learn.
func (x *Index) learnings() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.locks
}

// held returns the samples x holds of list, as its store keeps them; nil
// when none.
func (x *Index) held(list string) *positions {
	var p *positions
	x.store.Own(list, false, func(_ *liststore.List, o *listObj) int64 {
		if o.pos != nil && o.pos.owner == x && o.pos.elem != nil {
			p = o.pos
		}
		return 0
	})
	return p
}

// heldLists returns the positions of every list x holds samples of, as
// its store keeps them.
func (x *Index) heldLists() []*positions {
	x.mu.Lock()
	var lists []*positions
	for e := x.lru.Front(); e != nil; e = e.Next() {
		lists = append(lists, e.Value.(*positions))
	}
	x.mu.Unlock() // the store's lock is never taken under the index's
	var held []*positions
	for _, p := range lists {
		x.store.Own(p.list.Key(), false, func(_ *liststore.List, o *listObj) int64 {
			if o.pos == p {
				held = append(held, p)
			}
			return 0
		})
	}
	return held
}

// TestOneIndexLearningPerPage: a page read in one call gives the index
// what it learned (its answer, the next page's cursor, and a cold
// cursor's own record inside a wide answer) under one lock.
func TestOneIndexLearningPerPage(t *testing.T) {
	l := newMemList(evenIDs(5000))
	for _, tc := range []struct {
		name  string
		walk  bool // the walk's first page came before
		after string
	}{
		{"the first page", false, ""},
		{"a sequential page", true, "100"},
		// The first probe of a cold cursor, [0, 23), holds the cursor's
		// record at offset 9, inside it.
		{"a cold cursor a wide answer holds inside", false, "100"},
		{"a cold cursor at the list's end", false, strconv.Itoa(10 * 5000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := newIndex(cursor.Numeric, 100_000)
			e := &Engine{Order: cursor.Numeric, MaxPageSize: 1000, Index: x}
			if tc.walk {
				_, err := e.Page(context.Background(), l, Request{List: "l", Size: 10})
				require.NoError(t, err)
			}
			before, calls0 := x.learnings(), l.calls
			_, err := e.Page(context.Background(), l, Request{List: "l", After: tc.after, Size: 10})
			require.NoError(t, err)
			if calls := l.calls - calls0; calls == 1 {
				assert.Equal(t, 1, x.learnings()-before, "one lock for a page of one call")
			} else {
				assert.LessOrEqual(t, x.learnings()-before, calls, "at most one lock a call")
			}
		})
	}
}
