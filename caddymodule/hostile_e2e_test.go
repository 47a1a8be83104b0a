package caddymodule_test

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/cursor"
)

// backendReading is how a lenient backend could read a parameter name:
// decoded as often as it nests, trimmed, ' ' and '.' as '_' and cut at '['
// or NUL (PHP), without case (ASP.NET).
func backendReading(name string) string {
	for range 4 {
		d, err := url.QueryUnescape(name)
		if err != nil || d == name {
			break
		}
		name = d
	}
	name, _, _ = strings.Cut(name, "[")
	name, _, _ = strings.Cut(name, "\x00")
	name = strings.NewReplacer(" ", "_", ".", "_").Replace(strings.TrimSpace(name))
	return strings.ToLower(name)
}

// assertGatewayQuery checks one backend query of a cursor endpoint: the
// gateway's paging and sort parameters appear once each with the
// gateway's values, and no other name could be read as one of them.
func assertGatewayQuery(t *testing.T, raw string) {
	t.Helper()
	counts := map[string]int{}
	for pair := range strings.SplitSeq(raw, "&") {
		k, _, _ := strings.Cut(pair, "=")
		counts[backendReading(k)]++
	}
	for _, name := range []string{"_page", "_perpage", "_sortfield", "_sortdir"} {
		assert.Equal(t, 1, counts[name], "%s in %q", name, raw)
	}
	assert.Zero(t, counts["_cursor"], raw)
	assert.Zero(t, counts["_from"], raw)
	assert.Zero(t, counts["_to"], raw)
	v, err := url.ParseQuery(raw)
	require.NoError(t, err)
	assert.Equal(t, []string{"id"}, v["_sortField"], raw)
	assert.Equal(t, []string{"ASC"}, v["_sortDir"], raw)
	assert.Len(t, v["_page"], 1, raw)
	assert.Len(t, v["_perPage"], 1, raw)
}

