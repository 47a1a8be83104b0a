package caddymodule_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/redisstore/redistest"
)

// storeTimeout is the readahead_store_timeout of the tests that share a
// store and count what it saves (backend calls, records fetched, pages
// from shared windows): far above a loopback round trip and the default
// 50ms, so that a machine loaded as CI's is (every package at once, with
// -race, on 2 cores) turns no store call into a miss, and no wait for
// another instance's read ahead (three quarters of it) into a page that
// reads for itself, by design. The faults these tests make (a store
// killed, restarted or flushed) fail calls at once, not at the deadline.
const storeTimeout = "readahead_store_timeout 5s"

// sharedStoreOptions are the gateway options, more included, that share
// one redis-server among the instances of scaleOutSites.
func sharedStoreOptions(srv *redistest.Server, more ...string) string {
	return strings.Join(append([]string{
		"readahead_store " + srv.URL(),
		"readahead_store_key 0123456789abcdef-e2e-secret",
	}, more...), "\n\t\t")
}

// walkSharedPages walks a list by cursor as the client apiKey, from the
// first page to the last, and returns the ids served. Every answer must
// be a 200 with a full page but the last; with envelope, every page must
// be the backend's envelope with the records at envelope and its paging
// members (page, per_page) left out, whichever instance composed it and
// from whichever answer.
func walkSharedPages(t *testing.T, base, path string, perPage int, apiKey, envelope string) (ids []string, pages int) {
	t.Helper()
	cursor := ""
	for {
		q := url.Values{"_perPage": {strconv.Itoa(perPage)}}
		if cursor != "" {
			q.Set("_cursor", cursor)
		}
		a := get(t, base+path+"?"+q.Encode(), "X-Api-Key", apiKey)
		require.Equal(t, http.StatusOK, a.status, string(a.body))
		var page []string
		if envelope == "" {
			page = a.ids(t)
		} else {
			var env map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(a.body, &env), string(a.body))
			members := make([]string, 0, len(env))
			for k := range env {
				members = append(members, k)
			}
			slices.Sort(members)
			require.Equal(t, []string{envelope, "total"}, members, "page %d: %s", pages+1, a.body)
			page = a.ids(t, envelope)
		}
		pages++
		ids = append(ids, page...)
		cursor = a.header.Get("next_page_cursor")
		if cursor == "" {
			return ids, pages
		}
		require.Len(t, page, perPage, "a page before the last is full")
		require.Less(t, pages, 100_000)
	}
}
