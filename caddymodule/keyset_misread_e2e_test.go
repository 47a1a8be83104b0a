package caddymodule_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/cursor"
)

// denseIDs returns n dense ascending numeric ids from 2 (2, 3, 5, 6, 8,
// 9, 11, ...: about two whole numbers in three), past 1000 from n 700.
func denseIDs(n int) []string {
	ids := make([]string, 0, n)
	for id := 2; len(ids) < n; id++ {
		if id%3 != 1 && id != 4 {
			ids = append(ids, strconv.Itoa(id))
		}
	}
	return ids
}

// keysetPage is one page through the gateway, or a 502: a page must be
// exactly the records after the cursor's id (after, "" for the first
// page), and a 502 must name backend_keyset, the setting the operator
// has to look at.
func keysetPage(t *testing.T, u string, all []string, after string, perPage int) (ids []string, next string, ok bool) {
	t.Helper()
	a := get(t, u)
	if a.status == http.StatusBadGateway {
		assert.Contains(t, string(a.body), "backend_keyset", "a 502 names the setting: %s", a.body)
		return nil, "", false
	}
	require.Equal(t, http.StatusOK, a.status, string(a.body))
	at := 0
	if after != "" {
		i, found := slices.BinarySearchFunc(all, after, cursor.Numeric.Compare)
		if found {
			i++
		}
		at = i
	}
	ids = stringIDs(t, a, "")
	require.Equal(t, all[at:min(at+perPage, len(all))], ids, "after %q at %d a page", after, perPage)
	next = a.header.Get("next_page_cursor")
	require.Equal(t, at+perPage < len(all), next != "", "after %q: a next page exactly when records follow", after)
	return ids, next, true
}

// TestKeysetMisreadsThroughCaddy: backends that misread backend_keyset
// in ways an answer's first id cannot show (ids compared as text, the
// condition on another field) or that ignore it are never served as if
// they kept it. Hand-built cursors of lists the gateway has never seen
// (after 9, 99, 999, where a text compare answers 90..., 990... and
// nothing) and whole walks, at 9, 10 and 100 a page, with read-ahead on
// and off: every page is exact or a 502 naming backend_keyset, and no
// walk ends short.
func TestKeysetMisreadsThroughCaddy(t *testing.T) {
	all := denseIDs(800)
	require.Greater(t, len(all[len(all)-1]), 3, "ids past 1000")
	for _, mode := range []string{"text", "ignore", "field"} {
		for _, readahead := range []string{"", "readahead_ttl 0"} {
			t.Run(fmt.Sprintf("%s/%q", mode, readahead), func(t *testing.T) {
				b := newKeysetBackend("id_gt={id}", cursor.Numeric, all)
				b.mode = mode
				c := gatewaytest.StartBehind(t, fmt.Sprintf(gatewaySite, "backend_keyset id_gt={id}\n\t\t"+readahead), b)
				for _, perPage := range []int{9, 10, 100} {
					for _, cursor := range []string{"9", "99", "999", "1000"} {
						// cold: a list identity never seen (the backend
						// ignores the parameter)
						u := fmt.Sprintf("%s/calls?_perPage=%d&cold=%s&_cursor=%s", c.URL, perPage, cursor, url.QueryEscape(cursorFor(cursor)))
						keysetPage(t, u, all, cursor, perPage)
					}
					var walk []string
					cursor, last := "", ""
					for pages := 0; ; pages++ {
						require.Less(t, pages, len(all)+1)
						u := fmt.Sprintf("%s/calls?_perPage=%d&walk=%d", c.URL, perPage, perPage)
						if cursor != "" {
							u += "&_cursor=" + url.QueryEscape(cursor)
						}
						ids, next, ok := keysetPage(t, u, all, last, perPage)
						if !ok {
							continue // a 502: the client asks again
						}
						walk = append(walk, ids...)
						if len(ids) > 0 {
							last = ids[len(ids)-1]
						}
						if cursor = next; cursor == "" {
							break
						}
					}
					assert.Equal(t, all, walk, "a whole walk at %d a page, not short", perPage)
				}
			})
		}
	}
}

// TestKeysetTextMisreadInsideAWindow: a backend that compares ids as
// text reads the condition right while a walk's ids keep their number of
// digits (1000 to 1999), so the list's first check agrees, and wrong past
// them: after 1995 come 19950, 19960, ..., 20000, ..., and 10000 to 19940
// are left out. With read-ahead on, a keyset window read ahead across
// that point is checked there (issue 40): every walk is exact, read-ahead
// on or off, at 10 and 100 a page.
func TestKeysetTextMisreadInsideAWindow(t *testing.T) {
	var all []string
	for id := 1000; id <= 1999; id++ {
		all = append(all, strconv.Itoa(id))
	}
	for id := 10000; id <= 29990; id += 10 {
		all = append(all, strconv.Itoa(id))
	}
	for _, readahead := range []string{"", "readahead_ttl 0"} {
		t.Run(fmt.Sprintf("%q", readahead), func(t *testing.T) {
			b := newKeysetBackend("id_gt={id}", cursor.Numeric, all)
			b.mode = "text"
			c := gatewaytest.StartBehind(t, fmt.Sprintf(gatewaySite, "backend_keyset id_gt={id}\n\t\t"+readahead), b)
			for _, perPage := range []int{10, 100} {
				assert.Equal(t, all, walkKeyset(t, c.URL, perPage, ""), "%d a page", perPage)
			}
		})
	}
}

// TestKeysetLongAnswersThroughCaddy: a keyset answer longer than asked is
// handled as an offset answer is. Past backend_max_per_page it is a 502
// naming backend_keyset and backend_max_per_page; within it (after 999
// fewer than 200 records are left) the page is served exactly, also from a backend
// that compares ids as text.
func TestKeysetLongAnswersThroughCaddy(t *testing.T) {
	all := denseIDs(800)
	for _, tc := range []struct {
		mode, options string
		refused       bool
	}{
		{"", "backend_max_per_page 200", true},
		{"", "backend_max_per_page 1000", false},
		{"text", "backend_max_per_page 1000", false},
	} {
		t.Run(tc.mode+" "+tc.options, func(t *testing.T) {
			b := newKeysetBackend("id_gt={id}", cursor.Numeric, all)
			b.mode, b.keyedSize = tc.mode, 300
			c := gatewaytest.StartBehind(t, fmt.Sprintf(gatewaySite, "backend_keyset id_gt={id}\n\t\treadahead_ttl 0\n\t\t"+tc.options), b)
			for _, after := range []string{"9", "99", "999"} {
				at, _ := slices.BinarySearchFunc(all, after, cursor.Numeric.Compare)
				if tc.refused && len(all)-at > 200 { // more than backend_max_per_page sent
					a := get(t, fmt.Sprintf("%s/calls?_perPage=10&_cursor=%s", c.URL, url.QueryEscape(cursorFor(after))))
					require.Equal(t, http.StatusBadGateway, a.status, string(a.body))
					assert.Contains(t, string(a.body), "backend_keyset window after id")
					assert.Contains(t, string(a.body), "backend_max_per_page")
					continue
				}
				keysetPage(t, fmt.Sprintf("%s/calls?_perPage=10&_cursor=%s", c.URL, url.QueryEscape(cursorFor(after))), all, after, 10)
			}
		})
	}
}
