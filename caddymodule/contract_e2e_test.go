package caddymodule_test

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// cursorEndpoints are the spec's four cursor-paged lists, as the reference
// backend names them.
var cursorEndpoints = []string{"calls", "grid/reports/time", "phone_numbers", "tickets/history"}

// TestContractOnEveryEndpoint shows points 1 to 3 of the design's client
// contract on each of the four lists, through a real Caddy in front of the
// reference backend: the first page, client-built cursors for ids that
// exist, that do not, below the first, at the last and past it, and walks
// that end without an empty page.
func TestContractOnEveryEndpoint(t *testing.T) {
	c, b, _ := startGateway(t, reference.Config{Seed: 5, Records: 240}, "default_per_page 7")
	for _, list := range cursorEndpoints {
		all := strIDs(b.IDs(list))
		last := all[len(all)-1]
		n, _ := strconv.ParseInt(last, 10, 64)
		t.Run(list, func(t *testing.T) {
			for _, tc := range []struct {
				name   string
				query  string
				want   []string
				cursor string // the next_page_cursor expected, "" for none
			}{
				{"first page", "_perPage=4", all[:4], all[3]},
				{"no _perPage: default_per_page", "", all[:7], all[6]},
				{"existing id", "_perPage=3&_cursor=" + cursorFor(all[50]), all[51:54], all[53]},
				{"missing id", "_perPage=3&_cursor=" + cursorFor(between(t, all[50], all[51])), all[51:54], all[53]},
				{"below the first", "_perPage=3&_cursor=" + cursorFor("0"), all[:3], all[2]},
				{"negative, below the first", "_perPage=3&_cursor=" + cursorFor("-12"), all[:3], all[2]},
				{"at the last: empty, no cursor", "_perPage=3&_cursor=" + cursorFor(last), []string{}, ""},
				{"past the last: empty, no cursor", "_perPage=3&_cursor=" + cursorFor(strconv.FormatInt(n+1, 10)), []string{}, ""},
				{"far past the last", "_perPage=3&_cursor=" + cursorFor("99999999999999999999999999"), []string{}, ""},
				{"one before the last: no cursor, no empty page next", "_perPage=3&_cursor=" + cursorFor(all[len(all)-2]), all[len(all)-1:], ""},
				{"ends exactly on the last", "_perPage=3&_cursor=" + cursorFor(all[len(all)-4]), all[len(all)-3:], ""},
			} {
				t.Run(tc.name, func(t *testing.T) {
					a := get(t, c.URL+"/"+list+"?"+tc.query)
					require.Equal(t, http.StatusOK, a.status, string(a.body))
					assert.Equal(t, tc.want, a.ids(t))
					if tc.cursor == "" {
						assert.NotContains(t, a.header, "Next_page_cursor")
						return
					}
					assert.Equal(t, []string{exactCursor(tc.cursor)}, a.header.Values("next_page_cursor"))
				})
			}
			for _, perPage := range []int{1, 24, 25, 240, 1000} { // 240 records: full last pages and short ones
				ids, pages := walkCursor(t, c.URL, "/"+list, perPage, "")
				assert.Equal(t, all, ids, "perPage %d", perPage)
				assert.Equal(t, (len(all)+perPage-1)/perPage, pages, "perPage %d: no empty trailing page", perPage)
			}
		})
	}
}

// between returns an id strictly between two ids with a gap, or fails.
func between(t *testing.T, a, b string) string {
	t.Helper()
	x, _ := strconv.ParseInt(a, 10, 64)
	y, _ := strconv.ParseInt(b, 10, 64)
	require.Greater(t, y-x, int64(1), "the data set has no gap between %s and %s", a, b)
	return strconv.FormatInt(x+1, 10)
}

// exactCursor is next_page_cursor for id as the contract spells it, built
// without the code under test: standard padded base64 of {"id":"<id>"}.
func exactCursor(id string) string {
	return base64.StdEncoding.EncodeToString([]byte(`{"id":"` + id + `"}`))
}

