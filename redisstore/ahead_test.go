package redisstore_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/redisstore"
	"github.com/helpdesk-gateway/gateway/redisstore/redistest"
	"github.com/helpdesk-gateway/gateway/translate"
)

// aheadList is a list that counts the calls the walker's own pages make
// (through it), apart from those made reading ahead of the walker in the
// background (through the list Detach returns).
type aheadList struct {
	*list
	own atomic.Int64
}

func (l *aheadList) Fetch(ctx context.Context, w translate.Window) (translate.Batch, error) {
	l.own.Add(1)
	return l.list.Fetch(ctx, w)
}

func (l *aheadList) Detach() (translate.Fetcher, context.Context, func(error), bool) {
	return l.list, context.Background(), func(error) {}, true
}

// TestReadAheadAcrossInstances: three engines sharing a store, pages
// round robin. The instance whose page is a window's marker claims the
// read of the walk's next window and makes it in the background; the
// instance that serves the page at the window's end cuts it from that
// window, waiting for the read when it is not kept yet, so that no page
// after the walk's first windows waits for a backend call, the read is
// made once, and the walk costs what it did.
func TestReadAheadAcrossInstances(t *testing.T) {
	srv := redistest.Start(t)
	for _, size := range []int{10, 100} {
		t.Run(fmt.Sprintf("perPage=%d", size), func(t *testing.T) {
			l := &aheadList{list: newList(20_000, 3)}
			// A store deadline no loaded machine's background read
			// outlasts: the waits this test counts are the claims', not
			// the deadline's (a wait past it reads for itself, by design);
			// and a TTL no slowed walker outlasts, as TestWalkAcrossInstances.
			engines := instancesAt(t, srv.URL(), 3, time.Minute, func(c *redisstore.Config) { c.Timeout = 5 * time.Second })
			var ids []string
			pages := 0
			req := translate.Request{List: fmt.Sprintf("calls|ahead%d", size), Size: size}
			for {
				pg, err := engines[pages%3].Page(ctx, l, req)
				require.NoError(t, err)
				pages++
				ids = append(ids, pg.IDs...)
				if !pg.More {
					break
				}
				req.After = pg.IDs[len(pg.IDs)-1]
			}
			for _, e := range engines {
				e.WaitAhead()
			}
			assert.Equal(t, l.snapshot(), ids, "the walk is exact")
			calls, fetched := l.counts()
			own := int(l.own.Load())
			bg := calls - own
			t.Logf("%d pages: %d calls in the walker's pages, %d read ahead; %.3f calls a page, %.3f fetched per served",
				pages, own, bg, float64(calls)/float64(pages), float64(fetched)/float64(len(ids)))
			// The first window (read at the walk's second page, its pace
			// not known yet) may hold no whole page for the next instance,
			// whose page then reads the second.
			assert.LessOrEqual(t, own, 3, "calls a page waited for: the first page's and the walk's first windows'")
			assert.Positive(t, bg)
			assert.LessOrEqual(t, float64(calls)/float64(pages), map[int]float64{10: 0.05, 100: 0.25}[size], "backend calls per page")
			assert.LessOrEqual(t, float64(fetched)/float64(len(ids)), 1.10, "records fetched per record served: each window read once")
		})
	}
}

// TestAwaitAheadLapsesWithinTheDeadline: a page waits for a read ahead
// that another instance claimed and never finishes, on a store slow to
// answer (paused for 40% of the deadline before it shows the claim). The
// wait lapses within the call's deadline, as an answer: the page reads
// for itself, and the store stays up. A wait of three quarters of the
// whole deadline, begun after the slow answer, outlasted the deadline,
// and the store was turned off as if it had failed.
func TestAwaitAheadLapsesWithinTheDeadline(t *testing.T) {
	const timeout = 2 * time.Second
	srv := redistest.Start(t)
	s := newStore(t, srv, time.Minute, func(c *redisstore.Config) { c.Timeout = timeout })
	const list = "calls|await"
	page(s, list, "10", ticket(t, s, list), "1", "10", "11") // the list's keys, to find its prefix by
	var base string
	for _, k := range scanKeys(t, srv) {
		if p, ok := strings.CutSuffix(k, "c:10"); ok {
			base = p
		}
	}
	require.NotEmpty(t, base, "the page's chain entry")
	// A read ahead after 20 claimed by an instance that went away.
	_, err := srv.Do("SET", base+"a:20", "1", "PX", "60000")
	require.NoError(t, err)
	_, err = srv.Do("CLIENT", "PAUSE", strconv.FormatInt((timeout*2/5).Milliseconds(), 10), "ALL")
	require.NoError(t, err)

	assert.True(t, s.AwaitAhead(ctx, list, "20"), "a read ahead was claimed")
	st := s.State()
	assert.True(t, st.Up, "a wait that lapses is no fault of the store: %s", st.LastError)
	assert.Zero(t, st.Errors)
}

// TestAwaitAheadAfterTheRead: a page's Cut finds no window after the
// cursor, and the read ahead another instance claimed there ends before
// the page asks whether to wait for it (its claim deleted). AwaitAhead
// reports the read all the same, so that the page cuts again and is
// served from the window, instead of reading it for itself: under load
// that gap between the two calls cost TestReadAheadAcrossInstances a
// fourth call in about one run in ten. With neither a claim nor a read
// that ended, there is none.
func TestAwaitAheadAfterTheRead(t *testing.T) {
	srv := redistest.Start(t)
	s := newStore(t, srv, time.Minute, nil)
	const list = "calls|after-the-read"
	assert.False(t, s.AwaitAhead(ctx, list, "20"), "no read claimed after 20, none ended")
	s.DoneAhead(ctx, list, "20") // a read ahead after 20 ends, its claim deleted
	assert.True(t, s.AwaitAhead(ctx, list, "20"), "the read that ended is reported")
	assert.True(t, s.State().Up)
}