func TestQuerySmuggling(t *testing.T) {
	b := numericList(300)
	ids := b.ids()
	c, f, _ := startFaulty(t, b, "max_per_page 100\n\t\tbackend_max_per_page 40", "")

	t.Run("served, and the backend query stays the gateway's", func(t *testing.T) {
		for _, tc := range []struct {
			query   string
			want    []string
			forward string // the client's own parameters as the backend got them
		}{
			{"_page=2&_perPage=5", ids[5:10], ""},
			{"%5Fpage=2&%5fperPage=5", ids[5:10], ""},
			{"_perPage=%35&_cursor=" + cursorFor(ids[3]), ids[4:9], ""},
			{"_sortField=id&_sortDir=asc&_perPage=3", ids[:3], ""},
			{"%5FsortField=id&_perPage=3", ids[:3], ""},
			{"a=1&a=2&b=%20&c&_perPage=3&a=3", ids[:3], "a=1&a=2&b=%20&c&a=3"},
			{"page=9&per_page=9&perPage=9&_pages=9&sortField=date&_perPage=3", ids[:3], "page=9&per_page=9&perPage=9&_pages=9&sortField=date"},
			{"x=%FF%FE&y=%C0%AF&_perPage=3", ids[:3], "x=%FF%FE&y=%C0%AF"},
			{"q=_page%3D9%26_perPage%3D999&_perPage=3", ids[:3], "q=_page%3D9%26_perPage%3D999"},
			{"_perPage=60&_cursor=" + cursorFor(ids[100]), ids[101:161], ""}, // several calls
		} {
			t.Run(tc.query, func(t *testing.T) {
				f.arm(0, nil)
				a := get(t, c.URL+"/calls?"+tc.query)
				require.Equal(t, http.StatusOK, a.status, string(a.body))
				assert.Equal(t, tc.want, a.ids(t))
				queries := f.seen()
				require.NotEmpty(t, queries)
				for _, q := range queries {
					assertGatewayQuery(t, q)
					want := "_sortField=id&_sortDir=ASC&_page="
					if tc.forward != "" {
						want = tc.forward + "&" + want
					}
					assert.True(t, strings.HasPrefix(q, want), "%q starts with %q", q, want)
				}
			})
		}
	})

	t.Run("refused before the backend is called", func(t *testing.T) {
		for _, tc := range []struct{ query, want string }{
			{"_page=2&_page=3", "_page is repeated"},
			{"_perPage=2&%5FperPage=3", "_perPage is repeated"},
			{"_cursor=" + cursorFor("5") + "&%5Fcursor=" + cursorFor("6"), "_cursor is repeated"},
			{"_sortField=id&_sortField=id", "_sortField is repeated"},
			{"_sortField=date", "ascending id order"},
			{"_sortDir=DESC", "ascending id order"},
			{"_PAGE=9", `"_PAGE" could be read as _page`},
			{"_PerPage=100", "could be read as _perPage"},
			{".perPage=100", "could be read as _perPage"},
			{"_perPage%5B%5D=100", "could be read as _perPage"},
			{"_perPage[]=100", "could be read as _perPage"},
			{"_page%00=9", "could be read as _page"},
			{"%255Fpage=9", "could be read as _page"},
			{"+_page=9", "could be read as _page"},
			{"_sortfield=date", "could be read as _sortField"},
			{"%5Fsortdir=desc", "could be read as _sortDir"},
			{"_Cursor=abc", "could be read as _cursor"},
			{"a=1;_page=9", "';'"},
			{"_page=1%3B_page=9", "_page must be"},
			{"_perPage=1e2", "_perPage must be"},
			{"_perPage=0x10", "_perPage must be"},
			{"_perPage=%2B5", "_perPage must be"},
			{"_perPage=5%00", "_perPage must be"},
			{"_perPage=%205", "_perPage must be"},
			{"_perPage=%EF%BC%95", "_perPage must be"}, // a full-width 5
			{"_page=-1", "_page must be"},
			{"a%zz=1", "percent-encoding"},
			{"_cursor=%zz", "percent-encoding"},
			// LiveAgent's result window, which a backend honours over _page
			{"_perPage=10&_cursor=" + cursorFor("100") + "&_from=0&_to=10", "_from is not served"},
			{"_perPage=10&_cursor=" + cursorFor("100") + "&_from=0", "_from is not served"},
			{"_page=5&_perPage=10&_from=0&_to=10", "_from is not served"},
			{"_perPage=10&_to=25", "_to is not served"},
			{"_From=0", "could be read as _from"},
			{"%255Fto=9", "could be read as _to"},
		} {
			t.Run(tc.query, func(t *testing.T) {
				f.arm(0, nil)
				a := get(t, c.URL+"/calls?"+tc.query)
				require.Equal(t, http.StatusBadRequest, a.status, string(a.body))
				assert.Contains(t, a.message(t), tc.want)
				assert.Empty(t, f.seen(), "the backend must not be called")
			})
		}
	})

	t.Run("filter endpoints: no second _filters past the validator", func(t *testing.T) {
		bad := url.QueryEscape(`[["status","L","x"]]`)
		for _, query := range []string{
			"_filters=[]&.filters=" + bad,
			"_Filters=" + bad,
			"_filters%5B%5D=" + bad,
			"_filters[0]=" + bad,
			"%255Ffilters=" + bad,
			"_filters=[]&%5Ffilters=[]",
		} {
			f.arm(0, nil)
			a := get(t, c.URL+"/tickets?"+query)
			require.Equal(t, http.StatusBadRequest, a.status, "%s: %s", query, a.body)
			assert.Contains(t, a.message(t), "_filters", query)
			assert.Empty(t, f.seen(), "the backend must not be called for %s", query)
		}
	})
}

// rawGet sends a request line as given, bytes and all, which an HTTP
// client library would refuse or escape, and returns the status and body.
func rawGet(t *testing.T, base, target string) (int, string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", strings.TrimPrefix(base, "http://"), 5*time.Second)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
	_, err = fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: gateway\r\nConnection: close\r\n\r\n", target)
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err, "the connection must get an answer")
	defer resp.Body.Close()
	var sb strings.Builder
	_, _ = bufio.NewReader(resp.Body).WriteTo(&sb)
	return resp.StatusCode, sb.String()
}

