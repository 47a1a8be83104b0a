package caddymodule_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// do sends one request as a client would and reads the whole answer.
func do(t testing.TB, method, rawURL string) answer {
	t.Helper()
	req, err := http.NewRequest(method, rawURL, nil)
	require.NoError(t, err)
	resp, err := gatewaytest.Client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	a := answer{status: resp.StatusCode, header: resp.Header}
	a.body, err = io.ReadAll(resp.Body)
	require.NoError(t, err)
	return a
}

// TestHeadAnswersAsGet: HEAD on an owned path answers with the status and
// headers GET would (next_page_cursor, Content-Type, Content-Length) and
// no body; on a cursor endpoint the backend sees only GET sub-requests,
// and on a filter endpoint bad _filters never reach it.
func TestHeadAnswersAsGet(t *testing.T) {
	c, b, rec := startGateway(t, reference.Config{Seed: 14, Records: 60}, "")
	all := strIDs(b.IDs("calls"))
	badFilters := url.QueryEscape(`[["status","L","open"]]`)
	for _, tc := range []struct {
		name, target string
		status       int
		backend      string // the method the backend sees; "" for no call
	}{
		{"first page", "/calls?_perPage=3", http.StatusOK, http.MethodGet},
		{"cursor page", "/calls?_perPage=7&_cursor=" + cursorFor(all[20]), http.StatusOK, http.MethodGet},
		{"offset page", "/phone_numbers?_page=2&_perPage=5", http.StatusOK, http.MethodGet},
		{"last page", "/calls?_perPage=10&_cursor=" + cursorFor(all[55]), http.StatusOK, http.MethodGet},
		{"bad _perPage", "/calls?_perPage=0", http.StatusBadRequest, ""},
		{"bad cursor", "/calls?_cursor=bm90IGpzb24", http.StatusBadRequest, ""},
		{"bad _filters", "/tickets?_filters=" + badFilters, http.StatusBadRequest, ""},
		{"good _filters", "/tickets?_perPage=2&_filters=" + url.QueryEscape(`{"status":"C"}`), http.StatusOK, http.MethodHead},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := do(t, http.MethodGet, c.URL+tc.target)
			rec.reset()
			h := do(t, http.MethodHead, c.URL+tc.target)
			require.Equal(t, tc.status, g.status, string(g.body))
			assert.Equal(t, g.status, h.status)
			for _, k := range []string{"next_page_cursor", "Content-Type", "Content-Length"} {
				assert.Equal(t, g.header.Values(k), h.header.Values(k), k)
			}
			assert.Equal(t, strconv.Itoa(len(g.body)), h.header.Get("Content-Length"), "GET's length")
			assert.Empty(t, h.body)
			if tc.name != "last page" && tc.status == http.StatusOK && tc.backend == http.MethodGet {
				assert.NotEmpty(t, h.header.Get("next_page_cursor"))
			}
			reqs := rec.requests()
			if tc.backend == "" {
				assert.Empty(t, reqs, "refused before the backend")
			}
			for _, r := range reqs {
				assert.Equal(t, tc.backend, r.Method)
			}
		})
	}
}

// pagingBackend is the reference backend with offset-paging metadata of its
// own on every list answer, as many backends send it.
type pagingBackend struct{ next http.Handler }

func (p pagingBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	q := r.URL.Query()
	page, _ := strconv.Atoi(q.Get("_page"))
	self := "http://" + r.Host + r.URL.Path + "?_perPage=" + q.Get("_perPage") + "&_page="
	h.Set("Link", "<"+self+strconv.Itoa(page+1)+`>; rel="next", <`+self+`1>; rel="first"`)
	h.Add("Link", "<http://"+r.Host+`/docs>; rel="describedby"`)
	h.Set("X-Page", q.Get("_page"))
	h.Set("X-Per-Page", q.Get("_perPage"))
	h.Set("X-Next-Page", strconv.Itoa(page+1))
	h.Set("X-Prev-Page", strconv.Itoa(page-1))
	h.Set("X-Total-Pages", "9")
	h.Set("X-Pagination-Current-Page", q.Get("_page"))
	h.Set("X-Pagination-Per-Page", q.Get("_perPage"))
	h.Set("X-Pagination-Page-Count", "9")
	h.Set("Content-Range", "items 0-9/90")
	h.Set("X-Total-Count", "90")
	h.Set("X-Pagination-Total-Count", "90")
	h.Set("X-Request-Id", "r-1")
	p.next.ServeHTTP(w, r)
}

