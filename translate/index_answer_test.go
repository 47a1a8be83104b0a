package translate

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/helpdesk-gateway/gateway/locate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLearnAnswerKeepsConfirmedSamples(t *testing.T) {
	ids := func(from, to int) []string { // ids 10×offset for offsets [from, to)
		var out []string
		for off := from; off < to; off++ {
			out = append(out, strconv.Itoa(10*off))
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		sample locate.Sample
		answer []string // the answer's ids from offset 40
		kept   bool
	}{
		{"confirmed: same id at the same offset", locate.Sample{Off: 50, ID: "500"}, ids(40, 140), true},
		{"the answer holds another id there", locate.Sample{Off: 50, ID: "505"}, ids(40, 140), false},
		{"the record moved", locate.Sample{Off: 50, ID: "500"}, append([]string{"395"}, ids(40, 139)...), false},
		{"outside the answer's edges", locate.Sample{Off: 150, ID: "1500"}, ids(40, 140), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := newIndex(cursor.Numeric, 100)
			x.learn("l", []locate.Sample{tc.sample}, tc.sample.Off+1, -1)
			a := answerIDs{start: 40, ids: tc.answer}
			x.learnAnswer("l", []locate.Sample{{Off: 40, ID: tc.answer[0]}, {Off: 139, ID: tc.answer[len(tc.answer)-1]}}, 140, -1, a)
			h := x.lookup("l", tc.sample.ID)
			got := h.HasLo && h.Lo == tc.sample
			assert.Equal(t, tc.kept, got, "lookup %+v", h)
			assert.Equal(t, 2+map[bool]int{true: 1}[tc.kept], x.len())
		})
	}
}

// TestInterleavedWalksKeepTheirCursors walks a list with two clients taking
// turns half a page apart: each answer covers the other's next cursor, and
// that cursor must stay known, so every page costs one call and is found
// by the index, as for a lone walker.
func TestInterleavedWalksKeepTheirCursors(t *testing.T) {
	l := newMemList(randomIDs(rand.New(rand.NewPCG(3, 3)), 5000, 20))
	e := newEngine(1000, 100000)
	cursors := []string{"", ""}
	ctx := context.Background()
	// The second walker starts half a page in.
	pg, err := e.Page(ctx, l, Request{List: "l", Size: 50})
	require.NoError(t, err)
	cursors[1] = pg.IDs[len(pg.IDs)-1]
	for page := 0; page < 40; page++ {
		w := page % 2
		calls0, _ := l.counts()
		pg, err := e.Page(ctx, l, Request{List: "l", After: cursors[w], Size: 100})
		require.NoError(t, err)
		calls, _ := l.counts()
		assert.Equal(t, 1, calls-calls0, "page %d of walker %d", page/2, w)
		if cursors[w] != "" {
			assert.True(t, pg.IndexHit, "page %d of walker %d: its cursor was forgotten", page/2, w)
		}
		cursors[w] = pg.IDs[len(pg.IDs)-1]
	}
}
