package caddymodule

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/helpdesk-gateway/gateway/legacy/reference"
	"github.com/helpdesk-gateway/gateway/translate"
)

// TestColdCursorHoldsOnlyWhatThePageUses: a cold cursor deep in a list
// costs a search of several backend calls. The answers of its probes are
// given back as soon as the engine has read them, so what a page holds is
// the answers its records come from, and at most one probe more while the
// search runs, however many probes there were.
func TestColdCursorHoldsOnlyWhatThePageUses(t *testing.T) {
	be := reference.New(reference.Config{Seed: 3, Records: 20000})
	ids := be.IDs("calls")
	for _, tc := range []struct {
		perPage int
		at      float64
	}{{10, 0.5}, {100, 0.5}, {100, 0.99}, {1000, 0.5}} {
		t.Run(fmt.Sprintf("perPage=%d/at=%v", tc.perPage, tc.at), func(t *testing.T) {
			ctx, cancel := caddy.NewContext(caddy.Context{Context: t.Context()})
			defer cancel()
			g := &Gateway{IndexSize: -1} // no index: every cursor is cold
			require.NoError(t, g.Provision(ctx))
			g.logger = zap.NewNop()

			var sizes []int // bytes of each backend answer, in call order
			next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
				cw := &countingWriter{ResponseWriter: w}
				be.ServeHTTP(cw, r)
				sizes = append(sizes, cw.n)
				return nil
			})
			cursor := ids[int(tc.at*float64(len(ids)))]
			r := httptest.NewRequest(http.MethodGet, "/calls?_perPage="+strconv.Itoa(tc.perPage), nil)
			f := &fetcher{g: g, r: r, next: next}
			defer f.release()
			pg, err := g.endpoints["/calls"].engine.Page(r.Context(), f,
				translate.Request{List: "cold", After: strconv.FormatInt(cursor, 10), Size: tc.perPage})
			require.NoError(t, err)
			require.Len(t, pg.IDs, tc.perPage)
			require.Equal(t, strconv.FormatInt(ids[int(tc.at*float64(len(ids)))+1], 10), pg.IDs[0])
			require.Greater(t, pg.Calls, 1, "the cursor was cold: the page searched")
			require.Len(t, sizes, pg.Calls)

			var total, used, largestProbe int
			for call, n := range sizes {
				total += n
				if call >= pg.Source {
					used += n
					assert.NotNil(t, f.answers[call], "call %d: the page's records come from it", call)
				} else {
					largestProbe = max(largestProbe, n)
					assert.Nil(t, f.answers[call], "call %d: a probe, given back", call)
				}
			}
			assert.Equal(t, used, f.held, "held once the page is found: its own answers")
			assert.LessOrEqual(t, f.peak, used+largestProbe, "held at most: its own answers and one probe")
			t.Logf("%d calls, %d answer bytes read, %d held at most, %d held for the page", pg.Calls, total, f.peak, f.held)
		})
	}
}
