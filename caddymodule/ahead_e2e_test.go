package caddymodule_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule"
	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// TestReadAheadOfTheWalkerThroughCaddy walks the reference backend
// through a real Caddy: a window's marker page starts the read of the
// walk's next window in the background, the client's request made again
// through reverse_proxy after the response, so that after the walk's
// first windows no page's own request calls the backend, and the walk
// costs the backend what it did (calls and records per page), exact.
// The walker lets the reads ahead in flight end before each page (one
// that gets there first waits a bound, then reads for itself, by design),
// and windows live 30s, which no walker slowed by a loaded machine
// outlasts (at the default 2s, a slow walker is not read ahead of):
// the counts are the windows', not the machine's pace.
func TestReadAheadOfTheWalkerThroughCaddy(t *testing.T) {
	for _, perPage := range []int{10, 100} {
		t.Run(fmt.Sprintf("perPage=%d", perPage), func(t *testing.T) {
			b := reference.New(reference.Config{Seed: 7, Records: 6000})
			c := gatewaytest.StartBehind(t, fmt.Sprintf(gatewaySite, "readahead_ttl 30s"), b)
			caddymodule.TrustWalks()
			want := b.IDs("calls")
			key := []string{"X-Api-Key", "ahead-" + strconv.Itoa(perPage)}

			calls0, bg0 := b.Requests("calls"), caddymodule.BackgroundCalls()
			var got []int64
			after, pages := "", 0
			for {
				caddymodule.SettleReadsAhead()
				a, ids := pageAfter(t, c.URL, "calls", perPage, after, key...)
				got = append(got, ids...)
				pages++
				if a.header.Get("next_page_cursor") == "" {
					break
				}
				after = strconv.FormatInt(ids[len(ids)-1], 10)
			}
			require.Equal(t, want, got, "the walk is exact")
			bg := caddymodule.BackgroundCalls() - bg0
			calls := b.Requests("calls") - calls0
			own := calls - bg
			t.Logf("%d pages: %d backend calls, %d of them read ahead in the background", pages, calls, bg)
			assert.LessOrEqual(t, own, int64(3), "calls a page's own request made: the first page's and the walk's first windows'")
			assert.Positive(t, bg, "windows read ahead of the walker")
			assert.LessOrEqual(t, float64(calls)/float64(pages), map[int]float64{10: 0.05, 100: 0.25}[perPage], "backend calls per page")
		})
	}
}

// TestReadAheadCarriesTheCallersVars: handlers before the gateway make
// something of the client's request (a variable, a map's output), and
// reverse_proxy tells the backend who the caller is from them (header_up
// with placeholders). A read ahead is that request again after the
// response: it must carry them as the client's pages did, or the backend
// would see another caller and the window read ahead would hold that
// caller's records. The backend here shows tenant b's records when both
// headers say b, and tenant a's otherwise.
func TestReadAheadCarriesTheCallersVars(t *testing.T) {
	kb := newKeyedBackend(600, 1000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set("X-Api-Key", "a-vars")
		if r.Header.Get("X-Up") == "b" && r.Header.Get("X-Map") == "b" {
			r.Header.Set("X-Api-Key", "b-vars")
		}
		kb.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	c := gatewaytest.Start(t, `
http://:0 {
	vars tenant {http.request.header.X-Tenant}
	map {http.request.header.X-Tenant} {mapped} {
		b b
		default a
	}
	helpdesk_gateway
	reverse_proxy {backend} {
		header_up X-Up {http.vars.tenant}
		header_up X-Map {mapped}
	}
}
`, srv.URL)
	bg0 := caddymodule.BackgroundCalls()
	w := &keyedWalker{base: c.URL, perPage: 10, headers: fixed("X-Tenant", "b")}
	for !w.done {
		w.next(t)
	}
	assert.Equal(t, kb.b, w.ids, "tenant b's records, every page")
	assert.Equal(t, map[string]bool{"b-vars": true}, w.owners, "read as tenant b, reads ahead too")
	assert.Positive(t, caddymodule.BackgroundCalls()-bg0, "windows read ahead of the walker")
}
