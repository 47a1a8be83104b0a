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

// TestRewriteAfterTheGateway: the handlers after the gateway that Caddy
// puts in route groups (rewrite, handle) apply to each backend call, as
// they would to a client's request. Caddy marks a group done in a map of
// the request's context; the calls of one client request shared it, so
// only the first call was rewritten (the next ones reached the backend at
// the client's path: a 404), and a read ahead wrote it beside the page's
// own call (concurrent map writes, which stop the process). The backend
// answers only under /api/v1.
func TestRewriteAfterTheGateway(t *testing.T) {
	b := reference.New(reference.Config{Seed: 27, Records: 300})
	mux := http.NewServeMux()
	mux.Handle("/api/v1/", http.StripPrefix("/api/v1", b))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c := gatewaytest.Start(t, `
http://:0 {
	route {
		helpdesk_gateway {
			backend_max_per_page 25
		}
		rewrite * /api/v1{path}
		handle /api/v1/tickets* {
			respond 418
		}
		handle {
			reverse_proxy {backend}
		}
	}
}
`, srv.URL)
	all := strIDs(b.IDs("calls"))

	// One client page over several backend calls (25 records a call).
	a := get(t, c.URL+"/calls?_perPage=60&_cursor="+cursorFor(all[9]))
	require.Equal(t, http.StatusOK, a.status, string(a.body))
	assert.Equal(t, all[10:70], a.ids(t))

	// Whole walks, the second from windows read ahead in the background
	// while pages are served.
	for walk := range 2 {
		ids, _ := walkCursor(t, c.URL, "/calls", 7, "")
		assert.Equal(t, all, ids, "walk %d", walk)
		caddymodule.TrustWalks()
	}
}

// TestNoHandlerAfterTheGateway: a backend call that no handler after the
// gateway answers (its route matched nothing) is a 502 that says so, not
// a panic over a status of 0.
func TestNoHandlerAfterTheGateway(t *testing.T) {
	_, srv := gatewaytest.Backend(t, reference.Config{Seed: 27, Records: 30})
	c := gatewaytest.Start(t, `
http://:0 {
	route {
		helpdesk_gateway
		handle /elsewhere/* {
			reverse_proxy {backend}
		}
	}
}
`, srv.URL)
	a := get(t, c.URL+"/calls?_perPage=5")
	require.Equal(t, http.StatusBadGateway, a.status, string(a.body))
	assert.Contains(t, a.message(t), "handlers after helpdesk_gateway")
}

// TestReadAheadGoesWhereThePageGoes: a Caddyfile's rewrites are one
// group, so a rewrite before the gateway that matched the client's
// request skips the one after it, for the page's calls as Caddy would for
// the request. A read ahead of the walker makes its calls from a request
// of its own, which starts with the groups the client's had done: its
// calls reach the backend the page's reach (/calls here), never the one
// the skipped rewrite names (/api/v1/calls, another list).
func TestReadAheadGoesWhereThePageGoes(t *testing.T) {
	b := reference.New(reference.Config{Seed: 28, Records: 300})
	other := reference.New(reference.Config{Seed: 29, Records: 300})
	mux := http.NewServeMux()
	mux.Handle("/calls", b)
	mux.Handle("/api/v1/", http.StripPrefix("/api/v1", other))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c := gatewaytest.Start(t, `
http://:0 {
	route {
		rewrite /old/calls /calls
		helpdesk_gateway
		rewrite * /api/v1{path}
		reverse_proxy {backend}
	}
}
`, srv.URL)
	caddymodule.TrustWalks()
	for walk := range 2 {
		ids, _ := walkCursor(t, c.URL, "/old/calls", 7, "")
		assert.Equal(t, strIDs(b.IDs("calls")), ids, "walk %d", walk)
	}
	assert.Zero(t, other.Requests("calls"), "no call went where the skipped rewrite points")
}
