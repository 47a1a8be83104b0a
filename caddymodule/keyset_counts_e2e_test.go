package caddymodule_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule"
	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
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
			c := gatewaytest.StartBehind(t, fmt.Sprintf(gatewaySite, s.options+"\n\t\treadahead_ttl "+ttl), b)
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

// TestKeysetRecordsUnderACountName: a list whose records sit under one
// of the count names ("count" here) keeps them on keyset pages: the
// records' member is never dropped (Body.ParseWithout), whatever drops.
func TestKeysetRecordsUnderACountName(t *testing.T) {
	const n = 50
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		size, _ := strconv.Atoi(q.Get("_perPage"))
		page, _ := strconv.Atoi(q.Get("_page"))
		from := max(page-1, 0) * size
		if after := q.Get("id_gt"); after != "" {
			from, _ = strconv.Atoi(after) // ids 1..n: the records above id x start at offset x
		}
		recs := []string{}
		for id := from + 1; id <= min(from+size, n); id++ {
			recs = append(recs, fmt.Sprintf(`{"id":%d}`, id))
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"count":[%s],"total":%d}`, strings.Join(recs, ","), n-from)
	}))
	t.Cleanup(srv.Close)
	c := gatewaytest.Start(t, fmt.Sprintf(gatewaySite, "backend_keyset \"id_gt={id}\"\n\t\trecords_path count"), srv.URL)
	var want []string
	for id := 1; id <= n; id++ {
		want = append(want, strconv.Itoa(id))
	}
	ids := walkDialect(t, c.URL, 7, func(a answer) []string { return a.ids(t, "count") })
	assert.Equal(t, want, ids)
}
