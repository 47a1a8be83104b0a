package caddymodule_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/cursor"
)

// TestSubrequestLimit checks that max_subrequests bounds the backend calls
// of one client request, with a 503 that says what happened and when to
// retry, and that the gateway keeps serving pages that fit the budget.
func TestSubrequestLimit(t *testing.T) {
	b := numericList(5000)
	ids := b.ids()
	c, f, logs := startFaulty(t, b, "max_subrequests 1", "")

	// A cold index must search for this cursor: more than one call.
	f.arm(0, nil)
	a := get(t, c.URL+"/calls?_perPage=10&apikey=s3cret&_cursor="+cursorFor(ids[3500]))
	require.Equal(t, http.StatusServiceUnavailable, a.status, string(a.body))
	assert.Equal(t, "1", a.header.Get("Retry-After"))
	assert.Contains(t, assertNoPage(t, a), "more than max_subrequests (1) backend calls")
	assert.Len(t, f.seen(), 1, "the backend calls made")
	require.Eventually(t, func() bool { return len(logs()) > 0 }, 2*time.Second, 10*time.Millisecond)
	e := logs()[0]
	assert.Equal(t, "sub-request limit reached", e["msg"])
	assert.Equal(t, "/calls", e["endpoint"])
	assert.EqualValues(t, 1, e["max_subrequests"])

	// Pages that fit the budget are served.
	f.arm(0, nil)
	a = get(t, c.URL+"/calls?_perPage=10")
	require.Equal(t, http.StatusOK, a.status, string(a.body))
	assert.Equal(t, ids[:10], a.ids(t))
	a = get(t, c.URL+"/calls?_perPage=10&_cursor="+a.header.Get("next_page_cursor"))
	require.Equal(t, http.StatusOK, a.status, string(a.body))
	assert.Equal(t, ids[10:20], a.ids(t))
	assert.Len(t, f.seen(), 2)
}

// TestClientInputLimits checks the size limits on what a client sends:
// each is refused with 400 before the backend is called.
func TestClientInputLimits(t *testing.T) {
	b := numericList(50)
	c, f, _ := startFaulty(t, b,
		"max_query_length 6KiB\n\t\tmax_per_page 100\n\t\tmax_filters 2\n\t\tmax_filters_length 120\n\t\tcursor_endpoints /calls", "")
	for _, tc := range []struct {
		name, uri, want string
	}{
		{"query too long on a cursor endpoint", "/calls?x=" + strings.Repeat("a", 6<<10), "the query is longer than 6144 bytes"},
		{"query too long on a filter endpoint", "/tickets?x=" + strings.Repeat("a", 6<<10), "the query is longer than 6144 bytes"},
		{"cursor too long", "/calls?_cursor=" + strings.Repeat("A", cursor.MaxLength+4), fmt.Sprintf("longer than %d bytes", cursor.MaxLength)},
		{"cursor id too long", "/calls?_cursor=" + cursorFor(strings.Repeat("9", cursor.MaxIDLength+1)), "longer than 512 bytes"},
		{"perPage above max_per_page", "/calls?_perPage=101", "from 1 to 100"},
		{"perPage huge", "/calls?_perPage=" + strings.Repeat("9", 40), "from 1 to 100"},
		{"page huge", "/calls?_page=" + strings.Repeat("9", 40), "_page must be"},
		{"page past its bound", "/calls?_perPage=1&_page=1099511627777", "_page must be a whole number from 1 to 1099511627776,"},
		{"filters too long", "/tickets?_filters=" + url.QueryEscape(`{"subject":"`+strings.Repeat("x", 120)+`"}`), "_filters"},
		{"too many filters", "/tickets?_filters=" + url.QueryEscape(`[["status","E","C"],["status","E","L"],["status","E","R"]]`), "_filters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.arm(0, nil)
			a := get(t, c.URL+tc.uri)
			require.Equal(t, http.StatusBadRequest, a.status, string(a.body))
			assert.Contains(t, a.message(t), tc.want)
			assert.Empty(t, f.seen(), "the backend must not be called")
		})
	}

	t.Run("a _page inside its stated bound is served", func(t *testing.T) {
		for _, page := range []string{"1000000000000", "1099511627776"} {
			f.arm(0, nil)
			a := get(t, c.URL+"/calls?_perPage=1&_page="+page)
			require.Equal(t, http.StatusOK, a.status, string(a.body))
			assert.Empty(t, a.ids(t), "past the list's end")
			assert.Empty(t, a.header.Get("next_page_cursor"))
		}
	})

	t.Run("limits leave normal requests alone", func(t *testing.T) {
		f.arm(0, nil)
		a := get(t, c.URL+"/calls?_perPage=100&x="+strings.Repeat("a", 5<<10))
		require.Equal(t, http.StatusOK, a.status, string(a.body))
		assert.Len(t, a.ids(t), 50)
		a = get(t, c.URL+"/tickets?_filters="+url.QueryEscape(`[["status","E","C"],["status","E","L"]]`))
		require.Equal(t, http.StatusOK, a.status, string(a.body))
		// Two calls for the page: its first answer, 50 records where 101
		// were asked on an endpoint that has sent nothing larger, could be
		// a clamp, and one call past it shows the list's end; then one for
		// the filters.
		assert.Len(t, f.seen(), 3)
	})
}
