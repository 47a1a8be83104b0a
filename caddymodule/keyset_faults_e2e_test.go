package caddymodule_test

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/helpdesk-gateway/gateway/legacy"
)

// walkKeyset walks a keysetBackend's list by cursor through the gateway,
// retrying a 503 for max_subrequests as the gateway asks, and returns the
// ids served.
func walkKeyset(t *testing.T, base string, perPage int, envelope string) []string {
	t.Helper()
	var ids []string
	cursor := ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, 10000)
		u := fmt.Sprintf("%s/calls?_perPage=%d", base, perPage)
		if cursor != "" {
			u += "&_cursor=" + url.QueryEscape(cursor)
		}
		a := get(t, u)
		for try := 0; try < 5 && a.status == http.StatusServiceUnavailable; try++ {
			a = get(t, u)
		}
		require.Equal(t, http.StatusOK, a.status, string(a.body))
		ids = append(ids, stringIDs(t, a, envelope)...)
		if cursor = a.header.Get("next_page_cursor"); cursor == "" {
			return ids
		}
	}
}

// stringIDs returns the ids of a page, JSON strings decoded.
func stringIDs(t *testing.T, a answer, envelope string) []string {
	t.Helper()
	body := a.body
	if envelope != "" {
		var env map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(body, &env), string(body))
		body = env[envelope]
	}
	var recs []struct{ ID json.RawMessage }
	require.NoError(t, json.Unmarshal(body, &recs), string(body))
	out := make([]string, len(recs))
	for i, r := range recs {
		var s string
		if json.Unmarshal(r.ID, &s) != nil {
			s = string(r.ID) // a number as written
		}
		out[i] = s
	}
	return out
}

// misreads returns the gateway's backend_keyset_misreads_total of
// /calls: the counters are the process's, so tests compare before and
// after.
func misreads(t *testing.T, admin string) string {
	t.Helper()
	resp, err := gatewaytest.Client.Get("http://" + admin + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	metrics, _ := io.ReadAll(resp.Body)
	for line := range strings.SplitSeq(string(metrics), "\n") {
		if v, ok := strings.CutPrefix(line, `helpdesk_gateway_backend_keyset_misreads_total{endpoint="/calls"} `); ok {
			return v
		}
	}
	return "0"
}

// assertExactWalk checks a walk under churn: ids strictly ascending, and
// every id of initial served unless it was deleted on the way.
func assertExactWalk(t *testing.T, order cursor.Order, initial, walk []string, deleted map[string]bool) {
	t.Helper()
	for i := 1; i < len(walk); i++ {
		require.Negative(t, order.Compare(walk[i-1], walk[i]), "ids strictly ascending, no duplicate: %q then %q", walk[i-1], walk[i])
	}
	for _, id := range initial {
		if _, found := slices.BinarySearchFunc(walk, id, order.Compare); !found && !deleted[id] {
			t.Errorf("record %q existed throughout but was skipped", id)
		}
	}
}

// TestKeysetFormsNumericAndLexicalUnderChurn: each of the four forms,
// against a backend that reads it as that backend does (json-server's
// inclusive), with numeric and lexical ids, bare or in an envelope, while
// the list changes around every keyset call: walks are exact.
func TestKeysetFormsNumericAndLexicalUnderChurn(t *testing.T) {
	forms := []struct {
		tmpl      string
		inclusive bool
	}{{"id_gt={id}", false}, {"id_gte={id}", true}, {"id=gt.{id}", false}, {"filter=(id>'{id}')", false}}
	for i, f := range forms {
		for _, order := range []cursor.Order{cursor.Numeric, cursor.Lexical} {
			envelope := []string{"", "data"}[(i+int(order))%2]
			t.Run(fmt.Sprintf("%s/%s/envelope=%q", f.tmpl, order, envelope), func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(i), uint64(order)))
				ids := numericIDs(r, 600)
				if order == cursor.Lexical {
					ids = lexicalIDs(r, 600)
				}
				b := newKeysetBackend(f.tmpl, order, ids)
				b.inclusive, b.envelope, b.churn = f.inclusive, envelope, rand.New(rand.NewPCG(7, uint64(i)))
				initial := b.snapshot()
				options := fmt.Sprintf("backend_keyset %q\n\t\tid_order %s\n\t\tbackend_max_per_page 50", f.tmpl, order)
				if envelope != "" {
					options += "\n\t\trecords_path " + envelope
				}
				c := gatewaytest.StartBehind(t, fmt.Sprintf(gatewaySite, options), b)
				for _, perPage := range []int{7, 49, 60} {
					walk := walkKeyset(t, c.URL, perPage, envelope)
					b.mu.Lock()
					deleted := maps.Clone(b.deleted)
					b.mu.Unlock()
					assertExactWalk(t, order, initial, walk, deleted)
				}
				keyed := 0
				for _, q := range b.seen() {
					if v, _ := url.ParseQuery(q); v.Has(b.tmpl.Param) {
						keyed++
					}
				}
				assert.Greater(t, keyed, 600/60, "the walks were asked by keyset")
				assert.NotEmpty(t, b.deleted, "the churn happened")
			})
		}
	}
}

