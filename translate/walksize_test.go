package translate

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/liststore"
	"github.com/helpdesk-gateway/gateway/liststore/liststoretest"
)

// downStore is a memory store that, while down, answers as a store
// holding nothing and keeps nothing, as a shared store that cannot be
// reached does (redisstore). Like a shared store, it serves windows
// whatever cursors it did not see (no proof that walks stay: see
// liststore/stay.go).
type downStore struct {
	*MemoryStore
	down bool
}

func (s *downStore) Cut(ctx context.Context, list string, q liststore.CutQuery) liststore.CutResult {
	if s.down {
		return liststore.CutResult{}
	}
	liststoretest.TrustWalks(s)
	return s.MemoryStore.Cut(ctx, list, q)
}

func (s *downStore) Walked(ctx context.Context, list string, w liststore.Walked) {
	if !s.down {
		s.MemoryStore.Walked(ctx, list, w)
	}
}

// TestWalkAfterStoreOutage walks 20,000 records at 10 a page while the
// walk store is down from page 300 to page 500 (each page then costs a
// call): from page 600 on, the walk reads ahead again, as a new walk
// does, in both dialects. It is the scenario of a report that the rest
// of such a walk cost a call a page, its Walk.Size at the maximum and
// every read only the page and its lookahead: that did not show here, in
// redisstore on a real Redis, or through Caddy; a planner that reads the
// page alone when a walk's size is far past the backend's limit fails it
// (offsets: 1,167 calls for the last 1,400 pages).
func TestWalkAfterStoreOutage(t *testing.T) {
	const n, size = 20_000, 10
	for _, offsets := range []bool{false, true} {
		t.Run(fmt.Sprintf("offsets %v", offsets), func(t *testing.T) {
			clock := newFakeClock()
			e := clock.engine(readaheadEngine(offsets))
			s := &downStore{MemoryStore: e.Lists.(*MemoryStore)}
			e.Walks = s
			l := newMemList(evenIDs(n))
			l.offsets = offsets
			cursor, pages, calls0, down := "", 0, 0, 0
			for {
				s.down = pages >= 300 && pages < 500
				switch pages {
				case 300:
					down, _ = l.counts()
				case 500:
					calls, _ := l.counts()
					down = calls - down
				case 600:
					calls0, _ = l.counts()
				}
				pg, err := e.Page(context.Background(), l, Request{List: "caller", After: cursor, Size: size})
				require.NoError(t, err)
				pages++
				clock.add(time.Millisecond)
				if !pg.More {
					break
				}
				cursor = pg.IDs[len(pg.IDs)-1]
			}
			require.Equal(t, n/size, pages)
			calls, _ := l.counts()
			t.Logf("%d calls for the 200 pages down, %d for the last %d", down, calls-calls0, pages-600)
			assert.GreaterOrEqual(t, down, 190, "calls while the store is down")
			assert.LessOrEqual(t, float64(calls-calls0)/float64(pages-600), 0.05, "calls per page after the outage")
		})
	}
}
