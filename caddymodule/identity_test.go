package caddymodule

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/stretchr/testify/assert"

	"github.com/helpdesk-gateway/gateway/caller"
)

// TestListIdentityFacts: the facts of a caller only Caddy knows reach
// caller.List (issue 30 point 1): its resolved client address, whether
// a trusted proxy sent the request, and the caller_key placeholders.
// Each request is made from a base as Caddy hands it to a handler; the
// caller package's TestListFacts holds every other fact.
func TestListIdentityFacts(t *testing.T) {
	type req struct {
		header  http.Header
		client  string // {http.vars.client_ip}
		trusted bool
		cert    []byte // the client certificate's DER
		https   bool
		tenant  string // {http.vars.tenant}, read by caller_key
		peer    string // the connection's peer address; httptest's when empty
	}
	build := func(q req) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/calls", nil)
		for k, v := range q.header {
			r.Header[k] = v
		}
		if q.peer != "" {
			r.RemoteAddr = q.peer
		}
		if q.client == "" {
			q.client = "192.0.2.1"
		}
		if q.https || q.cert != nil {
			r.TLS = &tls.ConnectionState{}
		}
		if q.cert != nil {
			r.TLS.PeerCertificates = []*x509.Certificate{{Raw: q.cert}}
		}
		repl := caddy.NewReplacer()
		ctx := context.WithValue(r.Context(), caddy.ReplacerCtxKey, repl)
		vars := map[string]any{caddyhttp.TrustedProxyVarKey: q.trusted, caddyhttp.ClientIPVarKey: q.client, "tenant": q.tenant}
		ctx = context.WithValue(ctx, caddyhttp.VarsCtxKey, vars)
		r = r.WithContext(ctx)
		repl.Map(func(key string) (any, bool) {
			if key == "http.vars.tenant" {
				return q.tenant, true
			}
			return nil, false
		})
		return r
	}
	g := &Gateway{CallerKey: []string{"{http.vars.tenant}"}}
	for _, tc := range []struct {
		name string
		a, b req
		same bool
	}{
		{"client address", req{client: "192.0.2.1"}, req{client: "192.0.2.2"}, false},
		{"a client's X-Forwarded-Host, not trusted", req{header: http.Header{"X-Forwarded-Host": {"a"}}}, req{header: http.Header{"X-Forwarded-Host": {"b"}}}, true},
		{"forwarded host from a trusted proxy", req{trusted: true, header: http.Header{"X-Forwarded-Host": {"a"}}}, req{trusted: true, header: http.Header{"X-Forwarded-Host": {"b"}}}, false},
		{"caller_key", req{tenant: "a"}, req{tenant: "b"}, false},
		{"caller_key, the same value", req{tenant: "a"}, req{tenant: "a"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := g.listIdentity(build(tc.a), "q=1"), g.listIdentity(build(tc.b), "q=1")
			if tc.same {
				assert.Equal(t, a, b)
			} else {
				assert.NotEqual(t, a, b)
			}
			assert.Equal(t, caller.Of(a), a[len(a)-32:])
		})
	}
}
