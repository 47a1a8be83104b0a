package caddymodule_test

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/redisstore/redistest"
)

// The caller boundary of issue 30 across instances (issue 33, point 2):
// with readahead_store, walks and windows live in Redis under a keyed
// hash of the list identity, which holds the caller, so every caller
// fact that keeps two callers' windows apart in one instance must keep
// them apart in the store, whichever instance reads or serves, and a
// fact the backend never sees must not split one caller's walk.

// sharedCaller is one client of TestSharedStoreCallerFacts: the headers
// it sends, and the facts of its connection.
type sharedCaller struct {
	headers http.Header
	from    string // the source address it dials from; "" for the default
	cert    string // the common name of its TLS client certificate, with tlsSites
}

// TestSharedStoreCallerFacts runs each caller fact of issue 30 (and the
// identity headers of an authenticating proxy) through three gateway
// instances sharing one redis-server: two callers who differ only in
// that fact, to a backend that shows each the records of the key it
// takes it for. Behind Caddy's round_robin (a layer-7 balancer in front,
// trusting none or all of loopback as its row says), or, where a fact
// cannot cross a layer-7 hop (a client certificate the instances must
// see; a Connection-named header the balancer drops before the gateway
// could be fooled by it), with the client spreading its requests over the
// instances round robin, as a layer-4 or DNS balancer does.
//
// For two callers the backend takes as two, the first walks three pages
// and the second sends a cursor built by hand for the id ending the
// first's last page, inside the first's live shared window: the backend
// is asked, with the second's facts, and the page is the second's own
// records, while the first's own next page is still cut from the window
// (checkSeparate). For two the backend takes as one (a header named in
// Connection; per-request headers), the second's page is cut from the
// first's shared window, no backend call. Then both walk the whole list,
// interleaved, each getting exactly its own records, mostly from shared
// windows. The store's keys hold none of the facts, and there is one
// list identity per caller the backend tells apart.
func TestSharedStoreCallerFacts(t *testing.T) {
	dir := t.TempDir()
	ca, caKey := newCA(t, dir)
	serverCert(t, dir, ca, caKey)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	certs := map[string]tls.Certificate{}
	fingerprints := []string{}
	for _, cn := range []string{"a-alice", "b-bob"} {
		certs[cn] = clientCert(t, ca, caKey, cn)
		sum := sha256.Sum256(certs[cn].Certificate[0])
		fingerprints = append(fingerprints, hex.EncodeToString(sum[:]))
	}

	header := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Add(kv[i], kv[i+1])
		}
		return h
	}
	firstForwarded := func(r *http.Request) string {
		first, _, _ := strings.Cut(r.Header.Get("X-Forwarded-For"), ",")
		return map[string]string{"127.0.0.2": "a-127.0.0.2", "127.0.0.3": "b-127.0.0.3"}[strings.TrimSpace(first)]
	}
	tenantOrKey := func(r *http.Request) string {
		if tenant := r.Header.Get("X-Tenant"); tenant != "" {
			return tenant
		}
		return r.Header.Get("X-Api-Key")
	}
	const trusted = "servers {\n\t\ttrusted_proxies static 127.0.0.0/8\n\t}"

	type fact struct {
		name string
		// layer4: no balancer in front, the client spreads its requests;
		// tlsSites: the instances require a client certificate.
		layer4, tlsSites bool
		global           string // global options, such as trusted
		options, proxy   string // the gateway's options and reverse_proxy's lines at each instance
		key              func(r *http.Request) string
		a, b             sharedCaller
		keyA, keyB       string // the backend's keys for a and b: one when the backend takes them as one
		secrets          []string
	}
	facts := []fact{
		{
			name: "client certificate", layer4: true, tlsSites: true,
			proxy: "header_up X-Client-Subject {http.request.tls.client.subject}",
			key:   func(r *http.Request) string { return strings.TrimPrefix(r.Header.Get("X-Client-Subject"), "CN=") },
			a:     sharedCaller{headers: header("Accept", "application/json"), cert: "a-alice"},
			b:     sharedCaller{headers: header("Accept", "application/json"), cert: "b-bob"},
			keyA:  "a-alice", keyB: "b-bob", secrets: append([]string{"alice", "bob"}, fingerprints...),
		},
		{
			name: "client address, through a trusted balancer", global: trusted, key: firstForwarded,
			a:    sharedCaller{headers: header("X-Api-Key", "shared"), from: "127.0.0.2"},
			b:    sharedCaller{headers: header("X-Api-Key", "shared"), from: "127.0.0.3"},
			keyA: "a-127.0.0.2", keyB: "b-127.0.0.3", secrets: []string{"shared", "127.0.0"},
		},
		{
			name: "client address, direct", layer4: true, key: firstForwarded,
			a:    sharedCaller{headers: header("X-Api-Key", "shared"), from: "127.0.0.2"},
			b:    sharedCaller{headers: header("X-Api-Key", "shared"), from: "127.0.0.3"},
			keyA: "a-127.0.0.2", keyB: "b-127.0.0.3", secrets: []string{"shared", "127.0.0"},
		},
		{
			name: "forwarded host", global: trusted,
			key: func(r *http.Request) string {
				host, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Host"), ".")
				return host
			},
			a:    sharedCaller{headers: header("X-Forwarded-Host", "a-tenant.example", "X-Forwarded-For", "198.51.100.9")},
			b:    sharedCaller{headers: header("X-Forwarded-Host", "b-tenant.example", "X-Forwarded-For", "198.51.100.9")},
			keyA: "a-tenant", keyB: "b-tenant", secrets: []string{"tenant", "example", "198.51.100.9"},
		},
		{
			// a sends b's exact headers, X-Tenant named in Connection:
			// the backend never sees it, and gives a its untenanted view.
			name: "Connection-named header, another caller", layer4: true, key: tenantOrKey,
			a:    sharedCaller{headers: header("X-Api-Key", "a-conn", "X-Tenant", "b-conn", "Connection", "X-Tenant")},
			b:    sharedCaller{headers: header("X-Api-Key", "a-conn", "X-Tenant", "b-conn")},
			keyA: "a-conn", keyB: "b-conn", secrets: []string{"conn", "Tenant"},
		},
		{
			// b adds a header the backend never sees: still a's walk.
			name: "Connection-named header, the same caller", layer4: true, key: tenantOrKey,
			a:    sharedCaller{headers: header("X-Api-Key", "a-conn")},
			b:    sharedCaller{headers: header("X-Api-Key", "a-conn", "X-Tenant", "b-conn", "Connection", "X-Tenant")},
			keyA: "a-conn", keyB: "a-conn", secrets: []string{"conn", "Tenant"},
		},
		{
			name: "header framing",
			key: func(r *http.Request) string {
				key := r.Header.Get("X-S")
				if r.Header.Get("X-T") != "" {
					key = "b" + key[1:]
				}
				return key
			},
			a:    sharedCaller{headers: http.Header{"X-S": {"a-s", "X-T", "q"}}},
			b:    sharedCaller{headers: http.Header{"X-S": {"a-s"}, "X-T": {"q"}}},
			keyA: "a-s", keyB: "b-s", secrets: []string{"X-S", "X-T"},
		},
		{
			name:    "caller_key",
			options: "caller_key {header.X-Real-Ip}", proxy: "header_up X-Api-Key {header.X-Real-Ip}",
			a:    sharedCaller{headers: header("X-Real-Ip", "a-edge")},
			b:    sharedCaller{headers: header("X-Real-Ip", "b-edge")},
			keyA: "a-edge", keyB: "b-edge", secrets: []string{"edge"},
		},
		{
			name: "per-request headers, the same caller",
			a:    sharedCaller{headers: header("X-Api-Key", "a-traced")},
			b: sharedCaller{headers: header("X-Api-Key", "a-traced", "X-Request-Id", "probe-1", "Via", "1.1 edge",
				"Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")},
			keyA: "a-traced", keyB: "a-traced", secrets: []string{"traced", "probe-1"},
		},
	}
	for _, name := range []string{"X-Forwarded-User", "X-Forwarded-Email", "X-Forwarded-Access-Token", "X-Forwarded-Client-Cert", "X-Forwarded-Groups"} {
		facts = append(facts, fact{
			name: name + " of an authenticating proxy",
			key:  func(r *http.Request) string { return r.Header.Get(name) },
			a:    sharedCaller{headers: header(name, "a-carol", "X-Forwarded-Proto", "https")},
			b:    sharedCaller{headers: header(name, "b-dave", "X-Forwarded-Proto", "https")},
			keyA: "a-carol", keyB: "b-dave", secrets: []string{"carol", "dave"},
		})
	}

	for _, tc := range facts {
		t.Run(tc.name, func(t *testing.T) {
			kb := newKeyedBackend(1000, 1000)
			var backend http.Handler = kb
			if tc.key != nil {
				backend = keyedBy(kb, tc.key)
			}
			srv := httptest.NewServer(backend)
			t.Cleanup(srv.Close)
			store := redistest.Start(t)
			caddyfile, instances := callerSites(t, !tc.layer4, tc.tlsSites, dir,
				sharedStoreOptions(store, storeTimeout, "readahead_ttl 30s", tc.options), tc.proxy)
			c := gatewaytest.Start(t, caddyfile, srv.URL, gatewaytest.Options{Global: tc.global})
			base := "http://localhost" // with layer4, the callers' transports pick the instance
			if tc.tlsSites {
				base = "https://localhost"
			}
			if !tc.layer4 {
				for _, u := range c.URLs {
					if !slices.Contains(instances, strings.TrimPrefix(u, "http://")) {
						base = u // the balancer in front
					}
				}
				require.NotEmpty(t, base)
			}

			// Each caller's client. With layer4, its transport sends each
			// request to the next instance in turn (one turn for both
			// callers, as one balancer keeps), under the one name all of
			// them are reached by: the Host, and the name in the
			// certificate.
			var turn atomic.Int64
			caller := func(sc sharedCaller) callerFn {
				next := gatewaytest.Client.Transport
				if sc.from != "" || sc.cert != "" {
					tr := &http.Transport{}
					if sc.from != "" {
						d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(sc.from)}, Timeout: 5 * time.Second}
						tr.DialContext = d.DialContext
					}
					if sc.cert != "" {
						tr.TLSClientConfig = &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{certs[sc.cert]}, ServerName: "localhost"}
					}
					t.Cleanup(tr.CloseIdleConnections)
					next = tr
				}
				if tc.layer4 {
					next = roundRobin{instances: instances, turn: &turn, next: next}
				}
				return withHeaders(&http.Client{Timeout: 10 * time.Second, Transport: next}, sc.headers)
			}
			a, b := caller(tc.a), caller(tc.b)
			if tc.keyA != tc.keyB {
				checkSeparate(t, kb, base, a, b, tc.keyA, tc.keyB)
			} else {
				checkShared(t, kb, base, a, b, tc.keyA)
			}

			// Whole walks, interleaved, from the first page.
			callsA, _ := kb.cost(tc.keyA)
			callsB, _ := kb.cost(tc.keyB)
			wa, wb := &callerWalk{call: a}, &callerWalk{call: b}
			walkInterleaved(t, base, wa, wb)
			for _, w := range []struct {
				walk *callerWalk
				key  string
			}{{wa, tc.keyA}, {wb, tc.keyB}} {
				assert.Equal(t, kb.view(w.key), w.walk.ids, "%s: exactly its own records", w.key)
				assert.Equal(t, map[string]bool{w.key: true}, w.walk.owners, "%s: every record read with its own facts", w.key)
			}
			after, _ := kb.cost(tc.keyA)
			calls := after - callsA
			if tc.keyA != tc.keyB {
				after, _ = kb.cost(tc.keyB)
				calls += after - callsB
			}
			pages := wa.pages + wb.pages
			t.Logf("%d pages, %d backend calls", pages, calls)
			assert.Less(t, float64(calls)/float64(pages), 0.25, "backend calls per page: the walks are read from shared windows")

			lists := storeLists(t, store, append(tc.secrets, tc.keyA, tc.keyB)...)
			want := 2
			if tc.keyA == tc.keyB {
				want = 1
			}
			assert.Len(t, lists, want, "one list identity in the store per caller the backend tells apart")
		})
	}
}

