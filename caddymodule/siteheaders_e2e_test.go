package caddymodule_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule"
	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// headerBackend is the reference backend with caching headers of its own,
// and a refusal (its status in X-Fail) for a request that asks for one.
type headerBackend struct{ next http.Handler }

func (b headerBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "private, max-age=5")
	h.Set("Vary", "Accept-Encoding")
	h.Set("X-Backend", "b")
	h.Add("Set-Cookie", "a=1")
	h.Add("Set-Cookie", "b=2")
	h.Set("X-Drop", "x")
	if r.Header.Get("X-Fail") == "401" {
		h.Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"message":"bad key"}`))
		return
	}
	b.next.ServeHTTP(w, r)
}

// TestSiteHeadersJoinTheBackendsAsReverseProxy: headers the site sets
// before the gateway (`header Cache-Control ...`, `header Vary ...`) and
// the backend's both reach a page the gateway composes, exactly as they
// reach an answer reverse_proxy passes on from the same backend: the site's
// first, then the backend's, none replaced; Caddy's Server header gives
// way to reverse_proxy's Via; a deferred `header` (a `>` set, or a
// deletion such as `-Server` or `-X-Drop`) applies to both alike. Set-Cookie
// keeps every value of the site's and the backend's. A page cut from a
// read-ahead window, with no backend call of its own, is no different.
func TestSiteHeadersJoinTheBackendsAsReverseProxy(t *testing.T) {
	b := reference.New(reference.Config{Seed: 14, Records: 100})
	srv := httptest.NewServer(headerBackend{next: b})
	t.Cleanup(srv.Close)
	c := gatewaytest.Start(t, `
http://:0 {
	header Cache-Control no-transform
	header Vary Accept-Language
	header X-Site s
	header >X-Deferred d
	header Set-Cookie site=1
	header -Server
	header -X-Drop
	handle_path /direct/* {
		reverse_proxy {backend}
	}
	handle {
		helpdesk_gateway {
			backend_max_per_page 25
		}
		reverse_proxy {backend}
	}
}
`, srv.URL)
	all := strIDs(b.IDs("calls"))
	compared := []string{"Cache-Control", "Vary", "X-Site", "X-Backend", "X-Deferred", "Via", "Server", "Set-Cookie", "X-Drop"}
	direct := get(t, c.URL+"/direct/calls?_perPage=3")
	require.Equal(t, http.StatusOK, direct.status, string(direct.body))
	refused := get(t, c.URL+"/direct/calls?_perPage=3", "X-Fail", "401")
	require.Equal(t, http.StatusUnauthorized, refused.status, string(refused.body))
	for _, want := range []answer{direct, refused} {
		assert.Equal(t, []string{"no-transform", "private, max-age=5"}, want.header.Values("Cache-Control"), "reverse_proxy adds")
		assert.Equal(t, []string{"Accept-Language", "Accept-Encoding"}, want.header.Values("Vary"))
		assert.Equal(t, "s", want.header.Get("X-Site"))
		assert.Equal(t, "b", want.header.Get("X-Backend"))
		assert.Equal(t, "d", want.header.Get("X-Deferred"))
		assert.Empty(t, want.header.Values("Server"), "reverse_proxy drops Caddy's Server for its Via")
		assert.NotEmpty(t, want.header.Get("Via"))
		assert.Equal(t, []string{"site=1", "a=1", "b=2"}, want.header.Values("Set-Cookie"))
		assert.Empty(t, want.header.Values("X-Drop"), "a deferred deletion removes the backend's too")
	}

	for _, tc := range []struct {
		name, query string
		headers     []string
		status      int
		like        answer
	}{
		{"first cursor page", "_perPage=3", nil, http.StatusOK, direct},
		{"cursor page over several backend calls", "_perPage=40&_cursor=" + cursorFor(all[10]), nil, http.StatusOK, direct},
		{"_page", "_page=2&_perPage=30", nil, http.StatusOK, direct},
		{"last page", "_perPage=10&_cursor=" + cursorFor(all[95]), nil, http.StatusOK, direct},
		{"backend refusal passed on", "_perPage=3", []string{"X-Fail", "401"}, http.StatusUnauthorized, refused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := get(t, c.URL+"/calls?"+tc.query, tc.headers...)
			require.Equal(t, tc.status, a.status, string(a.body))
			for _, name := range compared {
				assert.Equal(t, tc.like.header.Values(name), a.header.Values(name), "%s as reverse_proxy gives it", name)
			}
		})
	}

	t.Run("pages cut from a read-ahead window", func(t *testing.T) {
		// The hand-built cursors above stood read-ahead down (stay.go):
		// an instance that has seen walks stay, as a lone one has.
		caddymodule.TrustWalks()
		cursor, fromWindow := "", 0
		for page := range 6 {
			query := "_perPage=5"
			if cursor != "" {
				query += "&_cursor=" + cursor
			}
			before := b.Requests("calls")
			a := get(t, c.URL+"/calls?"+query, "X-Api-Key", "window-walker")
			require.Equal(t, http.StatusOK, a.status, string(a.body))
			if b.Requests("calls") == before {
				fromWindow++
			}
			for _, name := range compared {
				assert.Equal(t, direct.header.Values(name), a.header.Values(name), "page %d: %s as reverse_proxy gives it", page, name)
			}
			cursor = a.header.Get("next_page_cursor")
			require.NotEmpty(t, cursor)
		}
		assert.Positive(t, fromWindow, "some pages came from a window, with no backend call")
	})
}