// TestContractLenientCursors shows point 1: every encoding of the same
// cursor a client may send gets the same page, and next_page_cursor is
// always the one canonical spelling, byte for byte.
func TestContractLenientCursors(t *testing.T) {
	c, b, _ := startGateway(t, reference.Config{Seed: 1, Records: 400}, "")
	all := strIDs(b.IDs("calls"))
	at := 123
	id := all[at]
	// Cursors of numeric ids, {"id":"<digits>"}, never hold '+' or '/', the
	// characters in which the alphabets differ: an extra member, which
	// the gateway ignores, puts them in, and padding at the end.
	var json, std string
	for k := 0; ; k++ {
		require.Less(t, k, 9, "no filler gives a cursor with '+', '/' and padding")
		json = `{"id":"` + id + `","x":"` + strings.Repeat("a", k) + `~~~???"}`
		std = base64.StdEncoding.EncodeToString([]byte(json))
		if strings.Contains(std, "+") && strings.Contains(std, "/") && strings.HasSuffix(std, "=") {
			break
		}
	}
	urlSafe := base64.URLEncoding.EncodeToString([]byte(json))
	require.Contains(t, urlSafe, "-")
	require.Contains(t, urlSafe, "_")
	for _, tc := range []struct{ name, raw string }{
		{"standard, padded, percent-encoded", strings.NewReplacer("+", "%2B", "/", "%2F", "=", "%3D").Replace(std)},
		{"standard, padded, '/' and '=' unencoded", strings.ReplaceAll(std, "+", "%2B")},
		{"standard, unpadded", strings.ReplaceAll(strings.TrimRight(std, "="), "+", "%2B")},
		{"'+' sent raw, read as a space", std},
		{"'+' as an encoded space", strings.ReplaceAll(std, "+", "%20")},
		{"url-safe, padded", urlSafe},
		{"url-safe, unpadded", strings.TrimRight(urlSafe, "=")},
		{"a JSON number id", base64.StdEncoding.EncodeToString([]byte(`{"id":` + id + `}`))},
		{"extra members, before and after", base64.RawURLEncoding.EncodeToString([]byte(`{"v":2,"id":"` + id + `","sort":["id"]}`))},
		{"whitespace in the JSON", base64.StdEncoding.EncodeToString([]byte(" {\n \"id\" : \"" + id + "\" }\n"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := get(t, c.URL+"/calls?_perPage=2&_cursor="+tc.raw)
			require.Equal(t, http.StatusOK, a.status, string(a.body))
			assert.Equal(t, all[at+1:at+3], a.ids(t))
			assert.Equal(t, []string{exactCursor(all[at+2])}, a.header.Values("next_page_cursor"))
		})
	}

	t.Run("next_page_cursor byte for byte", func(t *testing.T) {
		a := get(t, c.URL+"/calls?_perPage=5")
		require.Equal(t, http.StatusOK, a.status)
		got := a.header.Get("next_page_cursor")
		raw, err := base64.StdEncoding.Strict().DecodeString(got)
		require.NoError(t, err, "standard alphabet, padded: %q", got)
		assert.Equal(t, `{"id":"`+all[4]+`"}`, string(raw), "exactly one member, id as a string, no spaces")
		assert.Zero(t, len(got)%4, "padded")
	})
}

// TestContractPageRequests shows point 5 for _page: a numbered page comes
// in id order with a cursor, and a client may switch to cursors mid-walk.
func TestContractPageRequests(t *testing.T) {
	c, b, rec := startGateway(t, reference.Config{Seed: 6, Records: 100}, "")
	for _, list := range cursorEndpoints {
		all := strIDs(b.IDs(list))
		a := get(t, c.URL+"/"+list+"?_page=2&_perPage=15")
		require.Equal(t, http.StatusOK, a.status, string(a.body))
		assert.Equal(t, all[15:30], a.ids(t), "%s: page 2 in id order, not newest first", list)
		next := a.header.Get("next_page_cursor")
		require.Equal(t, exactCursor(all[29]), next)

		a = get(t, c.URL+"/"+list+"?_perPage=15&_cursor="+next)
		require.Equal(t, http.StatusOK, a.status)
		assert.Equal(t, all[30:45], a.ids(t), "%s: the cursor of page 2 leads to page 3", list)
		assert.Equal(t, all[30:45], get(t, c.URL+"/"+list+"?_perPage=15&_page=3").ids(t))

		a = get(t, c.URL+"/"+list+"?_perPage=15&_page=7")
		assert.Equal(t, all[90:], a.ids(t), "%s: the short last page", list)
		assert.NotContains(t, a.header, "Next_page_cursor")
	}
	// The backend saw id order asked for, never its default.
	for _, r := range rec.requests() {
		assert.Equal(t, "id", r.URL.Query().Get("_sortField"), r.URL.RawQuery)
		assert.Equal(t, "ASC", r.URL.Query().Get("_sortDir"), r.URL.RawQuery)
	}
}

// TestContractForwarding shows point 6: _cursor never reaches the backend;
// every other parameter and header does, unchanged, on every backend call of
// a page, including pages stitched from several calls.
func TestContractForwarding(t *testing.T) {
	c, b, rec := startGateway(t, reference.Config{Seed: 7, Records: 300}, "backend_max_per_page 30")
	all := strIDs(b.IDs("tickets/history"))
	rec.reset()
	a := get(t, c.URL+"/tickets/history?q=a+b%2Bc&_perPage=50&x=%E2%9C%93&_cursor="+cursorFor(all[100])+"&flag&x=2&empty=",
		"X-Api-Key", "k-123", "Authorization", "Bearer tok", "Accept-Encoding", "gzip", "Accept-Language", "de")
	require.Equal(t, http.StatusOK, a.status, string(a.body))
	assert.Equal(t, all[101:151], a.ids(t))
	reqs := rec.requests()
	require.Greater(t, len(reqs), 1, "a page of 50 over backend pages of 30 takes several calls")
	for _, r := range reqs {
		assert.Equal(t, http.MethodGet, r.Method)
		assert.Equal(t, "/tickets/history", r.URL.Path)
		assert.NotContains(t, r.URL.RawQuery, "_cursor")
		assert.NotContains(t, r.URL.RawQuery, cursorFor(all[100]))
		assert.True(t, strings.HasPrefix(r.URL.RawQuery, "q=a+b%2Bc&x=%E2%9C%93&flag&x=2&empty=&_sortField=id&_sortDir=ASC&_page="), r.URL.RawQuery)
		assert.Equal(t, "k-123", r.Header.Get("X-Api-Key"))
		assert.Equal(t, "Bearer tok", r.Header.Get("Authorization"))
		assert.Equal(t, "de", r.Header.Get("Accept-Language"))
		assert.Equal(t, []string{"identity"}, r.Header.Values("Accept-Encoding"), "the body is parsed: no compression")
	}
}

// TestContractPassThrough shows that requests the gateway does not own
// reach the backend exactly as sent and come back as the backend answered.
func TestContractPassThrough(t *testing.T) {
	c, b, rec := startGateway(t, reference.Config{Seed: 8, Records: 20}, "")
	ticket := strIDs(b.IDs("tickets"))[3]
	cursor := cursorFor("5")
	for _, tc := range []struct {
		method, target string
		status         int
	}{
		{http.MethodGet, "/tickets/" + ticket + "?_cursor=" + cursor, http.StatusOK},
		// Another spelling of an endpoint (/calls/, /Calls) is refused,
		// not passed on: TestOtherSpellingsOfAnEndpointAreRefused.
		{http.MethodPost, "/calls/?_cursor=" + cursor + "&_perPage=2", http.StatusNotFound},
		{http.MethodGet, "/grid/reports?_cursor=" + cursor, http.StatusNotFound},
		{http.MethodGet, "/unknown?_cursor=abc&_page=2", http.StatusNotFound},
		{http.MethodGet, "/tickets?_page=2&_perPage=3&_cursor=" + cursor, http.StatusOK},
		{http.MethodPost, "/calls?_cursor=" + cursor + "&_perPage=0", http.StatusMethodNotAllowed},
		{http.MethodDelete, "/phone_numbers?_page=1&_cursor=" + cursor, http.StatusMethodNotAllowed},
		// A preflight: CORS is the business of the handlers around the
		// gateway (here none, so the backend refuses it).
		{http.MethodOptions, "/calls?_perPage=3&_cursor=" + cursor, http.StatusMethodNotAllowed},
	} {
		t.Run(tc.method+" "+tc.target, func(t *testing.T) {
			rec.reset()
			req, err := http.NewRequest(tc.method, c.URL+tc.target, strings.NewReader(""))
			require.NoError(t, err)
			req.Header.Set("X-Api-Key", "k")
			resp, err := gatewaytest.Client.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, tc.status, resp.StatusCode)
			assert.Empty(t, resp.Header.Get("next_page_cursor"))
			reqs := rec.requests()
			require.Len(t, reqs, 1, "one request, as sent")
			assert.Equal(t, tc.method, reqs[0].Method)
			assert.Equal(t, tc.target, reqs[0].URL.RequestURI(), "path and query unchanged")
			assert.Equal(t, "k", reqs[0].Header.Get("X-Api-Key"))
			assert.NotEqual(t, "identity", reqs[0].Header.Get("Accept-Encoding"), "not a sub-request")
		})
	}
}