// callerSites returns a Caddyfile of three gateway instances with
// options, their reverse_proxy to {backend} with the lines proxy, each on
// a loopback port of its own (with tlsSites, as https://localhost
// requiring a client certificate of the CA in dir, whose server
// certificate serverCert wrote), with front a balancer on :0 in front of
// them, round robin, as scaleOutSites writes it; and the instances'
// loopback addresses. An http:// site is for any Host, so that clients
// reach every instance by one name, as through a layer-4 balancer.
func callerSites(t *testing.T, front, tlsSites bool, dir, options, proxy string) (string, []string) {
	t.Helper()
	var sb strings.Builder
	var instances []string
	for range 3 {
		addr := gatewaytest.FreeLoopbackAddr(t)
		instances = append(instances, addr)
		_, port, err := net.SplitHostPort(addr)
		require.NoError(t, err)
		site, tlsLines := "http://:"+port, ""
		if tlsSites {
			site = "https://localhost:" + port
			tlsLines = fmt.Sprintf("tls %[1]s/server.pem %[1]s/server.key {\n\t\tclient_auth {\n\t\t\tmode require_and_verify\n\t\t\ttrust_pool file %[1]s/ca.pem\n\t\t}\n\t}", dir)
		}
		fmt.Fprintf(&sb, "%s {\n\t%s\n\thelpdesk_gateway {\n\t\t%s\n\t}\n\treverse_proxy {backend} {\n\t\theader_up X-Gateway-Instance {http.request.local.port}\n\t\t%s\n\t}\n}\n",
			site, tlsLines, options, proxy)
	}
	if front {
		fmt.Fprintf(&sb, "http://:0 {\n\treverse_proxy %s {\n\t\tlb_policy round_robin\n\t}\n}\n", strings.Join(instances, " "))
	}
	return sb.String(), instances
}