// TestBackendPagingHeadersDropped: a page the gateway composes (cursor or
// _page) carries none of the backend's paging metadata, which describes
// the backend's own page and address; counts of the whole list and other
// headers stay, and so does a Link the site itself sets. The list is
// configurable.
func TestBackendPagingHeadersDropped(t *testing.T) {
	b := reference.New(reference.Config{Seed: 15, Records: 90})
	srv := httptest.NewServer(pagingBackend{b})
	t.Cleanup(srv.Close)
	all := strIDs(b.IDs("calls"))
	dropped := []string{"Link", "X-Page", "X-Per-Page", "X-Next-Page", "X-Prev-Page", "X-Total-Pages",
		"X-Pagination-Current-Page", "X-Pagination-Per-Page", "X-Pagination-Page-Count", "Content-Range"}
	targets := []string{"/calls?_perPage=10", "/calls?_perPage=10&_cursor=" + cursorFor(all[30]), "/calls?_page=3&_perPage=10"}

	t.Run("default list", func(t *testing.T) {
		c := gatewaytest.Start(t, `
http://:0 {
	helpdesk_gateway
	reverse_proxy {backend}
}
`, srv.URL)
		for _, target := range targets {
			a := get(t, c.URL+target)
			require.Equal(t, http.StatusOK, a.status, string(a.body))
			require.NotEmpty(t, a.header.Get("next_page_cursor"))
			for _, k := range dropped {
				assert.Empty(t, a.header.Values(k), "%s: %s", target, k)
			}
			assert.Equal(t, "90", a.header.Get("X-Total-Count"), "a count of the whole list stays")
			assert.Equal(t, "90", a.header.Get("X-Pagination-Total-Count"))
			assert.Equal(t, "r-1", a.header.Get("X-Request-Id"))
		}
		// Not composed by the gateway: the backend's answer as it came.
		a := get(t, c.URL+"/tickets?_perPage=2")
		assert.Equal(t, "2", a.header.Get("X-Per-Page"))
		assert.Len(t, a.header.Values("Link"), 2)
	})
	t.Run("a Link of the site's own stays", func(t *testing.T) {
		c := gatewaytest.Start(t, `
http://:0 {
	header Link "<https://docs.example.com/calls>; rel=\"help\""
	helpdesk_gateway
	reverse_proxy {backend}
}
`, srv.URL)
		a := get(t, c.URL+targets[1])
		assert.Equal(t, []string{`<https://docs.example.com/calls>; rel="help"`}, a.header.Values("Link"))
		assert.Empty(t, a.header.Get("X-Page"))
	})
	t.Run("configured list", func(t *testing.T) {
		c := gatewaytest.Start(t, `
http://:0 {
	helpdesk_gateway {
		drop_backend_headers x-total-count X-Page
	}
	reverse_proxy {backend}
}
`, srv.URL)
		a := get(t, c.URL+targets[1])
		assert.Empty(t, a.header.Get("X-Total-Count"))
		assert.Empty(t, a.header.Get("X-Page"))
		assert.Len(t, a.header.Values("Link"), 2, "no longer in the list: kept")
		assert.NotEmpty(t, a.header.Get("X-Per-Page"), "the backend's own page size, kept as configured")
	})
}

var nextLinkRE = regexp.MustCompile(`^<([^>]*)>; rel="next"$`)

// TestLinkHeader: with link_header, every page but the last links to the
// next one (RFC 8288): a reference relative to the request, with the
// client's other parameters, escaped where a URI needs it, and a generic
// client following it walks every record once. Off by default.
func TestLinkHeader(t *testing.T) {
	b := reference.New(reference.Config{Seed: 16, Records: 95})
	rec := &recorder{next: b}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	all := strIDs(b.IDs("calls"))

	t.Run("off by default", func(t *testing.T) {
		c := gatewaytest.Start(t, `
http://:0 {
	helpdesk_gateway
	reverse_proxy {backend}
}
`, srv.URL)
		a := get(t, c.URL+"/calls?_perPage=10")
		require.NotEmpty(t, a.header.Get("next_page_cursor"))
		assert.Empty(t, a.header.Values("Link"))
	})

	c := gatewaytest.Start(t, `
http://:0 {
	uri strip_prefix /v3
	helpdesk_gateway {
		link_header
	}
	reverse_proxy {backend}
}
`, srv.URL)
	// The client's parameters as sent: a space as %20, a flag without a
	// value, and bytes a server takes in a query but a Link cannot hold.
	// (A stray '%' is refused with 400: TestMalformedPercentEncodingIsRefused.)
	const extra = `x=a%20b&flag&q="<i>"`
	first, err := url.Parse(c.URL + "/v3/calls?" + extra + "&_perPage=10")
	require.NoError(t, err)
	a := get(t, first.String())
	require.Equal(t, http.StatusOK, a.status, string(a.body))
	assert.Equal(t, []string{`</v3/calls?x=a%20b&flag&q=%22%3Ci%3E%22&_perPage=10&_cursor=` +
		url.QueryEscape(exactCursor(all[9])) + `>; rel="next"`}, a.header.Values("Link"),
		"the path the client asked for, before Caddy's rewrite")
	reqs := rec.requests()
	require.NotEmpty(t, reqs)
	assert.Contains(t, reqs[len(reqs)-1].URL.RawQuery, extra, "the backend gets the client's bytes")

	// A generic client: follow rel="next", resolved against the request.
	var ids []string
	next := first
	for pages := 0; next != nil; pages++ {
		require.Less(t, pages, 20)
		a := get(t, next.String())
		require.Equal(t, http.StatusOK, a.status, string(a.body))
		ids = append(ids, a.ids(t)...)
		links := a.header.Values("Link")
		if a.header.Get("next_page_cursor") == "" {
			assert.Empty(t, links, "no Link on the last page")
			next = nil
			continue
		}
		require.Len(t, links, 1)
		m := nextLinkRE.FindStringSubmatch(links[0])
		require.NotNil(t, m, links[0])
		next, err = next.Parse(m[1])
		require.NoError(t, err)
		assert.Equal(t, a.header.Get("next_page_cursor"), next.Query().Get("_cursor"))
		assert.Equal(t, "a b", next.Query().Get("x"))
		assert.Equal(t, `"<i>"`, next.Query().Get("q"))
	}
	assert.Equal(t, all, ids)

	// An offset page links on by cursor, with the page size it was served at.
	a = get(t, c.URL+"/v3/calls?_page=2&_perPage=20")
	assert.Equal(t, []string{`</v3/calls?_perPage=20&_cursor=` + url.QueryEscape(exactCursor(all[39])) + `>; rel="next"`}, a.header.Values("Link"))
}
