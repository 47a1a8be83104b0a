package caller

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestListFacts: pairs of requests that are one caller, or two, by each
// fact List reads (issue 30 point 1).
func TestListFacts(t *testing.T) {
	type req struct {
		header  http.Header
		client  string // Facts.Client
		trusted bool   // Facts.Forwarded
		cert    []byte // the client certificate's DER
		https   bool
		tenant  string // the value of the caller_key {http.vars.tenant}
		peer    string // the connection's peer address; httptest's when empty
	}
	build := func(q req) (*http.Request, Facts) {
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
		return r, Facts{Client: q.client, Forwarded: q.trusted, Keys: []string{"{http.vars.tenant}"},
			Replace: func(key string) string {
				if key == "{http.vars.tenant}" {
					return q.tenant
				}
				return ""
			}}
	}
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
			ra, fa := build(tc.a)
			rb, fb := build(tc.b)
			a, b := List(ra, "q=1", fa), List(rb, "q=1", fb)
			if tc.same {
				assert.Equal(t, a, b)
			} else {
				assert.NotEqual(t, a, b)
			}
			assert.Equal(t, Of(a), a[len(a)-32:])
			assert.Equal(t, "/calls?q=1", Params(a))
		})
	}
}

// TestWantsFresh: the request directives RFC 9111 reads as "not from a
// store", however spelt, and those it does not.
func TestWantsFresh(t *testing.T) {
	for _, tc := range []struct {
		h    http.Header
		want bool
	}{
		{http.Header{}, false},
		{http.Header{"Cache-Control": {"no-cache"}}, true},
		{http.Header{"Cache-Control": {`No-Cache="x"`}}, true},
		{http.Header{"Cache-Control": {"max-age=60, no-store"}}, true},
		{http.Header{"Cache-Control": {`max-age="0"`}}, true},
		{http.Header{"Cache-Control": {"max-age=00"}}, true},
		{http.Header{"Cache-Control": {"max-age=10"}}, false},
		{http.Header{"Pragma": {"no-cache"}}, true},
		{http.Header{"Pragma": {"no-cache"}, "Cache-Control": {"max-age=10"}}, false},
	} {
		assert.Equal(t, tc.want, WantsFresh(tc.h), "%v", tc.h)
	}
}

// TestCheckKeys: a caller_key with no placeholder is refused, by name.
func TestCheckKeys(t *testing.T) {
	require.NoError(t, CheckKeys([]string{"{http.vars.tenant}", "t-{http.auth.user.id}"}))
	err := CheckKeys([]string{"{http.vars.tenant}", "tenant"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `caller_key: "tenant" holds no placeholder`)
	assert.Error(t, CheckKeys([]string{"{open"}))
}

// TestPeerIn: the connection's peer, its zone aside, against trusted
// prefixes; never a header's address.
func TestPeerIn(t *testing.T) {
	trust := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fe80::/10")}
	for _, tc := range []struct {
		peer   string
		trust  []netip.Prefix
		header string
		want   bool
	}{
		{"10.0.0.7:4000", trust, "", true},
		{"[fe80::1%eth0]:4000", trust, "", true},
		{"192.0.2.1:4000", trust, "10.0.0.7", false},
		{"10.0.0.7:4000", nil, "", false},
		{"not an address", trust, "", false},
	} {
		r := httptest.NewRequest(http.MethodGet, "/calls", nil)
		r.RemoteAddr = tc.peer
		if tc.header != "" {
			r.Header.Set("X-Forwarded-For", tc.header)
		}
		assert.Equal(t, tc.want, PeerIn(r, tc.trust), tc.peer)
	}
}