// checkShared is checkSeparate for two callers the backend takes as one
// (key): a walks three pages, and b's cursor built by hand for the id
// that ends a's last page is cut from a's shared window, on another
// instance, with no backend call: the saving is not lost.
func checkShared(t *testing.T, kb *keyedBackend, base string, a, b callerFn, key string) {
	t.Helper()
	w := &callerWalk{call: a}
	for range 3 {
		w.next(t, base)
	}
	require.Equal(t, kb.view(key)[:30], w.ids)
	require.Equal(t, map[string]bool{key: true}, w.owners)

	last := w.ids[len(w.ids)-1]
	before, _ := kb.cost(key)
	probe := &callerWalk{call: b, cursor: cursorFor(fmt.Sprint(last))}
	probe.next(t, base)
	after, _ := kb.cost(key)
	want, _ := nextAfter(kb.view(key), last, 10)
	assert.Equal(t, want, probe.ids, "the records after %d", last)
	assert.Equal(t, map[string]bool{key: true}, probe.owners)
	assert.Equal(t, before, after, "the same caller to the backend: cut from the shared window")
}

// roundRobin is a layer-4 balancer in the client: it sends each request
// to the next of instances (host:port), one turn for every client that
// shares it, keeping the request's Host (and, over TLS, its server name).
type roundRobin struct {
	instances []string
	turn      *atomic.Int64
	next      http.RoundTripper
}

