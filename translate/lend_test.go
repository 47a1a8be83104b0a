package translate

import (
	"context"
	"testing"
	"time"

	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/helpdesk-gateway/gateway/liststore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lendingList is a memList that counts the answers kept and lent.
type lendingList struct {
	*memList
	kept, lent int
}

func (l *lendingList) Keep(call int) (any, int) { l.kept++; return call, 1 }
func (l *lendingList) Lend(call int) any        { l.lent++; return call }

// Detach is memList's, with the list that counts as the fetcher.
func (l *lendingList) Detach() (Fetcher, context.Context, func(error), bool) {
	return l, context.Background(), func(error) {}, true
}

// copier is a WindowCopier over a MemoryStore that copies nothing: it
// only records the sources Walked saw.
type copier struct {
	*MemoryStore
	sources []any
}

func (c *copier) CopiesWindows() {}

func (c *copier) Walked(ctx context.Context, list string, w liststore.Walked) {
	if w.Window != nil {
		c.sources = append(c.sources, w.Window.Source())
	}
	c.MemoryStore.Walked(ctx, list, w)
}

// TestWindowsLentToACopier: a store that copies windows in Walked is lent
// the fetcher's answer (its memory goes back to the pool with the
// request), never handed it for good; any other store takes it with Keep.
func TestWindowsLentToACopier(t *testing.T) {
	for _, copies := range []bool{false, true} {
		ids := make([]int64, 2000)
		for i := range ids {
			ids[i] = int64(3 * (i + 1))
		}
		l := &lendingList{memList: newMemList(ids)}
		store := trustedStore(cursor.Numeric, time.Minute, 64<<20)
		e := &Engine{Order: cursor.Numeric, MaxPageSize: 1000, Lists: store, spawn: inline}
		c := &copier{MemoryStore: store}
		if copies {
			e.Walks = c
		}
		req := Request{List: "l", Size: 10}
		for range 50 {
			pg, err := e.Page(context.Background(), l, req)
			require.NoError(t, err)
			req.After = pg.IDs[len(pg.IDs)-1]
		}
		if copies {
			assert.Zero(t, l.kept, "no answer taken for good")
			assert.Positive(t, l.lent)
			assert.Len(t, c.sources, l.lent, "each window's source lent to Walked")
		} else {
			assert.Zero(t, l.lent)
			assert.Positive(t, l.kept)
		}
	}
}