// TestKeysetMisreadingBackends: a backend that ignores the condition
// (answers from the list's start) or misreads it (answers records at or
// below the cursor) is never served as if it kept it: every page is
// right, read by offset; the list is learned once (one misread counted)
// and no keyset call is made for it after the first.
func TestKeysetMisreadingBackends(t *testing.T) {
	for _, mode := range []string{"ignore", "below"} {
		for _, order := range []cursor.Order{cursor.Numeric, cursor.Lexical} {
			t.Run(fmt.Sprintf("%s/%s", mode, order), func(t *testing.T) {
				r := rand.New(rand.NewPCG(9, uint64(order)))
				ids := numericIDs(r, 400)
				if order == cursor.Lexical {
					ids = lexicalIDs(r, 400)
				}
				b := newKeysetBackend("id_gt={id}", order, ids)
				b.mode = mode
				all := b.snapshot()
				c := gatewaytest.StartBehind(t, fmt.Sprintf(gatewaySite, "backend_keyset id_gt={id}\n\t\tid_order "+order.String()), b, gatewaytest.Options{Admin: true})
				before, err := strconv.Atoi(misreads(t, c.Admin))
				require.NoError(t, err)
				for _, perPage := range []int{10, 33} {
					assert.Equal(t, all, walkKeyset(t, c.URL, perPage, ""), "%d per page", perPage)
				}
				// a hand-built cursor anywhere is right too
				for _, at := range []int{0, 150, 398, 399} {
					a := get(t, fmt.Sprintf("%s/calls?_perPage=5&_cursor=%s", c.URL, url.QueryEscape(cursorFor(all[at]))))
					require.Equal(t, http.StatusOK, a.status, string(a.body))
					assert.Equal(t, all[at+1:min(at+6, len(all))], stringIDs(t, a, ""))
				}
				keyed := 0
				for _, q := range b.seen() {
					if strings.Contains(q, "id_gt=") {
						keyed++
					}
				}
				assert.Equal(t, 1, keyed, "one keyset call shows the misread; the list is read by offset after it")
				assert.Equal(t, strconv.Itoa(before+1), misreads(t, c.Admin), "one misread counted")

				// another list identity (a filter the backend ignores) learns it on its own
				a := get(t, fmt.Sprintf("%s/calls?_perPage=5&other=1&_cursor=%s", c.URL, url.QueryEscape(cursorFor(all[200]))))
				require.Equal(t, http.StatusOK, a.status, string(a.body))
				assert.Equal(t, all[201:206], stringIDs(t, a, ""))
				assert.Equal(t, strconv.Itoa(before+2), misreads(t, c.Admin), "one misread counted")
			})
		}
	}
}