func (rr roundRobin) RoundTrip(r *http.Request) (*http.Response, error) {
	i := rr.turn.Add(1) - 1
	out := r.Clone(r.Context())
	out.Host = r.URL.Host
	out.URL.Host = rr.instances[i%int64(len(rr.instances))]
	return rr.next.RoundTrip(out)
}

// callerWalk walks /calls by cursor, 10 records a page, as one caller.
type callerWalk struct {
	call   callerFn
	cursor string
	ids    []int64
	owners map[string]bool
	pages  int
	done   bool
}

// next asks for the walk's next page and takes it in.
func (w *callerWalk) next(t *testing.T, base string) {
	t.Helper()
	u := base + "/calls?_perPage=10"
	if w.cursor != "" {
		u += "&_cursor=" + w.cursor
	}
	page := w.call(t, u)
	ids, owners := records(t, page)
	if w.owners == nil {
		w.owners = map[string]bool{}
	}
	for o := range owners {
		w.owners[o] = true
	}
	w.ids = append(w.ids, ids...)
	w.pages++
	w.cursor = page.header.Get("next_page_cursor")
	w.done = w.cursor == ""
	require.Less(t, w.pages, 1000)
}

// walkInterleaved walks each walk to its end, page by page in turn.
func walkInterleaved(t *testing.T, base string, walks ...*callerWalk) {
	t.Helper()
	for left := true; left; {
		left = false
		for _, w := range walks {
			if !w.done {
				w.next(t, base)
				left = true
			}
		}
	}
}

// storeKey is the shape of every key the store writes: the prefix, the
// hash of the list identity (hash-tagged), and a chain entry's record id,
// a window's random name and its pages, a cut's page on its way, or the
// list's fence.
var storeKey = regexp.MustCompile(`^hdgw:\{([0-9a-f]{32})\}:(c:[0-9]+|w:[0-9a-f]+(:p:[0-9]+)?|q:[0-9a-f]+-[0-9a-z]+|[ad]:[0-9]+|f)$`)

// storeLists scans every key of store: each must have storeKey's shape
// and hold none of secrets (credentials, and the facts that make a
// caller). It returns the list identities the keys are of.
func storeLists(t *testing.T, store *redistest.Server, secrets ...string) map[string]bool {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: store.Addr()})
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	lists := map[string]bool{}
	iter := rdb.Scan(ctx, 0, "*", 1000).Iterator()
	for iter.Next(ctx) {
		key := iter.Val()
		if strings.HasPrefix(key, "hdgw:{instances}:") {
			continue // the registry of instances (redisstore/peers.go): no list's
		}
		m := storeKey.FindStringSubmatch(key)
		if !assert.NotNil(t, m, "a key of the store's shape: %q", key) {
			continue
		}
		lists[m[1]] = true
		for _, s := range secrets {
			assert.NotContains(t, strings.ToLower(key), strings.ToLower(s), "a key holds no caller fact")
		}
	}
	require.NoError(t, iter.Err())
	require.NotEmpty(t, lists, "the walks are in the store")
	return lists
}
