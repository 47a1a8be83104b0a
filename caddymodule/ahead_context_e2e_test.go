package caddymodule_test

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule"
	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
)

// TestReadAheadKeepsTheOriginalURI: under handle_path, reverse_proxy
// names the tenant by the path the client asked for
// ({http.request.orig_uri.path}, before handle_path stripped it), and
// caller_key names the caller by it. Issue 47 point 3: a read ahead's
// copy of the request took the stripped path for the original, so the
// backend read its windows as tenant /calls, and the walk was served
// 821 of 2,400 records of another tenant.
func TestReadAheadKeepsTheOriginalURI(t *testing.T) {
	kb := newKeyedBackend(600, 1000)
	var mu sync.Mutex
	tenants := map[string]int{} // backend calls by the tenant they named
	srv := httptest.NewServer(keyedBy(kb, func(r *http.Request) string {
		tenant := r.Header.Get("X-Tenant")
		mu.Lock()
		tenants[tenant]++
		mu.Unlock()
		if tenant == "/acme/calls" {
			return "a-acme"
		}
		return "b-" + tenant
	}))
	t.Cleanup(srv.Close)
	c := gatewaytest.Start(t, `
http://:0 {
	handle_path /acme/* {
		helpdesk_gateway {
			readahead_ttl 30s
			caller_key {http.request.orig_uri.path}
		}
		reverse_proxy {backend} {
			header_up X-Tenant {http.request.orig_uri.path}
		}
	}
}
`, srv.URL)
	caddymodule.TrustWalks()
	bg0 := caddymodule.BackgroundCalls()
	w := &keyedWalker{base: c.URL + "/acme", perPage: 10, headers: fixed("Accept", "application/json")}
	for !w.done {
		caddymodule.SettleReadsAhead()
		w.next(t)
	}
	foreign := 0
	for _, id := range w.ids {
		if id%2 != 0 {
			foreign++
		}
	}
	mu.Lock()
	t.Logf("backend calls by tenant: %v; %d of %d records served were another tenant's", tenants, foreign, len(w.ids))
	mu.Unlock()
	assert.Equal(t, kb.a, w.ids, "tenant /acme/calls's records, every page")
	assert.Equal(t, map[string]bool{"a-acme": true}, w.owners, "every record read as tenant /acme/calls, reads ahead too")
	assert.Positive(t, caddymodule.BackgroundCalls()-bg0, "windows read ahead of the walker")
}

// requestPlaceholders are the placeholders Caddy documents for HTTP
// routes (caddyhttp.App's doc) that a header_up or a caller_key can name
// and that a request resolves: each with a `*` made concrete. Left out:
// {http.request.duration} and {http.request.duration_ms}, which grow as
// the request ages (a read ahead carries the client's start time, so
// they count from the client's request), and {http.response.*}, which
// header_up never sees, and {http.request.tls.client.certificate_pem},
// whose line breaks no header carries (the _der_base64 form is the same
// certificate). {client_ip} is {http.vars.client_ip}.
var requestPlaceholders = []string{
	"http.request.body",
	"http.request.body_base64",
	"http.request.cookie.session",
	"http.request.uuid",
	"http.request.header.X-Tenant",
	"http.request.header.Accept-Encoding",
	"http.request.host",
	"http.request.host.labels.0",
	"http.request.hostport",
	"http.request.method",
	"http.request.orig_method",
	"http.request.orig_uri",
	"http.request.orig_uri.path",
	"http.request.orig_uri.path.0",
	"http.request.orig_uri.path.dir",
	"http.request.orig_uri.path.file",
	"http.request.orig_uri.path.file_escaped",
	"http.request.orig_uri.query",
	"http.request.orig_uri.prefixed_query",
	"http.request.port",
	"http.request.proto",
	"http.request.proto_name",
	"http.request.local.host",
	"http.request.local.port",
	"http.request.local",
	"http.request.remote.host",
	"http.request.remote.port",
	"http.request.remote",
	"http.request.scheme",
	"http.request.tls.version",
	"http.request.tls.cipher_suite",
	"http.request.tls.resumed",
	"http.request.tls.proto",
	"http.request.tls.proto_mutual",
	"http.request.tls.server_name",
	"http.request.tls.ech",
	"http.request.tls.client.fingerprint",
	"http.request.tls.client.public_key",
	"http.request.tls.client.public_key_sha256",
	"http.request.tls.client.certificate_der_base64",
	"http.request.tls.client.issuer",
	"http.request.tls.client.serial",
	"http.request.tls.client.subject",
	"http.request.tls.client.san.dns_names",
	"http.request.tls.client.san.emails",
	"http.request.tls.client.san.ips",
	"http.request.tls.client.san.uris",
	"http.request.uri",
	"http.request.uri_escaped",
	"http.request.uri.path",
	"http.request.uri.path_escaped",
	"http.request.uri.path.0",
	"http.request.uri.path.dir",
	"http.request.uri.path.file",
	"http.request.uri.query",
	"http.request.uri.query_escaped",
	"http.request.uri.prefixed_query",
	"http.request.uri.query._perPage",
	"http.vars.client_ip",
	"http.vars.tenant",
	"http.regexp.acme.1",
	"http.auth.user.id",
	"http.shutting_down",
	"http.time_until_shutdown",
}

