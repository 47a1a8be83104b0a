package caddymodule_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule"
	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
)

// keyedBy puts kb behind a backend that names its caller from what
// Caddy passed on (a forwarded address, host or certificate subject)
// rather than an API key: key maps the request to the key kb shows
// records for, or "" for none.
func keyedBy(kb *keyedBackend, key func(r *http.Request) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set("X-Api-Key", key(r))
		kb.ServeHTTP(w, r)
	})
}

// callerFn sends one GET as a caller: its headers, its connection.
type callerFn func(t *testing.T, url string) answer

// send sends a request, a GET unless method says otherwise, with h
// (several values of a name are several header lines, in order) through
// client.
func send(t *testing.T, client *http.Client, url string, h http.Header, method ...string) answer {
	t.Helper()
	req, err := http.NewRequest(append(method, http.MethodGet)[0], url, nil)
	require.NoError(t, err)
	for name, values := range h {
		req.Header[name] = values
	}
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return answer{status: resp.StatusCode, header: resp.Header, body: body}
}

func withHeaders(client *http.Client, h http.Header) callerFn {
	return func(t *testing.T, url string) answer { return send(t, client, url, h) }
}

// records decodes a page of a keyedBackend, requiring a 200.
func records(t *testing.T, a answer) (ids []int64, owners map[string]bool) {
	t.Helper()
	require.Equal(t, http.StatusOK, a.status, string(a.body))
	var recs []keyedRecord
	require.NoError(t, json.Unmarshal(a.body, &recs))
	owners = map[string]bool{}
	for _, r := range recs {
		ids = append(ids, r.ID)
		owners[r.Owner] = true
	}
	return ids, owners
}

// checkSeparate: caller a walks three pages of /calls, so that a window
// holds its next pages. b then sends a cursor built by hand for the id
// that ends a's last page (b needs none of a's cursors, only an id): it
// gets b's own records after that id, read from the backend with b's own
// facts. a sending the same cursor afterwards is served from its window
// with no backend call, so the window b did not get was live. keyA and
// keyB are the backend keys the two are known by.
func checkSeparate(t *testing.T, kb *keyedBackend, base string, a, b callerFn, keyA, keyB string) {
	t.Helper()
	var walked []int64
	cursor := ""
	for range 3 {
		u := base + "/calls?_perPage=10"
		if cursor != "" {
			u += "&_cursor=" + cursor
		}
		page := a(t, u)
		ids, owners := records(t, page)
		require.Equal(t, map[string]bool{keyA: true}, owners, "a walks its own records")
		walked = append(walked, ids...)
		cursor = page.header.Get("next_page_cursor")
	}
	require.Equal(t, kb.a[:30], walked)

	last := walked[len(walked)-1]
	hand := base + "/calls?_perPage=10&_cursor=" + cursorFor(strconv.FormatInt(last, 10))
	before, _ := kb.cost(keyB)
	ids, owners := records(t, b(t, hand))
	after, _ := kb.cost(keyB)
	want, _ := nextAfter(kb.b, last, 10)
	assert.Equal(t, want, ids, "b's own records after %d, never a's window", last)
	assert.Equal(t, map[string]bool{keyB: true}, owners, "read with b's facts")
	assert.Greater(t, after, before, "another caller: the backend is asked")

	before = kb.pageCalls(keyA)
	ids, owners = records(t, a(t, hand))
	after = kb.pageCalls(keyA)
	want, _ = nextAfter(kb.a, last, 10)
	assert.Equal(t, want, ids)
	assert.Equal(t, map[string]bool{keyA: true}, owners)
	assert.Equal(t, before, after, "a's own walk goes on from its window: the window was live")
}

