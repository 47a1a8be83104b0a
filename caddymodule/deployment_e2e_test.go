package caddymodule_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule"
	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/redisstore/redistest"
)

// originBackend is a backend whose records name where they came from:
// by the value of the query's view parameter, a list of ids and the
// origin each of its records carries. It pages by _page and _perPage
// from 1, whatever else the query holds, and counts its calls.
type originBackend struct {
	views map[string]originList

	mu    sync.Mutex
	calls int
}

type originList struct {
	origin string
	ids    []int64
}

// multiples returns n ids, each a multiple of step.
func multiples(step, n int) []int64 {
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(step * (i + 1))
	}
	return ids
}

func (ob *originBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	l, ok := ob.views[q.Get("view")]
	if !ok {
		http.Error(w, `{"message":"no such view"}`, http.StatusBadRequest)
		return
	}
	page, _ := strconv.Atoi(q.Get("_page"))
	size, _ := strconv.Atoi(q.Get("_perPage"))
	if page < 1 || size < 1 {
		page, size = 1, 20
	}
	from := min((page-1)*size, len(l.ids))
	to := min(from+size, len(l.ids))
	var sb strings.Builder
	sb.WriteByte('[')
	for i := from; i < to; i++ {
		if i > from {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"id":%d,"origin":%q}`, l.ids[i], l.origin)
	}
	sb.WriteByte(']')
	ob.mu.Lock()
	ob.calls++
	ob.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(sb.String()))
}

// count returns the backend's calls so far, the reads ahead the
// gateways started among them.
func (ob *originBackend) count() int {
	caddymodule.SettleReadsAhead()
	ob.mu.Lock()
	defer ob.mu.Unlock()
	return ob.calls
}

// originWalk walks /calls of one deployment by cursor, 10 a page, as
// the one caller both deployments see: the same Host, API key and
// client address.
type originWalk struct {
	base, origin string
	cursor       string
	ends         []int64 // the last id of each page but the last
	ids          []int64
	foreign      int // records of another origin
	pages        int
	done         bool
}

// page asks for the page after cursor ("" for the first) and returns
// its ids and how many of its records came from another origin.
func (w *originWalk) page(t *testing.T, cursor string) (ids []int64, foreign int, next string) {
	t.Helper()
	u := w.base + "/calls?_perPage=10"
	if cursor != "" {
		u += "&_cursor=" + cursor
	}
	req, err := http.NewRequest(http.MethodGet, u, nil)
	require.NoError(t, err)
	req.Host = "helpdesk.example" // as through a layer-4 balancer in front of both
	req.Header.Set("X-Api-Key", "shared-key")
	resp, err := gatewaytest.Client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	a := answer{status: resp.StatusCode, header: resp.Header, body: body}
	require.Equal(t, http.StatusOK, a.status, string(a.body))
	var recs []struct {
		ID     int64  `json:"id"`
		Origin string `json:"origin"`
	}
	require.NoError(t, json.Unmarshal(a.body, &recs), string(a.body))
	for _, r := range recs {
		ids = append(ids, r.ID)
		if r.Origin != w.origin {
			foreign++
		}
	}
	return ids, foreign, a.header.Get("next_page_cursor")
}

func (w *originWalk) next(t *testing.T) {
	t.Helper()
	ids, foreign, next := w.page(t, w.cursor)
	w.ids = append(w.ids, ids...)
	w.foreign += foreign
	w.pages++
	w.cursor, w.done = next, next == ""
	if !w.done && len(ids) > 0 {
		w.ends = append(w.ends, ids[len(ids)-1])
	}
	require.Less(t, w.pages, 1000)
}

// deploymentSite is one deployment: a gateway on its own loopback port,
// for any Host, sharing the store (if not nil), in front of its backend.
func deploymentSite(t *testing.T, store *redistest.Server, options, backend string) (site, base string) {
	t.Helper()
	addr := gatewaytest.FreeLoopbackAddr(t)
	_, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	if store != nil {
		options += "\n\t\t" + sharedStoreOptions(store, storeTimeout)
	}
	site = fmt.Sprintf("http://:%s {\n\thelpdesk_gateway {\n\t\treadahead_ttl 30s\n\t\t%s\n\t}\n\treverse_proxy %s\n}\n",
		port, options, backend)
	return site, "http://" + addr
}

// TestDeploymentsShareNoStoreEntries: two deployments share one
// redis-server and one readahead_store_key, and their clients send the
// same Host and API key from the same address. Walked in lock step, and
// asked by cursors built by hand at the other deployment's page ends,
// each serves only its own backend's records. The two differ in their
// backend, or in backend_sort over one backend; without a store, two
// sites of one Caddy are apart as well. Issue 39: before the
// deployment's fingerprint was in the store's keys, these walks were
// served the other backend's records with a 200.
func TestDeploymentsShareNoStoreEntries(t *testing.T) {
	a := originList{origin: "a", ids: multiples(2, 300)}
	b := originList{origin: "b", ids: multiples(3, 300)}
	for _, tc := range []struct {
		name               string
		backendA, backendB *originBackend
		optionsA, optionsB string
		noStore            bool
	}{
		{name: "two backends",
			backendA: &originBackend{views: map[string]originList{"": a}},
			backendB: &originBackend{views: map[string]originList{"": b}}},
		{name: "one backend, another backend_sort",
			backendA: &originBackend{views: map[string]originList{"": a, "b": b}},
			optionsB: "backend_sort _sortField=id&_sortDir=ASC&view=b"},
		{name: "two backends, no store",
			backendA: &originBackend{views: map[string]originList{"": a}},
			backendB: &originBackend{views: map[string]originList{"": b}},
			noStore:  true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var store *redistest.Server
			if !tc.noStore {
				store = redistest.Start(t)
			}
			srvA := httptest.NewServer(tc.backendA)
			t.Cleanup(srvA.Close)
			srvB := srvA
			if tc.backendB != nil {
				srvB = httptest.NewServer(tc.backendB)
				t.Cleanup(srvB.Close)
			}
			siteA, baseA := deploymentSite(t, store, tc.optionsA, strings.TrimPrefix(srvA.URL, "http://"))
			siteB, baseB := deploymentSite(t, store, tc.optionsB, strings.TrimPrefix(srvB.URL, "http://"))
			// Another instance of a: the same config on another port.
			siteA2, baseA2 := deploymentSite(t, store, tc.optionsA, strings.TrimPrefix(srvA.URL, "http://"))
			gatewaytest.Start(t, siteA+siteB+siteA2, "")

			wa := &originWalk{base: baseA, origin: "a"}
			wb := &originWalk{base: baseB, origin: "b"}
			for !wa.done || !wb.done {
				for _, w := range []*originWalk{wa, wb} {
					if !w.done {
						w.next(t)
					}
				}
			}
			t.Logf("lock-step walks: %d of %d records on a and %d of %d on b came from the other backend",
				wa.foreign, len(wa.ids), wb.foreign, len(wb.ids))
			assert.Zero(t, wa.foreign, "a's walk served b's records")
			assert.Zero(t, wb.foreign, "b's walk served a's records")
			assert.Equal(t, a.ids, wa.ids, "a's walk is exact")
			assert.Equal(t, b.ids, wb.ids, "b's walk is exact")

			// Cursors built by hand at the other deployment's page ends,
			// while its windows are live.
			var foreign, served int
			for _, probe := range []struct {
				w    *originWalk
				ends []int64
			}{{wb, wa.ends[:15]}, {wa, wb.ends[:15]}} {
				for _, end := range probe.ends {
					ids, n, _ := probe.w.page(t, cursorFor(strconv.FormatInt(end, 10)))
					foreign += n
					served += len(ids)
				}
			}
			t.Logf("hand-built cursors: %d of %d records came from the other backend", foreign, served)
			assert.Zero(t, foreign, "a cursor at the other deployment's page end is served from the other backend")
			assert.Positive(t, served)
			if store == nil {
				return
			}

			// Another instance of a continues a's walk from the windows a
			// kept in the store: one deployment shares.
			a2 := &originWalk{base: baseA2, origin: "a"}
			before := tc.backendA.count()
			for i := 0; i < 15; i += 3 { // not one after another: each probe is a cold cursor for a2
				end := wa.ends[i]
				ids, n, _ := a2.page(t, cursorFor(strconv.FormatInt(end, 10)))
				want, _ := nextAfter(a.ids, end, 10)
				assert.Equal(t, want, ids)
				assert.Zero(t, n)
			}
			calls := tc.backendA.count() - before
			t.Logf("another instance of a: 5 cursors at a's page ends cost %d backend calls", calls)
			assert.Less(t, calls, 2, "pages of a's walk cut from a's shared windows")
		})
	}
}

// TestHandlerTrustedProxiesSeparateCallers: reverse_proxy's own
// trusted_proxies (not the server's) pass the client's X-Forwarded-Host
// on to the backend, which picks the tenant by it: two clients that
// differ only there are two callers. Issue 39 point 3: a walker sending
// X-Forwarded-Host b-tenant.example was served a window read for
// a-tenant.example.
func TestHandlerTrustedProxiesSeparateCallers(t *testing.T) {
	kb := newKeyedBackend(300, 1000)
	srv := httptest.NewServer(keyedBy(kb, func(r *http.Request) string {
		host, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Host"), ".")
		return host
	}))
	t.Cleanup(srv.Close)
	c := gatewaytest.Start(t, "http://:0 {\n\thelpdesk_gateway {\n\t\treadahead_ttl 30s\n\t}\n\treverse_proxy {backend} {\n\t\ttrusted_proxies 127.0.0.0/8\n\t}\n}\n", srv.URL)
	caddymodule.TrustWalks() // a lone instance after its first walk: what its windows serve, and to whom
	h := func(host string) http.Header {
		return http.Header{"X-Forwarded-Host": {host}, "X-Forwarded-For": {"198.51.100.9"}}
	}
	checkSeparate(t, kb, c.URL, withHeaders(gatewaytest.Client, h("a-tenant.example")), withHeaders(gatewaytest.Client, h("b-tenant.example")),
		"a-tenant", "b-tenant")
}
