package caddymodule_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// TestCORSExposesCursor: wherever Access-Control-Allow-Origin comes from
// (the site's `header` directive, applied before the gateway or deferred
// until the answer is written, or the backend), a cross-origin request's
// page lists next_page_cursor in Access-Control-Expose-Headers, merged
// with what is there, so a browser's script can read it.
func TestCORSExposesCursor(t *testing.T) {
	b := reference.New(reference.Config{Seed: 17, Records: 40})
	srv := httptest.NewServer(b)
	t.Cleanup(srv.Close)
	const origin = "http://127.0.0.1:1"
	for _, tc := range []struct {
		name, site string
		origin     string // the request's Origin; "" for none
		allow      string // Access-Control-Allow-Origin expected
		expose     string // Access-Control-Expose-Headers expected
		vary       []string
	}{
		{name: "header directive", site: `header Access-Control-Allow-Origin *`,
			origin: origin, allow: "*", expose: "next_page_cursor"},
		{name: "header directive, no Origin", site: `header Access-Control-Allow-Origin *`,
			allow: "*", expose: "next_page_cursor"},
		{name: "deferred header directive", site: `header >Access-Control-Allow-Origin *`,
			origin: origin, allow: "*", expose: "next_page_cursor", vary: []string{"Origin"}},
		{name: "default-only header directive", site: `header ?Access-Control-Allow-Origin ` + origin,
			origin: origin, allow: origin, expose: "next_page_cursor", vary: []string{"Origin"}},
		{name: "header block with a deletion", site: "header {\n\t\tAccess-Control-Allow-Origin *\n\t\t-Server\n\t}",
			origin: origin, allow: "*", expose: "next_page_cursor", vary: []string{"Origin"}},
		{name: "backend", site: `reverse_proxy {backend} {
		header_down Access-Control-Allow-Origin *
		header_down Access-Control-Expose-Headers "X-Request-Id, Retry-After"
	}`, origin: origin, allow: "*", expose: "X-Request-Id, Retry-After, next_page_cursor"},
		{name: "merged with the site's list", site: `header Access-Control-Allow-Origin *
	header Access-Control-Expose-Headers "X-Request-Id,X-Trace"`,
			origin: origin, allow: "*", expose: "X-Request-Id, X-Trace, next_page_cursor"},
		{name: "already listed, in any case", site: `header Access-Control-Allow-Origin *
	header Access-Control-Expose-Headers "X-Request-Id, Next_Page_Cursor"`,
			origin: origin, allow: "*", expose: "X-Request-Id, Next_Page_Cursor"},
		{name: "no CORS, no Origin: nothing added", site: ``},
		{name: "no CORS, an Origin", site: ``, origin: origin, expose: "next_page_cursor", vary: []string{"Origin"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proxy := "reverse_proxy {backend}"
			if strings.HasPrefix(tc.site, "reverse_proxy") {
				proxy, tc.site = tc.site, ""
			}
			c := gatewaytest.Start(t, "http://:0 {\n\t"+tc.site+"\n\thelpdesk_gateway\n\t"+proxy+"\n}\n", srv.URL)
			for _, target := range []string{"/calls?_perPage=5", "/calls?_perPage=50"} { // a page, the last page
				var headers []string
				if tc.origin != "" {
					headers = []string{"Origin", tc.origin}
				}
				a := get(t, c.URL+target, headers...)
				require.Equal(t, http.StatusOK, a.status, string(a.body))
				assert.Equal(t, tc.allow, a.header.Get("Access-Control-Allow-Origin"))
				if tc.expose == "" {
					assert.Empty(t, a.header.Values("Access-Control-Expose-Headers"))
				} else {
					assert.Equal(t, []string{tc.expose}, a.header.Values("Access-Control-Expose-Headers"))
				}
				assert.Equal(t, tc.vary, a.header.Values("Vary"))
			}
		})
	}
}

// TestPreflightPassesThrough: a CORS preflight (OPTIONS) on a cursor
// endpoint is not the gateway's: it reaches the next handler as sent, and
// its answer comes back without anything added.
func TestPreflightPassesThrough(t *testing.T) {
	c, _, rec := startGateway(t, reference.Config{Seed: 18, Records: 20}, "")
	target := "/calls?_perPage=5&_cursor=" + cursorFor("3")
	req, err := http.NewRequest(http.MethodOptions, c.URL+target, nil)
	require.NoError(t, err)
	req.Header.Set("Origin", "http://127.0.0.1:1")
	req.Header.Set("Access-Control-Request-Method", "GET")
	req.Header.Set("Access-Control-Request-Headers", "apikey")
	resp, err := gatewaytest.Client.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, "the reference backend's answer")
	assert.Equal(t, "GET, HEAD", resp.Header.Get("Allow"))
	for _, k := range []string{"Access-Control-Expose-Headers", "Vary", "next_page_cursor"} {
		assert.Empty(t, resp.Header.Values(k), k)
	}
	reqs := rec.requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, http.MethodOptions, reqs[0].Method)
	assert.Equal(t, target, reqs[0].URL.RequestURI())
	assert.Equal(t, "apikey", reqs[0].Header.Get("Access-Control-Request-Headers"))
}