// TestClientCertificatesSeparateCallers: two clients with the same
// headers and two TLS client certificates, which reverse_proxy passes to
// the backend as their subject. Issue 30: the second was served the
// first one's window.
func TestClientCertificatesSeparateCallers(t *testing.T) {
	dir := t.TempDir()
	ca, caKey := newCA(t, dir)
	serverCert(t, dir, ca, caKey)
	alice := clientCert(t, ca, caKey, "a-alice")
	bob := clientCert(t, ca, caKey, "b-bob")

	kb := newKeyedBackend(300, 1000)
	srv := httptest.NewServer(keyedBy(kb, func(r *http.Request) string {
		return strings.TrimPrefix(r.Header.Get("X-Client-Subject"), "CN=")
	}))
	t.Cleanup(srv.Close)
	c := gatewaytest.Start(t, fmt.Sprintf(`
https://localhost:0 {
	tls %[1]s/server.pem %[1]s/server.key {
		client_auth {
			mode require_and_verify
			trust_pool file %[1]s/ca.pem
		}
	}
	helpdesk_gateway {
		readahead_ttl 30s
	}
	reverse_proxy {backend} {
		header_up X-Client-Subject {http.request.tls.client.subject}
	}
}
`, dir), srv.URL)
	caddymodule.TrustWalks()
	base := strings.Replace(c.URL, "http://127.0.0.1", "https://localhost", 1) // the SNI must be the Host, with client_auth
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	client := func(cert tls.Certificate) *http.Client {
		return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
			RootCAs: pool, Certificates: []tls.Certificate{cert}, ServerName: "localhost",
		}}}
	}
	h := http.Header{"Accept": {"application/json"}}
	checkSeparate(t, kb, base, withHeaders(client(alice), h), withHeaders(client(bob), h), "a-alice", "b-bob")
}

// TestClientAddressesSeparateCallers: two clients with the same headers,
// one from 127.0.0.2 and one from 127.0.0.3; the backend tells them apart
// by the X-Forwarded-For reverse_proxy sets. Issue 30: the second was
// served the first one's window.
func TestClientAddressesSeparateCallers(t *testing.T) {
	kb := newKeyedBackend(300, 1000)
	srv := httptest.NewServer(keyedBy(kb, func(r *http.Request) string {
		switch r.Header.Get("X-Forwarded-For") {
		case "127.0.0.2":
			return "a-127.0.0.2"
		case "127.0.0.3":
			return "b-127.0.0.3"
		}
		return ""
	}))
	t.Cleanup(srv.Close)
	c := gatewaytest.Start(t, fmt.Sprintf(gatewaySite, "readahead_ttl 30s"), srv.URL)
	caddymodule.TrustWalks()
	from := func(ip string) *http.Client {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
		return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: d.DialContext}}
	}
	h := http.Header{"X-Api-Key": {"shared"}}
	checkSeparate(t, kb, c.URL, withHeaders(from("127.0.0.2"), h), withHeaders(from("127.0.0.3"), h), "a-127.0.0.2", "b-127.0.0.3")
}

// TestForwardedHostsSeparateCallers: behind trusted_proxies, Caddy passes
// the client's X-Forwarded-Host on, and the backend picks the tenant by
// it. Issue 30: windows were shared between hosts.
func TestForwardedHostsSeparateCallers(t *testing.T) {
	kb := newKeyedBackend(300, 1000)
	srv := httptest.NewServer(keyedBy(kb, func(r *http.Request) string {
		host, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Host"), ".")
		return host
	}))
	t.Cleanup(srv.Close)
	c := gatewaytest.Start(t, fmt.Sprintf(gatewaySite, "readahead_ttl 30s"), srv.URL,
		gatewaytest.Options{Global: "servers {\n\t\ttrusted_proxies static 127.0.0.0/8\n\t}"})
	caddymodule.TrustWalks()
	h := func(host string) http.Header {
		return http.Header{"X-Forwarded-Host": {host}, "X-Forwarded-For": {"198.51.100.9"}}
	}
	checkSeparate(t, kb, c.URL, withHeaders(gatewaytest.Client, h("a-tenant.example")), withHeaders(gatewaytest.Client, h("b-tenant.example")),
		"a-tenant", "b-tenant")
}

