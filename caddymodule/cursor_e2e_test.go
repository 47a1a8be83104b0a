package caddymodule_test

import (
	"encoding/base64"
	"fmt"
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

const gatewaySite = `
http://:0 {
	helpdesk_gateway {
		%s
	}
	reverse_proxy {backend}
}
`

// startGateway runs the reference backend behind a recorder and a Caddy
// with the gateway in front of it.
func startGateway(t *testing.T, backendCfg reference.Config, options string) (*gatewaytest.Caddy, *reference.Backend, *recorder) {
	t.Helper()
	b := reference.New(backendCfg)
	rec := &recorder{next: b}
	c := gatewaytest.StartBehind(t, fmt.Sprintf(gatewaySite, options), rec)
	return c, b, rec
}

func strIDs(ids []int64) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = strconv.FormatInt(id, 10)
	}
	return out
}

func TestCursorContract(t *testing.T) {
	c, b, rec := startGateway(t, reference.Config{Seed: 1, Records: 300}, "")
	all := strIDs(b.IDs("calls"))
	rawCursor := func(id string) string { return `{"id":"` + id + `"}` }
	for _, tc := range []struct {
		name   string
		query  string
		want   []string
		cursor string // expected next_page_cursor; "" for none
	}{
		{"first page", "_perPage=5", all[:5], cursorFor(all[4])},
		{"default page size", "", all[:10], cursorFor(all[9])},
		{"existing id", "_perPage=3&_cursor=" + cursorFor(all[100]), all[101:104], cursorFor(all[103])},
		{"missing id", "_perPage=3&_cursor=" + cursorFor(bump(all[100])), all[101:104], cursorFor(all[103])},
		{"below the first", "_perPage=2&_cursor=" + cursorFor("0"), all[:2], cursorFor(all[1])},
		{"at the last", "_perPage=5&_cursor=" + cursorFor(all[len(all)-1]), []string{}, ""},
		{"ends exactly", "_perPage=3&_cursor=" + cursorFor(all[len(all)-4]), all[len(all)-3:], ""},
		{"url-safe alphabet unpadded", "_perPage=1&_cursor=" + base64.RawURLEncoding.EncodeToString([]byte(rawCursor(all[7]))), all[8:9], cursorFor(all[8])},
		{"padded standard, percent-encoded", "_perPage=1&_cursor=" + strings.ReplaceAll(cursorFor(all[7]), "=", "%3D"), all[8:9], cursorFor(all[8])},
		{"number id and extra members", "_perPage=1&_cursor=" + base64.StdEncoding.EncodeToString([]byte(`{"x":1,"id":`+all[7]+`}`)), all[8:9], cursorFor(all[8])},
		{"page 3 in id order", "_perPage=4&_page=3", all[8:12], cursorFor(all[11])},
		{"page past the end", "_perPage=100&_page=4", []string{}, ""},
		{"sort by id ascending is allowed", "_perPage=2&_sortField=id&_sortDir=asc", all[:2], cursorFor(all[1])},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := get(t, c.URL+"/calls?"+tc.query)
			require.Equal(t, http.StatusOK, a.status, string(a.body))
			assert.Equal(t, tc.want, a.ids(t))
			assert.Equal(t, tc.cursor, a.header.Get("next_page_cursor"))
			assert.Len(t, a.header.Values("next_page_cursor"), min(1, len(tc.cursor)))
		})
	}

	t.Run("walk ends on a full page without an empty one", func(t *testing.T) {
		ids, pages := walkCursor(t, c.URL, "/calls", 30, "")
		assert.Equal(t, all, ids)
		assert.Equal(t, 10, pages)
	})

	t.Run("cursor never reaches the backend; the rest does", func(t *testing.T) {
		rec.reset()
		a := get(t, c.URL+"/calls?b=%20x&_perPage=2&_cursor="+cursorFor(all[3])+"&a=1&a=2&empty=", "X-Api-Key", "secret", "Authorization", "Bearer t")
		require.Equal(t, http.StatusOK, a.status)
		reqs := rec.requests()
		require.NotEmpty(t, reqs)
		for _, r := range reqs {
			assert.NotContains(t, r.URL.RawQuery, "_cursor")
			assert.True(t, strings.HasPrefix(r.URL.RawQuery, "b=%20x&a=1&a=2&empty=&_sortField=id&_sortDir=ASC&_page="), r.URL.RawQuery)
			assert.Equal(t, "secret", r.Header.Get("X-Api-Key"))
			assert.Equal(t, "Bearer t", r.Header.Get("Authorization"))
			assert.Equal(t, "identity", r.Header.Get("Accept-Encoding"))
			assert.Equal(t, "/calls", r.URL.Path)
		}
	})

	t.Run("paths it does not own pass through untouched", func(t *testing.T) {
		for _, path := range []string{"/tickets/" + strIDs(b.IDs("tickets"))[0], "/calls/x", "/unknown?_cursor=abc", "/tickets?_page=2&_perPage=3"} {
			rec.reset()
			a := get(t, c.URL+path)
			reqs := rec.requests()
			require.Len(t, reqs, 1, path)
			assert.Equal(t, path, reqs[0].URL.RequestURI())
			assert.NotEqual(t, "identity", reqs[0].Header.Get("Accept-Encoding"))
			assert.Empty(t, a.header.Get("next_page_cursor"))
		}
	})
}

