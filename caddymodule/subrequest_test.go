package caddymodule

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/pagequery"
	"github.com/helpdesk-gateway/gateway/translate"
)

// TestSubrequestsHaveVarsOfTheirOwn: reverse_proxy writes its dial details
// into the request's Caddy vars, and the transport may read them from a
// dial that outlives the call. Sub-requests sharing the client's vars map
// race with each other (go test -race caught it under load); each gets a
// copy, and the client's vars are left as they were.
func TestSubrequestsHaveVarsOfTheirOwn(t *testing.T) {
	clientVars := map[string]any{"client": "kept"}
	ctx := context.WithValue(context.Background(), caddyhttp.VarsCtxKey, clientVars)
	r := httptest.NewRequestWithContext(ctx, http.MethodGet, "/calls?_perPage=2", nil)

	var seen []uintptr
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		vars, ok := r.Context().Value(caddyhttp.VarsCtxKey).(map[string]any)
		require.True(t, ok, "a sub-request has Caddy vars")
		assert.Equal(t, "kept", vars["client"], "copied from the client's")
		seen = append(seen, reflect.ValueOf(vars).Pointer())
		caddyhttp.SetVar(r.Context(), "reverse_proxy.upstream", "written by the proxy")
		w.Header().Set("Content-Type", "application/json")
		_, err := w.Write([]byte(`[{"id":1},{"id":2}]`))
		return err
	})
	g := &Gateway{IDField: "id", MaxBodySize: 1 << 20, BackendSort: defaultBackendSort}
	f := &fetcher{g: g, r: r, next: next}
	for page := 1; page <= 2; page++ {
		_, err := f.Fetch(ctx, translate.Window{Start: (page - 1) * 2, Size: 2})
		require.NoError(t, err)
	}
	require.Len(t, seen, 2)
	assert.NotEqual(t, seen[0], seen[1], "each sub-request has its own vars")
	assert.NotEqual(t, reflect.ValueOf(clientVars).Pointer(), seen[0], "not the client's")
	assert.Equal(t, map[string]any{"client": "kept"}, clientVars, "the client's vars are untouched")
}

// TestSubrequestURI: the request URI and the query of a sub-request are
// built as one string; they must read as URL.RequestURI would give them,
// with the client's path as it came (escaped) and its own parameters
// first.
func TestSubrequestURI(t *testing.T) {
	for _, tc := range []struct{ target, forward, wantURI string }{
		{"/calls?_perPage=2", "", "/calls?_sortField=id&_sortDir=ASC&_page=3&_perPage=2"},
		{"/calls?status=open&_perPage=2", "status=open", "/calls?status=open&_sortField=id&_sortDir=ASC&_page=3&_perPage=2"},
		{"/api/v3/tickets%2Fhistory?_perPage=2", "", "/api/v3/tickets%2Fhistory?_sortField=id&_sortDir=ASC&_page=3&_perPage=2"},
	} {
		t.Run(tc.target, func(t *testing.T) {
			var got *http.Request
			next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
				got = r
				_, err := w.Write([]byte(`[{"id":1}]`))
				return err
			})
			r := httptest.NewRequest(http.MethodGet, tc.target, nil)
			g := &Gateway{IDField: "id", MaxBodySize: 1 << 20, BackendSort: defaultBackendSort}
			f := &fetcher{g: g, r: r, next: next, forward: tc.forward}
			defer f.release()
			_, err := f.Fetch(t.Context(), translate.Window{Start: 4, Size: 2})
			require.NoError(t, err)
			assert.Equal(t, tc.wantURI, got.RequestURI)
			assert.Equal(t, got.URL.RequestURI(), got.RequestURI, "as URL.RequestURI gives it")
			assert.Equal(t, tc.wantURI[strings.IndexByte(tc.wantURI, '?')+1:], got.URL.RawQuery)
			assert.Equal(t, []string{got.URL.RawQuery}, f.queries)
			assert.Equal(t, tc.target, r.URL.RequestURI(), "the client's request is as it came")
		})
	}
}

// TestWindowCallsCarryNoValidators: a window call carries none of the
// client's validators or ranges, whatever their spelling in the client's
// request; every other header goes as it came, and the client's request
// keeps them all.
func TestWindowCallsCarryNoValidators(t *testing.T) {
	var got http.Header
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		got = r.Header
		_, err := w.Write([]byte(`[{"id":1}]`))
		return err
	})
	r := httptest.NewRequest(http.MethodGet, "/calls", nil)
	for _, name := range clientValidators {
		r.Header[name] = []string{"client's " + name}
	}
	r.Header.Set("Authorization", "Bearer k")
	r.Header.Set("X-Api-Key", "k")
	before := r.Header.Clone()
	g := &Gateway{IDField: "id", MaxBodySize: 1 << 20, BackendSort: defaultBackendSort}
	f := &fetcher{g: g, r: r, next: next}
	defer f.release()
	_, err := f.Fetch(t.Context(), translate.Window{Start: 0, Size: 2})
	require.NoError(t, err)
	for _, name := range []string{"If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since", "If-Range", "Range"} {
		assert.NotContains(t, got, name)
		assert.Equal(t, before[name], r.Header[name], "the client's request keeps %s", name)
	}
	assert.Equal(t, "Bearer k", got.Get("Authorization"))
	assert.Equal(t, "k", got.Get("X-Api-Key"))
	assert.Equal(t, "identity", got.Get("Accept-Encoding"))
}

// TestCaptureKeepsTrailersApart: what a handler adds to the header map
// after the status (reverse_proxy's copy of the backend's trailers) is
// kept apart from the answer's headers, so no trailer becomes a header of
// a page.
func TestCaptureKeepsTrailersApart(t *testing.T) {
	c := newCapture(1024, nil)
	c.Header().Set("Content-Type", "application/json")
	c.Header().Add("Trailer", "X-Checksum")
	c.WriteHeader(http.StatusOK)
	_, err := c.Write([]byte(`[]`))
	require.NoError(t, err)
	c.Header().Set("X-Checksum", "abc")
	c.Header().Add(http.TrailerPrefix+"X-Late", "late")
	assert.Equal(t, http.Header{"Content-Type": {"application/json"}, "Trailer": {"X-Checksum"}}, c.header)
	assert.Equal(t, http.Header{"X-Checksum": {"abc"}, "Trailer:X-Late": {"late"}}, c.trailer)

	g := &Gateway{dropHeaders: map[string]bool{}}
	page := http.Header{}
	g.pageHeaders(page, httptest.NewRequest(http.MethodGet, "/calls", nil), c.header, pagequery.Query{PerPage: 10}, "")
	assert.Equal(t, http.Header{"Content-Type": {"application/json"}}, page, "no trailer, nor its announcement")
}
