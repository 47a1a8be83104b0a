package caddymodule_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule"
	"github.com/helpdesk-gateway/gateway/internal/harness"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// TestKeysetPagesShowNoShrinkingCount: a keyset answer's count is of the
// records above its id (the reference backend's "total", as PocketBase's
// totalItems, counts what the query matched), so a page whose envelope
// comes from a keyset call drops it; pages from page calls (the first
// page, _page requests) keep the whole list's. Every count a client sees
// is the list's, with read-ahead off (a call a page) and on (windows).
func TestKeysetPagesShowNoShrinkingCount(t *testing.T) {
	var s keysetStyle
	for _, k := range keysetStyles {
		if k.envelope == "items" {
			s = k
		}
	}
	require.NotEmpty(t, s.name, "the PocketBase style")
	for _, ttl := range []string{"0", "10s"} {
		t.Run("readahead_ttl="+ttl, func(t *testing.T) {
			b := reference.New(reference.Config{Seed: 31, Records: 400, MaxPerPage: dialectLimit, Envelope: s.envelope, Paging: s.paging})
			srv := httptest.NewServer(b)
			t.Cleanup(srv.Close)
			c := harness.Start(t, fmt.Sprintf(gatewaySite, s.options+"\n\t\treadahead_ttl "+ttl), srv.URL)
			all := strIDs(b.IDs("calls"))
			var counted, without int
			pageIDs := func(a answer) []string {
				var env map[string]json.RawMessage
				require.NoError(t, json.Unmarshal(a.body, &env))
				if total, ok := env["total"]; ok {
					assert.Equal(t, fmt.Sprint(len(all)), string(total), "a count a page shows is the list's")
					counted++
				} else {
					without++
				}
				return s.pageIDs(t)(a)
			}
			for walk := range 2 {
				assert.Equal(t, all, walkDialect(t, c.URL, 9, pageIDs), "walk %d", walk)
				caddymodule.TrustWalks()
			}
			assert.Positive(t, counted, "the first page, a page call, keeps the count")
			assert.Positive(t, without, "keyset pages drop it")
			a := get(t, c.URL+"/calls?_perPage=9&_page=3")
			require.Equal(t, http.StatusOK, a.status, string(a.body))
			var env map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(a.body, &env))
			assert.Equal(t, fmt.Sprint(len(all)), string(env["total"]), "_page keeps the list's count")
		})
	}
}
