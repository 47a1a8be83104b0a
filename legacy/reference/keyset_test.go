package reference

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/legacy"
)

// TestKeysetStyles: the backend reads the keyset condition in each of the
// four forms, strict or inclusive, bare or in an envelope, and applies it
// before the page: the records above the id (at or above, inclusive), in
// id order, the page size of the dialect.
func TestKeysetStyles(t *testing.T) {
	const byID = "&_sortField=id&_sortDir=ASC"
	for _, tc := range []struct {
		name      string
		d         legacy.Dialect
		inclusive bool
		envelope  string
		query     func(id int64) string
	}{
		{"id_gt", legacy.Dialect{Keyset: "id_gt={id}"}, false, "", func(id int64) string { return fmt.Sprintf("id_gt=%d&_perPage=5", id) }},
		{"json-server id_gte", legacy.Dialect{Keyset: "id_gte={id}", PerPage: "_limit"}, true, "", func(id int64) string { return fmt.Sprintf("id_gte=%d&_limit=5", id) }},
		{"PostgREST id=gt.", legacy.Dialect{Keyset: "id=gt.{id}", Offset: "offset", PerPage: "limit"}, false, "data", func(id int64) string { return fmt.Sprintf("id=gt.%d&limit=5", id) }},
		{"PocketBase filter", legacy.Dialect{Keyset: "filter=(id>'{id}')", Page: "page", PerPage: "perPage"}, false, "items",
			func(id int64) string { return "perPage=5&filter=" + url.QueryEscape(fmt.Sprintf("(id>'%d')", id)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := New(Config{Seed: 4, Records: 50, Paging: tc.d, KeysetInclusive: tc.inclusive, Envelope: tc.envelope})
			all := b.IDs("calls")
			ids := func(a answer) []int64 {
				require.Equal(t, http.StatusOK, a.code, string(a.body))
				if tc.envelope == "" {
					return a.ids()
				}
				var env map[string]json.RawMessage
				require.NoError(t, json.Unmarshal(a.body, &env), string(a.body))
				var recs []struct{ ID int64 }
				require.NoError(t, json.Unmarshal(env[tc.envelope], &recs))
				out := []int64{}
				for _, r := range recs {
					out = append(out, r.ID)
				}
				return out
			}
			for _, i := range []int{0, 10, 44, 49} {
				from := i + 1
				if tc.inclusive {
					from = i
				}
				assert.Equal(t, all[from:min(from+5, len(all))], ids(get(t, b, "/calls?"+tc.query(all[i])+byID)), "after the record at %d", i)
				// an id between records: the next record on, either way
				assert.Equal(t, all[i+1:min(i+6, len(all))], ids(get(t, b, "/calls?"+tc.query(all[i]+1)+byID)), "after a gap at %d", i)
				q, _ := url.ParseQuery(tc.query(all[i]))
				start, _, ok := b.Window("calls", q)
				assert.True(t, ok)
				assert.Equal(t, from, start, "Window")
			}
			assert.Equal(t, all[:5], ids(get(t, b, "/calls?"+tc.query(-5)+byID)), "below every id")
			assert.Empty(t, ids(get(t, b, "/calls?"+tc.query(all[49]+100)+byID)), "above every id")
		})
	}
}

func TestKeysetRefusalsAndHugeIDs(t *testing.T) {
	b := New(Config{Seed: 4, Records: 20, Paging: legacy.Dialect{Keyset: "filter=(id>'{id}')"}})
	for _, tc := range []struct{ query, want string }{
		{"filter=" + url.QueryEscape("(id>5)"), `filter "(id>5)": write (id>'<id>')`},
		{"filter=" + url.QueryEscape("(id>'abc')"), `"abc" is not a whole number`},
		{"filter=" + url.QueryEscape("(id>'')"), `"" is not a whole number`},
		{"filter=x", `filter "x": write (id>'<id>')`},
	} {
		a := get(t, b, "/calls?"+tc.query)
		assert.Equal(t, http.StatusBadRequest, a.code, tc.query)
		assert.Contains(t, a.message(t), tc.want)
	}
	all := b.IDs("calls")
	a := get(t, b, "/calls?_sortField=id&_sortDir=ASC&filter="+url.QueryEscape("(id>'99999999999999999999999')"))
	assert.Empty(t, a.ids(), "above any int64")
	a = get(t, b, "/calls?_sortField=id&_sortDir=ASC&_perPage=3&filter="+url.QueryEscape("(id>'-99999999999999999999999')"))
	assert.Equal(t, all[:3], a.ids(), "below any int64")
	a = get(t, b, "/calls?_sortField=id&_sortDir=ASC&_perPage=3&id_gt=5")
	assert.Equal(t, all[:3], a.ids(), "another backend's form is ignored, as any unknown parameter")
	assert.Panics(t, func() { New(Config{Paging: legacy.Dialect{Keyset: "id_gt=1"}}) })
}

// TestSteppedCounts: Stepped counts the offset and the records sent of
// page and offset calls (what SQL's OFFSET walks), and for keyset calls
// only the records sent, however deep the id. Past the end the offset
// still walks the whole list.
func TestSteppedCounts(t *testing.T) {
	b := New(Config{Seed: 4, Records: 100, Paging: legacy.Dialect{Keyset: "id_gt={id}"}})
	all := b.IDs("calls")
	get(t, b, "/calls?_page=3&_perPage=10")
	assert.Equal(t, int64(30), b.Stepped("calls"), "offset 20 and 10 sent")
	get(t, b, "/calls?_page=11&_perPage=10")
	assert.Equal(t, int64(130), b.Stepped("calls"), "past the end: the offset walks the whole list to find nothing")
	get(t, b, "/calls?_page=10&_perPage=20")
	assert.Equal(t, int64(230), b.Stepped("calls"), "offset 180 is past the 100 records there are")
	get(t, b, fmt.Sprintf("/calls?_sortField=id&_sortDir=ASC&_perPage=11&id_gt=%d", all[80]))
	assert.Equal(t, int64(241), b.Stepped("calls"), "a deep keyset call steps through what it sends")
	get(t, b, fmt.Sprintf("/calls?_sortField=id&_sortDir=ASC&_perPage=11&id_gt=%d", all[95]))
	assert.Equal(t, int64(245), b.Stepped("calls"), "4 records left")
	assert.Equal(t, int64(10+11+4), b.Served("calls"))
	assert.Zero(t, b.Stepped("nolist"))
}