func TestInvalidUTF8FromTheClient(t *testing.T) {
	b := numericList(50)
	ids := b.ids()
	c, f, _ := startFaulty(t, b, "", "")
	std := base64.StdEncoding.EncodeToString

	for _, tc := range []struct {
		name, target string
		status       int
		want         string // in the message, or the first id served
	}{
		{"cursor of invalid UTF-8 JSON", "/calls?_cursor=" + url.QueryEscape(std([]byte("{\"id\":\"\xff\"}"))), 400, "does not decode to JSON"},
		{"cursor of a lone surrogate escape", "/calls?_cursor=" + url.QueryEscape(std([]byte(`{"id":"\ud800"}`))), 400, "whole number"},
		{"percent-encoded invalid UTF-8 cursor", "/calls?_cursor=%FF%FE", 400, "not base64"},
		{"raw invalid UTF-8 cursor", "/calls?_cursor=\xff\xfe", 400, "not base64"},
		{"raw invalid UTF-8 parameter name", "/calls?\xff_page=2", 200, ids[0]},
		{"raw invalid UTF-8 value", "/calls?x=\xff&_perPage=2", 200, ids[0]},
		{"invalid UTF-8 in _filters", "/tickets?_filters=%7B%22status%22%3A%22%FF%22%7D", 400, "_filters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.arm(0, nil)
			status, body := rawGet(t, c.URL, tc.target)
			require.Equal(t, tc.status, status, body)
			if status == http.StatusBadRequest {
				var e struct{ Message string }
				require.NoError(t, json.Unmarshal([]byte(body), &e), body)
				assert.Contains(t, e.Message, tc.want)
				assert.True(t, json.Valid([]byte(body)))
				assert.Empty(t, f.seen())
				return
			}
			var page []struct{ ID json.Number }
			require.NoError(t, json.Unmarshal([]byte(body), &page), body)
			require.NotEmpty(t, page)
			assert.Equal(t, tc.want, page[0].ID.String())
			for _, q := range f.seen() {
				assertGatewayQuery(t, q)
			}
		})
	}
}

// jsonTokens encodes ids as JSON strings, in byte order.
func jsonTokens(ids []string) []string {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	out := make([]string, len(ids))
	for i, id := range ids {
		b, _ := json.Marshal(id)
		out[i] = string(b)
	}
	return out
}

// walkLexical walks a list of string ids by cursor and checks every
// next_page_cursor: standard padded base64 of exactly {"id":"<last id>"}.
func walkLexical(t *testing.T, base string, perPage int) []string {
	t.Helper()
	var all []string
	cursor := ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, 10000)
		u := base + "/calls?_perPage=" + itoa(perPage)
		if cursor != "" {
			u += "&_cursor=" + url.QueryEscape(cursor)
		}
		a := get(t, u)
		require.Equal(t, http.StatusOK, a.status, string(a.body))
		var page []struct{ ID string }
		require.NoError(t, json.Unmarshal(a.body, &page))
		for _, r := range page {
			all = append(all, r.ID)
		}
		cursor = a.header.Get("next_page_cursor")
		if cursor == "" {
			return all
		}
		require.Len(t, page, perPage)
		raw, err := base64.StdEncoding.Strict().DecodeString(cursor)
		require.NoError(t, err, "standard base64: %q", cursor)
		require.Equal(t, base64.StdEncoding.EncodeToString(raw), cursor, "padded, canonical")
		require.True(t, json.Valid(raw), "valid JSON: %q", raw)
		var doc map[string]any
		require.NoError(t, json.Unmarshal(raw, &doc))
		require.Equal(t, map[string]any{"id": page[len(page)-1].ID}, doc, "exactly the last id: %q", raw)
	}
}