// TestKeysetHostileCursorIDs: cursor ids a keyset query could not carry
// safely (quotes, '&', '%', ')', spaces, unicode, control bytes) are
// never written into it: those pages are read by offset, and right; ids
// of the safe set, a 512-byte one included, are asked by keyset, and
// every query the backend received parses back to exactly its own
// parameters, the condition holding exactly the id. Read-ahead off, every
// page is a call the backend sees; on, the keyset windows read ahead are
// anchored at ids the backend sent, which are held to the same rule.
func TestKeysetHostileCursorIDs(t *testing.T) {
	hostile := []string{"a'b", "a')||(id>'", `a\'`, "a&id_gt=0", "a%27b", "a%", "a)b", "a b", "a+b", "a,b",
		"a;b", "a#b", "é", "a\u202eb", "a\x01b", "a*", "a\"b", "z/../x"}
	safe := []string{"a-b", "a.b", "a~b", "a:b", "a_b", strings.Repeat("q", 512)}
	for _, tc := range []struct{ tmpl, readahead string }{
		{"filter=(id>'{id}')", "readahead_ttl 0"}, {"id=gt.{id}", "readahead_ttl 0"}, {"id=gt.{id}", ""},
	} {
		tmpl := tc.tmpl
		t.Run(fmt.Sprintf("%s/%q", tmpl, tc.readahead), func(t *testing.T) {
			r := rand.New(rand.NewPCG(11, 11))
			b := newKeysetBackend(tmpl, cursor.Lexical, append(append(lexicalIDs(r, 300), hostile...), safe...))
			all := b.snapshot()
			c := gatewaytest.StartBehind(t, fmt.Sprintf(gatewaySite, fmt.Sprintf("backend_keyset %q\n\t\tid_order lexical\n\t\t%s", tmpl, tc.readahead)), b)
			assert.Equal(t, all, walkKeyset(t, c.URL, 4, ""), "a walk through every hostile id")
			for _, id := range append(slices.Clone(hostile), safe...) {
				at, found := slices.BinarySearch(all, id)
				require.True(t, found)
				a := get(t, fmt.Sprintf("%s/calls?_perPage=3&_cursor=%s", c.URL, url.QueryEscape(cursorFor(id))))
				require.Equal(t, http.StatusOK, a.status, "%q: %s", id, a.body)
				assert.Equal(t, all[at+1:min(at+4, len(all))], stringIDs(t, a, ""), "after %q", id)
			}
			// between ids, not records of the list
			for _, id := range []string{"a'", "a&", "b)", "q%"} {
				a := get(t, fmt.Sprintf("%s/calls?_perPage=3&_cursor=%s", c.URL, url.QueryEscape(cursorFor(id))))
				require.Equal(t, http.StatusOK, a.status, "%q: %s", id, a.body)
				at, _ := slices.BinarySearch(all, id)
				assert.Equal(t, all[at:min(at+3, len(all))], stringIDs(t, a, ""), "after %q", id)
			}

			kt := b.tmpl
			keyed := map[string]bool{}
			for _, raw := range b.seen() {
				v, err := url.ParseQuery(raw)
				require.NoError(t, err, raw)
				for name := range v {
					require.Contains(t, []string{"_sortField", "_sortDir", "_page", "_perPage", kt.Param}, name, "an injected parameter in %s", raw)
				}
				cond, ok := v[kt.Param]
				if !ok {
					continue
				}
				require.Len(t, cond, 1, raw)
				id, found := strings.CutPrefix(cond[0], kt.Prefix)
				require.True(t, found, raw)
				id, found = strings.CutSuffix(id, kt.Suffix)
				require.True(t, found, raw)
				require.NoError(t, legacy.Dialect{Keyset: tmpl}.KeysetCheck(id), "an unsafe id reached the backend: %s", raw)
				assert.NotContains(t, raw, "&_page=", "a keyset call has no page number: %s", raw)
				keyed[id] = true
			}
			for _, id := range safe {
				if tc.readahead != "" { // read-ahead off: every cursor page is a call (on, a window may hold it)
					assert.True(t, keyed[id], "a safe id is asked by keyset: %.20q", id)
				}
			}
			for _, id := range hostile {
				assert.False(t, keyed[id], "%q", id)
			}
		})
	}
}
