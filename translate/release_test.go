package translate

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"
	"unsafe"

	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// releasingList is a memList whose answers live in buffers of their own,
// as a real fetcher's do, and are scribbled over when released: a page
// that used anything of a released answer afterwards would come out wrong.
type releasingList struct {
	*memList
	bufs     [][]byte // per call: the bytes its ids and records point into
	released []bool   // per call
	twice    int      // Release calls for a call already released
}

func (l *releasingList) Fetch(ctx context.Context, w Window) (Batch, error) {
	b, err := l.memList.Fetch(ctx, w)
	if err != nil {
		return b, err
	}
	call := len(l.bufs)
	var buf []byte
	for _, id := range b.IDs {
		buf = append(buf, id...)
	}
	l.bufs = append(l.bufs, buf)
	l.released = append(l.released, false)
	// Ids point into buf; each record says which call it came from.
	at := 0
	b.Records = make([][]byte, len(b.IDs))
	for i, id := range b.IDs {
		b.IDs[i] = unsafe.String(&buf[at], len(id))
		at += len(id)
		b.Records[i] = []byte(strconv.Itoa(call))
	}
	return b, nil
}

func (l *releasingList) Release(call int) {
	if l.released[call] {
		l.twice++
	}
	l.released[call] = true
	for i := range l.bufs[call] {
		l.bufs[call][i] = '9'
	}
}

// TestEngineReleasesUnsettledAnswers checks that the engine releases
// exactly the answers that gave the page nothing (the probes of a search),
// never one a record of the page or its envelope (Source) comes from, and
// that it keeps nothing of a released answer: they are scribbled over, and
// the pages stay exact.
func TestEngineReleasesUnsettledAnswers(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	cases := []struct {
		name    string
		ids     []int64
		maxPage int
		size    int
		at      float64 // the cursor's position in the list
	}{
		{"even 1%", evenIDs(100000), 1000, 100, 0.01},
		{"even 50%", evenIDs(100000), 1000, 10, 0.5},
		{"even 99%", evenIDs(100000), 1000, 100, 0.99},
		{"random 50%", randomIDs(r, 100000, 50), 1000, 100, 0.5},
		{"random 99% small backend pages", randomIDs(r, 20000, 50), 25, 10, 0.99},
		{"stitched pages", randomIDs(r, 20000, 50), 25, 60, 0.37},
		{"first page", evenIDs(1000), 1000, 10, -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := &releasingList{memList: newMemList(tc.ids)}
			e := &Engine{Order: cursor.Numeric, MaxPageSize: tc.maxPage} // no index: every cursor is cold
			req := Request{List: "l", Size: tc.size}
			var cursorID int64
			if tc.at >= 0 {
				cursorID = tc.ids[int(tc.at*float64(len(tc.ids)))]
				req.After = strconv.FormatInt(cursorID, 10)
			}
			pg, err := e.Page(context.Background(), l, req)
			require.NoError(t, err)
			want, more := after(tc.ids, cursorID, tc.size)
			require.Equal(t, want, parseIDs(pg.IDs), "the page, read after the released answers were scribbled over")
			assert.Equal(t, more, pg.More)
			require.Equal(t, pg.Calls, len(l.bufs))
			// The search reads the ids it keeps (to interpolate): had it
			// kept them in the scribbled answers, it would search otherwise.
			plain, err := e.Page(context.Background(), newMemList(tc.ids), req)
			require.NoError(t, err)
			assert.Equal(t, plain.Calls, pg.Calls, "calls with the answers released and without")

			contributed := make([]bool, pg.Calls)
			for _, rec := range pg.Records {
				call, err := strconv.Atoi(string(rec))
				require.NoError(t, err)
				contributed[call] = true
			}
			released := 0
			for call := range pg.Calls {
				if call == pg.Source || contributed[call] {
					assert.False(t, l.released[call], "call %d gave the page records but was released", call)
				} else {
					assert.True(t, l.released[call], "call %d gave the page nothing but was kept", call)
					released++
				}
			}
			assert.Zero(t, l.twice, "an answer released twice")
			if tc.at > 0 {
				assert.Positive(t, released, "a cold cursor deep in the list searched, so some answer was released")
			}
			t.Logf("%d calls, %d released, source %d", pg.Calls, released, pg.Source)

			// With an index, what it learned is ids of the list: none was
			// read from an answer after it had been scribbled over.
			x := newIndex(cursor.Numeric, 1<<20)
			withIndex := &Engine{Order: cursor.Numeric, MaxPageSize: tc.maxPage, Index: x}
			_, err = withIndex.Page(context.Background(), &releasingList{memList: newMemList(tc.ids)}, req)
			require.NoError(t, err)
			known := make(map[string]bool, len(tc.ids))
			for _, id := range tc.ids {
				known[strconv.FormatInt(id, 10)] = true
			}
			require.NotEmpty(t, x.heldLists(), "the page taught the index")
			for _, p := range x.heldLists() {
				for _, s := range p.samples {
					assert.True(t, known[s.ID], "the index learned %q at %d, not an id of the list", s.ID, s.Off)
				}
			}
		})
	}
}

// TestEngineWithoutReleaser checks that a Fetcher that does not release
// answers is served as before.
func TestEngineWithoutReleaser(t *testing.T) {
	ids := evenIDs(100000)
	e := &Engine{Order: cursor.Numeric, MaxPageSize: 1000}
	pg, err := e.Page(context.Background(), newMemList(ids), Request{List: "l", After: "500000", Size: 10})
	require.NoError(t, err)
	want, _ := after(ids, 500000, 10)
	assert.Equal(t, want, parseIDs(pg.IDs))
	assert.Greater(t, pg.Calls, 1)
}

var _ Releaser = (*releasingList)(nil)
