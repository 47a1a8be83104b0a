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
)

// TestListIdentityFacts: pairs of requests that are one caller, or two,
// by each fact listIdentity reads (issue 30 point 1). Each request is
// made from a base as Caddy hands it to a handler.
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
		{"a request id", req{header: http.Header{"X-Request-Id": {"1"}}}, req{header: http.Header{"X-Request-Id": {"2"}}}, true},
		{"a client's X-Forwarded-Host, not trusted", req{header: http.Header{"X-Forwarded-Host": {"a"}}}, req{header: http.Header{"X-Forwarded-Host": {"b"}}}, true},
		{"a client's X-Forwarded-For, not trusted", req{header: http.Header{"X-Forwarded-For": {"10.0.0.1"}}}, req{}, true},
		{"a header named in Connection", req{header: http.Header{"X-Tenant": {"t"}, "Connection": {"keep-alive, x-tenant"}}}, req{}, true},
		{"a header not named in Connection", req{header: http.Header{"X-Tenant": {"t"}, "Connection": {"keep-alive"}}}, req{}, false},
		{"framing", req{header: http.Header{"X-A": {"x", "X-B", "q"}}}, req{header: http.Header{"X-A": {"x"}, "X-B": {"q"}}}, false},
		{"values joined", req{header: http.Header{"X-A": {"xy"}}}, req{header: http.Header{"X-A": {"x", "y"}}}, false},
		{"client address", req{client: "192.0.2.1"}, req{client: "192.0.2.2"}, false},
		{"scheme", req{https: true}, req{}, false},
		{"client certificate", req{cert: []byte("alice")}, req{cert: []byte("bob")}, false},
		{"the same client certificate", req{cert: []byte("alice")}, req{cert: []byte("alice")}, true},
		{"forwarded host from a trusted proxy", req{trusted: true, header: http.Header{"X-Forwarded-Host": {"a"}}}, req{trusted: true, header: http.Header{"X-Forwarded-Host": {"b"}}}, false},
		{"forwarded proto from a trusted proxy", req{trusted: true, header: http.Header{"X-Forwarded-Proto": {"https"}}}, req{trusted: true}, false},
		{"forwarded chain from a trusted proxy", req{trusted: true, header: http.Header{"X-Forwarded-For": {"10.0.0.1"}}}, req{trusted: true, header: http.Header{"X-Forwarded-For": {"10.0.0.2"}}}, false},
		// reverse_proxy appends a trusted proxy's own address to the chain.
		{"two trusted proxies, one chain", req{trusted: true, peer: "10.0.0.7:4000", header: http.Header{"X-Forwarded-For": {"192.0.2.1"}}},
			req{trusted: true, peer: "10.0.0.8:4000", header: http.Header{"X-Forwarded-For": {"192.0.2.1"}}}, false},
		{"a proxy's port", req{trusted: true, peer: "10.0.0.7:4000"}, req{trusted: true, peer: "10.0.0.7:4001"}, true},
		{"caller_key", req{tenant: "a"}, req{tenant: "b"}, false},
		{"caller_key framing", req{tenant: "a", header: http.Header{"X": {""}}}, req{tenant: "a\x01\x01X\x01"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := g.listIdentity(build(tc.a), "q=1"), g.listIdentity(build(tc.b), "q=1")
			if tc.same {
				assert.Equal(t, a, b)
			} else {
				assert.NotEqual(t, a, b)
			}
			assert.Equal(t, callerOf(a), a[len(a)-32:])
		})
	}
}