func TestHostileIDsFromTheBackend(t *testing.T) {
	ids := []string{
		`quote"inside`, `"leading quote`, `back\slash`, `\"escaped`, `ends with \`,
		"tab\tin", "new\nline", "nul\x00byte", "bell\x07", "del\x7f", "esc\x1b[31m",
		"</script><b>", "a&b=c", "plus+slash/eq=", "é accent", "✓ check", "\u2028line sep", "😀 emoji",
		"{\"id\":\"inner\"}", "   spaces   ", strings.Repeat("L", cursor.MaxIDLength),
		strings.Repeat("\x01", cursor.MaxIDLength), // the longest cursor the gateway makes
		strings.Repeat("\\", 300) + strings.Repeat("\"", 200),
	}
	lb := &listBackend{tokens: jsonTokens(ids)}
	slices.Sort(ids)
	// The subtests swap the backend's list under the gateway: read-ahead
	// windows, which serve a walk what the backend held up to
	// readahead_ttl ago, would hide the swap.
	c, f, _ := startFaulty(t, lb, "id_order lexical\n\t\tbackend_max_per_page 25\n\t\treadahead_ttl 0", "")

	for _, perPage := range []int{1, 3, 30} {
		t.Run(fmt.Sprintf("walk by %d", perPage), func(t *testing.T) {
			f.arm(0, nil)
			assert.Equal(t, ids, walkLexical(t, c.URL, perPage))
		})
	}

	t.Run("a cursor built by hand from each id", func(t *testing.T) {
		for i, id := range ids[:len(ids)-1] {
			a := get(t, c.URL+"/calls?_perPage=1&_cursor="+url.QueryEscape(cursor.Encode(id)))
			require.Equal(t, http.StatusOK, a.status, string(a.body))
			var page []struct{ ID string }
			require.NoError(t, json.Unmarshal(a.body, &page))
			require.Len(t, page, 1)
			assert.Equal(t, ids[i+1], page[0].ID)
		}
	})

	for _, tc := range []struct{ name, token, want string }{
		{"invalid UTF-8", "\"zz\xff\xfe\"", "not valid UTF-8"},
		{"too long", `"zz` + strings.Repeat("x", cursor.MaxIDLength) + `"`, "longer than 512 bytes"},
		{"empty", `""`, "empty"},
	} {
		t.Run("an id that cannot make a cursor: "+tc.name, func(t *testing.T) {
			bad := &listBackend{tokens: append(slices.Clone(lb.tokens), tc.token)}
			f.arm(1, bad.ServeHTTP)
			a := get(t, c.URL+"/calls?_perPage=5&_cursor="+url.QueryEscape(cursor.Encode(ids[len(ids)-2])))
			require.Equal(t, http.StatusBadGateway, a.status, string(a.body))
			msg := assertNoPage(t, a)
			assert.Contains(t, msg, tc.want)
			assert.NotContains(t, msg, "set id_order lexical", "id_order lexical is set: the hint would change nothing")
			assert.Contains(t, msg, "id_field")
		})
	}
}

func TestHugeNumericIDs(t *testing.T) {
	// Ids of 300 digits, as JSON numbers and as strings, far past int64.
	prefix := "7" + strings.Repeat("0", 290)
	var tokens, ids []string
	for i := range 120 {
		id := fmt.Sprintf("%s%09d", prefix, 1000+i*7)
		ids = append(ids, id)
		if i%2 == 0 {
			tokens = append(tokens, id)
		} else {
			tokens = append(tokens, `"`+id+`"`)
		}
	}
	c, f, _ := startFaulty(t, &listBackend{tokens: tokens}, "backend_max_per_page 25", "")

	got, pages := walkCursor(t, c.URL, "/calls", 11, "")
	assert.Equal(t, ids, got)
	assert.Equal(t, 11, pages)

	f.arm(0, nil)
	between := fmt.Sprintf("%s%09d", prefix, 1000+50*7+3) // between ids[50] and ids[51]
	a := get(t, c.URL+"/calls?_perPage=4&_cursor="+cursorFor(between))
	require.Equal(t, http.StatusOK, a.status, string(a.body))
	assert.Equal(t, ids[51:55], a.ids(t))
	assert.Equal(t, cursorFor(ids[54]), a.header.Get("next_page_cursor"))
	a = get(t, c.URL+"/calls?_perPage=4&_cursor="+cursorFor("-"+strings.Repeat("9", 400)))
	require.Equal(t, http.StatusOK, a.status, string(a.body))
	assert.Equal(t, ids[:4], a.ids(t), "a cursor below every id")

	f.arm(1, (&listBackend{tokens: []string{strings.Repeat("9", cursor.MaxIDLength+1)}}).ServeHTTP)
	a = get(t, c.URL+"/calls?_perPage=4")
	require.Equal(t, http.StatusBadGateway, a.status, string(a.body))
	assert.Contains(t, assertNoPage(t, a), "longer than 512 bytes")
}