// TestReadAheadResolvesPlaceholdersAsTheClient: every placeholder of
// requestPlaceholders, resolved for the client's request before the
// gateway (into a variable, which the read ahead carries) and again by
// reverse_proxy for each backend call: the two are equal on every call,
// the reads ahead's as the pages' own. Over TLS with a client
// certificate, under a prefix stripped before the gateway (the original
// URI is not the one the gateway sees), with a variable, a regexp capture and a user id made
// before the gateway. Issue 47 point 3.
func TestReadAheadResolvesPlaceholdersAsTheClient(t *testing.T) {
	dir := t.TempDir()
	ca, caKey := newCA(t, dir)
	serverCert(t, dir, ca, caKey)
	alice := clientCert(t, ca, caKey, "a-alice")

	kb := newKeyedBackend(400, 1000)
	var mu sync.Mutex
	calls := 0
	differ := map[string][]string{} // placeholder -> "client's | the call's" values that differed
	set := map[string]bool{}        // placeholders with a value on some call
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		for i, p := range requestPlaceholders {
			want, got := r.Header.Get("X-Want-"+strconv.Itoa(i)), r.Header.Get("X-Got-"+strconv.Itoa(i))
			set[p] = set[p] || got != ""
			if want != got && len(differ[p]) < 3 {
				differ[p] = append(differ[p], want+" | "+got)
			}
		}
		mu.Unlock()
		r.Header.Set("X-Api-Key", "a-alice")
		kb.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	var vars, ups strings.Builder
	for i, p := range requestPlaceholders {
		fmt.Fprintf(&vars, "\t\t\t\twant_%d {%s}\n", i, p)
		fmt.Fprintf(&ups, "\t\t\t\theader_up X-Want-%d {http.vars.want_%d}\n\t\t\t\theader_up X-Got-%d {%s}\n", i, i, i, p)
	}
	c := gatewaytest.Start(t, fmt.Sprintf(`
https://localhost:0 {
	tls %[1]s/server.pem %[1]s/server.key {
		client_auth {
			mode require_and_verify
			trust_pool file %[1]s/ca.pem
		}
	}
	@acme path_regexp acme ^/(acme)/
	handle @acme {
		route { # in the order written: the variables see the stripped path
			uri strip_prefix /acme
			vars tenant {http.request.header.X-Tenant}
			vars http.auth.user.id {http.request.tls.client.subject}
			vars {
%[2]s			}
			helpdesk_gateway {
				readahead_ttl 30s
			}
			reverse_proxy {backend} {
%[3]s			}
		}
	}
}
`, dir, vars.String(), ups.String()), srv.URL)
	caddymodule.TrustWalks()
	base := strings.Replace(c.URL, "http://127.0.0.1", "https://localhost", 1) + "/acme"
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: pool, Certificates: []tls.Certificate{alice}, ServerName: "localhost",
	}}}

	bg0 := caddymodule.BackgroundCalls()
	h := http.Header{"X-Tenant": {"acme"}, "Cookie": {"session=s1"}, "Accept": {"application/json"}}
	var walked []int64
	cursor := ""
	for pages := 0; pages < 100; pages++ {
		caddymodule.SettleReadsAhead()
		u := base + "/calls?_perPage=10"
		if cursor != "" {
			u += "&_cursor=" + cursor
		}
		a := send(t, client, u, h)
		ids, owners := records(t, a)
		require.Equal(t, map[string]bool{"a-alice": true}, owners)
		walked = append(walked, ids...)
		if cursor = a.header.Get("next_page_cursor"); cursor == "" {
			break
		}
	}
	bg := caddymodule.BackgroundCalls() - bg0
	require.Equal(t, kb.a, walked, "the walk is exact")
	require.Positive(t, bg, "windows read ahead of the walker")
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d backend calls, %d of them read ahead", calls, bg)
	var empty []string
	for _, p := range requestPlaceholders {
		if !set[p] {
			empty = append(empty, p)
		}
	}
	assert.ElementsMatch(t, []string{"http.request.body", "http.request.body_base64", "http.request.tls.proto", "http.time_until_shutdown"}, empty,
		"the placeholders no call had a value for: a GET has no body, the client no ALPN, the server no shutdown")
	for _, p := range requestPlaceholders {
		t.Run(p, func(t *testing.T) {
			assert.Empty(t, differ[p], "{%s}: the client's value | a backend call's", p)
		})
	}
}