// bump returns a numeric id one above id (absent from data with gaps >= 2,
// or present: the test only needs the next records after it).
func bump(id string) string {
	n, _ := strconv.ParseInt(id, 10, 64)
	return strconv.FormatInt(n+1, 10)
}

func TestCursorClientErrors(t *testing.T) {
	c, _, rec := startGateway(t, reference.Config{Seed: 1, Records: 50}, "max_per_page 100")
	for _, tc := range []struct{ name, query, want string }{
		{"not base64", "_cursor=%%%%", "percent-encoding"},
		{"bad base64", "_cursor=@@@@", "not base64"},
		{"not JSON", "_cursor=" + base64.StdEncoding.EncodeToString([]byte("id=5")), "does not decode to JSON"},
		{"not an object", "_cursor=" + base64.StdEncoding.EncodeToString([]byte(`["5"]`)), "object"},
		{"no id", "_cursor=" + base64.StdEncoding.EncodeToString([]byte(`{"x":"5"}`)), `no "id"`},
		{"empty id", "_cursor=" + cursorFor(""), "empty"},
		{"empty cursor", "_cursor=", "empty"},
		{"bool id", "_cursor=" + base64.StdEncoding.EncodeToString([]byte(`{"id":true}`)), "not a string"},
		{"non-numeric id on a numeric list", "_cursor=" + cursorFor("abc"), "whole number"},
		{"perPage zero", "_perPage=0", "_perPage must be a whole number from 1 to 100"},
		{"perPage too big", "_perPage=101", "from 1 to 100"},
		{"perPage not a number", "_perPage=ten", "from 1 to 100"},
		{"perPage negative", "_perPage=-1", "from 1 to 100"},
		{"page zero", "_page=0", "_page must be"},
		{"page with cursor", "_page=2&_cursor=" + cursorFor("5"), "cannot be used together"},
		{"repeated cursor", "_cursor=" + cursorFor("5") + "&_cursor=" + cursorFor("6"), "_cursor is repeated"},
		{"repeated perPage", "_perPage=1&_perPage=2", "_perPage is repeated"},
		{"repeated page", "_page=1&_page=2", "_page is repeated"},
		{"repeated filters", "_filters=[]&_filters=[]", "_filters is repeated"},
		{"encoded repeated page", "_page=1&%5Fpage=2", "_page is repeated"},
		{"sort by another field", "_sortField=date", "ascending id order"},
		{"sort descending", "_sortDir=DESC", "ascending id order"},
		{"semicolon", "a=1;_page=2", "';'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec.reset()
			a := get(t, c.URL+"/calls?"+tc.query)
			require.Equal(t, http.StatusBadRequest, a.status, string(a.body))
			assert.Contains(t, a.message(t), tc.want)
			assert.Empty(t, rec.requests(), "the backend must not be called")
		})
	}
}

func TestCursorBasePathAndEnvelope(t *testing.T) {
	c, b, _ := startGateway(t, reference.Config{Seed: 2, Records: 120, BasePath: "/api/v3", Envelope: "data"},
		"base_path /api/v3\n\t\trecords_path data\n\t\tcursor_endpoints /calls /phone_numbers")
	all := strIDs(b.IDs("phone_numbers"))
	a := get(t, c.URL+"/api/v3/phone_numbers?_perPage=7&_cursor="+cursorFor(all[10]))
	require.Equal(t, http.StatusOK, a.status, string(a.body))
	assert.Equal(t, all[11:18], a.ids(t, "data"))
	assert.Equal(t, cursorFor(all[17]), a.header.Get("next_page_cursor"))
	assert.Contains(t, string(a.body), `"total":`, "the envelope is kept")

	// Not configured as a cursor endpoint: passed through, newest first.
	a = get(t, c.URL+"/api/v3/tickets/history?_perPage=3")
	assert.Empty(t, a.header.Get("next_page_cursor"))
	// Without the base path the gateway does not own the path.
	a = get(t, c.URL+"/phone_numbers?_perPage=3&_cursor="+cursorFor(all[10]))
	assert.Equal(t, http.StatusNotFound, a.status)
}

// lexicalBackend serves string ids in byte order, paged by offset, with
// a header of its own on every answer.
func lexicalBackend(n int) http.Handler {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("TK-%05d-%c", i*3, 'a'+i%26)
	}
	list := &listBackend{tokens: jsonTokens(ids)}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Backend", "lexical")
		w.Header().Add("Set-Cookie", "a=1")
		list.ServeHTTP(w, r)
	})
}

func TestCursorLexicalIDsAndOneSetOfHeaders(t *testing.T) {
	c := gatewaytest.StartBehind(t, fmt.Sprintf(gatewaySite, "id_order lexical\n\t\tbackend_max_per_page 25"), lexicalBackend(400))

	ids, _ := walkCursor(t, c.URL, "/calls", 60, "")
	require.Len(t, ids, 400)
	assert.True(t, slices.IsSorted(ids))

	a := get(t, c.URL+"/calls?_perPage=100&_cursor="+cursorFor("TK-00300"))
	require.Equal(t, http.StatusOK, a.status)
	assert.Equal(t, "TK-00300-w", a.ids(t)[0])
	// A page of 100 over backend pages of at most 25 takes several calls;
	// the client still sees each backend header once.
	for k, v := range a.header {
		assert.Len(t, v, 1, "header %s: %v", k, v)
	}
	assert.Equal(t, "lexical", a.header.Get("X-Backend"))
	assert.Equal(t, strconv.Itoa(len(a.body)), a.header.Get("Content-Length"))
}