// TestConnectionNamedHeaderIsNotACaller: a header the client names in
// Connection is dropped by reverse_proxy, so it cannot make the caller.
// The first caller sends the second's exact headers, X-Tenant named in
// Connection: the backend gives it its untenanted view, which must not
// be served to the second, whose X-Tenant reaches the backend. Issue 30.
func TestConnectionNamedHeaderIsNotACaller(t *testing.T) {
	kb := newKeyedBackend(300, 1000)
	srv := httptest.NewServer(keyedBy(kb, func(r *http.Request) string {
		if tenant := r.Header.Get("X-Tenant"); tenant != "" {
			return tenant
		}
		return r.Header.Get("X-Api-Key")
	}))
	t.Cleanup(srv.Close)
	c := gatewaytest.Start(t, fmt.Sprintf(gatewaySite, "readahead_ttl 30s"), srv.URL)
	caddymodule.TrustWalks()
	sneaky := http.Header{"X-Api-Key": {"a-conn"}, "X-Tenant": {"b-conn"}, "Connection": {"X-Tenant"}}
	plain := http.Header{"X-Api-Key": {"a-conn"}, "X-Tenant": {"b-conn"}}
	checkSeparate(t, kb, c.URL, withHeaders(gatewaytest.Client, sneaky), withHeaders(gatewaytest.Client, plain), "a-conn", "b-conn")
}

// TestHeaderFramingSeparatesCallers: {X-S: [a-s, X-T, q]} and
// {X-S: [a-s], X-T: [q]} are two callers to a backend that reads X-T;
// issue 30 found them under one key, names and values having been joined
// by a separator a value may hold.
func TestHeaderFramingSeparatesCallers(t *testing.T) {
	kb := newKeyedBackend(300, 1000)
	srv := httptest.NewServer(keyedBy(kb, func(r *http.Request) string {
		key := r.Header.Get("X-S")
		if r.Header.Get("X-T") != "" {
			key = "b" + key[1:]
		}
		return key
	}))
	t.Cleanup(srv.Close)
	c := gatewaytest.Start(t, fmt.Sprintf(gatewaySite, "readahead_ttl 30s"), srv.URL)
	caddymodule.TrustWalks()
	one := http.Header{"X-S": {"a-s", "X-T", "q"}}
	two := http.Header{"X-S": {"a-s"}, "X-T": {"q"}}
	checkSeparate(t, kb, c.URL, withHeaders(gatewaytest.Client, one), withHeaders(gatewaytest.Client, two), "a-s", "b-s")
}

// TestCallerKeyNamesAFact: the route after the gateway passes the backend
// a fact the gateway does not count (here the per-request X-Real-Ip, as
// an edge may set it); caller_key names it, so that two values are two
// callers.
func TestCallerKeyNamesAFact(t *testing.T) {
	kb := newKeyedBackend(300, 1000)
	srv := httptest.NewServer(kb)
	t.Cleanup(srv.Close)
	c := gatewaytest.Start(t, `
http://:0 {
	helpdesk_gateway {
		readahead_ttl 30s
		caller_key {header.X-Real-Ip}
	}
	reverse_proxy {backend} {
		header_up X-Api-Key {header.X-Real-Ip}
	}
}
`, srv.URL)
	caddymodule.TrustWalks()
	checkSeparate(t, kb, c.URL,
		withHeaders(gatewaytest.Client, http.Header{"X-Real-Ip": {"a-edge"}}),
		withHeaders(gatewaytest.Client, http.Header{"X-Real-Ip": {"b-edge"}}), "a-edge", "b-edge")
}

// newCA makes a certificate authority and writes it to dir/ca.pem.
func newCA(t *testing.T, dir string) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	writePEM(t, filepath.Join(dir, "ca.pem"), "CERTIFICATE", der)
	return ca, key
}

// issue signs a certificate for tmpl with ca.
func issue(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, tmpl *x509.Certificate) ([]byte, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	require.NoError(t, err)
	tmpl.SerialNumber = serial
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	require.NoError(t, err)
	return der, key
}

// serverCert writes a certificate for localhost to dir/server.pem and
// its key to dir/server.key.
func serverCert(t *testing.T, dir string, ca *x509.Certificate, caKey *ecdsa.PrivateKey) {
	t.Helper()
	der, key := issue(t, ca, caKey, &x509.Certificate{
		Subject: pkix.Name{CommonName: "localhost"}, DNSNames: []string{"localhost"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature,
	})
	writePEM(t, filepath.Join(dir, "server.pem"), "CERTIFICATE", der)
	kder, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	writePEM(t, filepath.Join(dir, "server.key"), "EC PRIVATE KEY", kder)
}

// clientCert makes a client certificate with the common name cn.
func clientCert(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, cn string) tls.Certificate {
	t.Helper()
	der, key := issue(t, ca, caKey, &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature,
	})
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func writePEM(t *testing.T, path, kind string, der []byte) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600))
}
