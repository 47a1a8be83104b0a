package reference

import (
	"math"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/legacy"
)

// TestPagingDialects: the backend reads its window by the names of its
// own dialect, and ignores the names of another, as any backend ignores
// parameters it does not know.
func TestPagingDialects(t *testing.T) {
	const byID = "&_sortField=id&_sortDir=ASC"
	zendesk := legacy.Dialect{Page: "page", PerPage: "per_page"}
	fromZero := legacy.Dialect{Page: "page", PerPage: "size", FromZero: true}
	offsets := legacy.Dialect{Offset: "startAt", PerPage: "maxResults"}
	for _, tc := range []struct {
		name   string
		d      legacy.Dialect
		query  string
		from   int // the offset of the first record wanted
		n      int // records wanted
		window [2]int
	}{
		{"zendesk: page 3", zendesk, "page=3&per_page=10", 20, 10, [2]int{20, 10}},
		{"zendesk: defaults", zendesk, "", 0, 10, [2]int{0, 10}},
		{"zendesk: LiveAgent's names are not its own", zendesk, "_page=3&_perPage=5", 0, 10, [2]int{0, 10}},
		{"zendesk: size clamped", zendesk, "page=2&per_page=100", 40, 40, [2]int{40, 40}},
		{"from 0: page 0 is the first", fromZero, "page=0&size=7", 0, 7, [2]int{0, 7}},
		{"from 0: page 2 is the third", fromZero, "page=2&size=7", 14, 7, [2]int{14, 7}},
		{"from 0: default page", fromZero, "size=4", 0, 4, [2]int{0, 4}},
		{"offsets: any start", offsets, "startAt=13&maxResults=6", 13, 6, [2]int{13, 6}},
		{"offsets: start 0", offsets, "startAt=0&maxResults=6", 0, 6, [2]int{0, 6}},
		{"offsets: default start", offsets, "maxResults=6", 0, 6, [2]int{0, 6}},
		{"offsets: a page number means nothing", offsets, "_page=5&page=5&startAt=1&maxResults=2", 1, 2, [2]int{1, 2}},
		{"offsets: short at the end", offsets, "startAt=90&maxResults=10", 90, 5, [2]int{90, 10}},
		{"offsets: past the end", offsets, "startAt=95&maxResults=10", 95, 0, [2]int{95, 10}},
		{"offsets: beyond int", offsets, "startAt=999999999999999999999999", 95, 0, [2]int{math.MaxInt, 10}},
		{"offsets: limit clamped", offsets, "startAt=50&maxResults=1000", 50, 40, [2]int{50, 40}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := New(Config{Seed: 1, Records: 95, MaxPerPage: 40, Paging: tc.d})
			all := b.IDs("calls")
			a := get(t, b, "/calls?"+tc.query+byID)
			require.Equal(t, http.StatusOK, a.code, string(a.body))
			assert.Equal(t, all[tc.from:tc.from+tc.n], a.ids())
			q, _ := url.ParseQuery(tc.query)
			start, size, ok := b.Window("calls", q)
			assert.True(t, ok)
			assert.Equal(t, tc.window, [2]int{start, size}, "Window")
		})
	}
}

func TestPagingDialectRefusals(t *testing.T) {
	for _, tc := range []struct {
		d           legacy.Dialect
		query, want string
	}{
		{legacy.Dialect{Page: "page", PerPage: "per_page"}, "page=0", `page "0": use a whole number of at least 1`},
		{legacy.Dialect{Page: "page", PerPage: "per_page"}, "per_page=0", `per_page "0": use a whole number of at least 1`},
		{legacy.Dialect{Page: "page", FromZero: true}, "page=-1", `page "-1": use a whole number of at least 0`},
		{legacy.Dialect{Offset: "offset", PerPage: "limit"}, "offset=-1", `offset "-1": use a whole number of at least 0`},
		{legacy.Dialect{Offset: "offset", PerPage: "limit"}, "limit=x", `limit "x"`},
	} {
		t.Run(tc.query, func(t *testing.T) {
			b := New(Config{Seed: 1, Records: 20, Paging: tc.d})
			a := get(t, b, "/calls?"+tc.query)
			assert.Equal(t, http.StatusBadRequest, a.code)
			assert.Contains(t, a.message(t), tc.want)
			q, _ := url.ParseQuery(tc.query)
			_, _, ok := b.Window("calls", q)
			assert.False(t, ok)
		})
	}
}

func TestEnvelopeNamesTheWindow(t *testing.T) {
	b := New(Config{Seed: 1, Records: 30, Envelope: "data", Paging: legacy.Dialect{Offset: "offset", PerPage: "limit"}})
	a := get(t, b, "/calls?offset=5&limit=3")
	require.Equal(t, http.StatusOK, a.code)
	assert.Contains(t, string(a.body), `,"total":30,"offset":5,"limit":3}`)
	b = New(Config{Seed: 1, Records: 30, Envelope: "data", Paging: legacy.Dialect{Page: "p", PerPage: "n", FromZero: true}})
	a = get(t, b, "/calls?p=0&n=3")
	assert.Contains(t, string(a.body), `,"total":30,"page":0,"per_page":3}`)
}
