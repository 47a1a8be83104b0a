package caddymodule_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// envelopeBackend pages n records by _page/_perPage inside an envelope
// that describes its window as frameworks do: page number, page size,
// offset, limit, page count and next/previous links to its own address,
// beside counts of the whole list. With nested set, the records sit at
// result.items, with paging members beside them too.
type envelopeBackend struct {
	n      int
	nested bool
}

func (e envelopeBackend) record(i int) string {
	return fmt.Sprintf(`{ "id" : %d, "note":"r\u00e9cord %d" }`, 100+2*i, i)
}

func (e envelopeBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	page, _ := strconv.Atoi(q.Get("_page"))
	size, _ := strconv.Atoi(q.Get("_perPage"))
	from, to := min((page-1)*size, e.n), min(page*size, e.n)
	recs := make([]string, 0, to-from)
	for i := from; i < to; i++ {
		recs = append(recs, e.record(i))
	}
	link := func(p int) string {
		return fmt.Sprintf(`"http://backend.internal:8000/calls?_page=%d&_perPage=%d"`, p, size)
	}
	records := "[" + strings.Join(recs, ",") + "]"
	if e.nested {
		records = fmt.Sprintf(`{"page":%d,"items":%s,"next":%s}`, page, records, link(page+1))
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"page":%d,"per_page":%d,"perPage":%d,"offset":%d,"limit":%d,"total":%d,"totalItems":%d,"total_pages":%d,`+
		`"prev":%s,%q:%s,"next":%s,"links":{"next":%s},"_page":%d,"current_page":%d,"next_page_url":%s,"source":"helpdesk"}`,
		page, size, size, from, size, e.n, e.n, (e.n+size-1)/size, link(page-1), map[bool]string{false: "data", true: "result"}[e.nested], records, link(page+1), link(page+1), page, page, link(page+1))
}

// TestEnvelopeMembersDropped: a composed page's envelope says nothing of
// the backend's window (page, per_page, offset, limit, page count,
// next/previous links, the backend's own paging names), so a client never
// sees the backend's address nor a page number that is not the page it
// got. Counts of the whole list stay, the records are the backend's bytes,
// and drop_envelope_members replaces the list.
func TestEnvelopeMembersDropped(t *testing.T) {
	e := envelopeBackend{n: 200}
	c := startEnvelope(t, e, "records_path data")
	want := e.records
	for _, tc := range []struct {
		query    string
		from, to int
	}{
		{"_perPage=10", 0, 10},
		{"_perPage=10&_cursor=" + cursorFor("170"), 36, 46}, // id 170 is record 35
		{"_perPage=40&_cursor=" + cursorFor("150"), 26, 66}, // several calls
		{"_page=3&_perPage=7", 14, 21},
	} {
		a := get(t, c.URL+"/calls?"+tc.query)
		require.Equal(t, http.StatusOK, a.status, string(a.body))
		env := members(t, a.body)
		assert.Equal(t, want(tc.from, tc.to), string(env["data"]), "%s: the records' bytes as the backend sent them", tc.query)
		assert.Equal(t, `200`, string(env["total"]), "counts of the whole list stay")
		assert.Equal(t, `200`, string(env["totalItems"]))
		assert.Equal(t, `"helpdesk"`, string(env["source"]), "a member not in the list stays")
		for _, name := range []string{"page", "per_page", "perPage", "offset", "limit", "total_pages", "prev", "next", "_page",
			"links", "current_page", "next_page_url"} {
			assert.NotContains(t, env, name, "%s: %s describes the backend's window", tc.query, name)
		}
		assert.Equal(t, strconv.Itoa(len(a.body)), a.header.Get("Content-Length"))
	}
}

// TestDropEnvelopeMembersReplacesTheList: the option replaces the default
// list, as drop_backend_headers does for headers.
func TestDropEnvelopeMembersReplacesTheList(t *testing.T) {
	e := envelopeBackend{n: 200}
	c := startEnvelope(t, e, "records_path data\n\t\tdrop_envelope_members page links")
	want := e.records
	a := get(t, c.URL+"/calls?_perPage=10")
	require.Equal(t, http.StatusOK, a.status, string(a.body))
	env := members(t, a.body)
	assert.NotContains(t, env, "page")
	assert.NotContains(t, env, "links")
	assert.Contains(t, env, "per_page", "not in the list given")
	assert.Contains(t, env, "next")
	assert.Equal(t, want(0, 10), string(env["data"]))
}

// TestEnvelopeNestedRecordsPath: with records at result.items, the
// envelope's top-level paging members go; those beside the records, inside
// result, are left as they came (documented).
func TestEnvelopeNestedRecordsPath(t *testing.T) {
	e := envelopeBackend{n: 200, nested: true}
	c := startEnvelope(t, e, "records_path result.items")
	want := e.records
	a := get(t, c.URL+"/calls?_perPage=5&_cursor="+cursorFor("100"))
	require.Equal(t, http.StatusOK, a.status, string(a.body))
	env := members(t, a.body)
	assert.NotContains(t, env, "page")
	assert.NotContains(t, env, "next")
	assert.Equal(t, `200`, string(env["total"]))
	result := members(t, env["result"])
	assert.Equal(t, want(1, 6), string(result["items"]))
	assert.Contains(t, result, "page", "documented: members beside the records are left as they came")
}

// TestReferenceEnvelopeMembersDropped: the reference backend's envelope,
// {"data": [...], "total": N, "page": P, "per_page": S}, keeps its total.
func TestReferenceEnvelopeMembersDropped(t *testing.T) {
	c, b, _ := startGateway(t, reference.Config{Seed: 29, Records: 120, Envelope: "data"}, "records_path data")
	all := strIDs(b.IDs("calls"))
	a := get(t, c.URL+"/calls?_perPage=10&_cursor="+cursorFor(all[50]))
	require.Equal(t, http.StatusOK, a.status, string(a.body))
	assert.Equal(t, all[51:61], a.ids(t, "data"))
	env := members(t, a.body)
	assert.Equal(t, []string{"data", "total"}, slices.Sorted(maps.Keys(env)), "no page nor per_page of the backend's window")
}

func startEnvelope(t *testing.T, e envelopeBackend, options string) *gatewaytest.Caddy {
	t.Helper()
	return gatewaytest.StartBehind(t, "http://:0 {\n\thelpdesk_gateway {\n\t\tbackend_max_per_page 25\n\t\t"+options+"\n\t}\n\treverse_proxy {backend}\n}\n", e)
}

// records is the records array of records [from, to) as the backend
// writes it.
func (e envelopeBackend) records(from, to int) string {
	recs := make([]string, 0, to-from)
	for i := from; i < to; i++ {
		recs = append(recs, e.record(i))
	}
	return "[" + strings.Join(recs, ",") + "]"
}

func members(t *testing.T, body []byte) map[string]json.RawMessage {
	t.Helper()
	var env map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(body, &env), string(body))
	return env
}
