package caddymodule_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule"
	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/redisstore/redistest"
)

// reachSite is one deployment's Caddyfile: a gateway sharing the store,
// then handlers (%[3]s), and top-level blocks before the site (%[1]s).
const reachSite = `%[1]s
http://:0 {
	route {
		helpdesk_gateway {
			readahead_ttl 30s
			%[2]s
		}
		%[3]s
	}
}
`

// acrossDeployments walks /calls through deployment a (siteA) for eight
// pages, its reads ahead settled, so that the store holds the windows of
// the pages after them; stops it; calls between (which makes the
// environment b's: another file, another backend behind the same name);
// then continues the walk's cursor through deployment b (siteB) to the
// end, as the same caller, through the same store and key. It returns b,
// walked: the records b served of the other origin are its foreign
// ones. Issue 47 point 2, issue 46 point 2: 426 of 900 and 250 of 250
// records came from the other deployment's backend.
func acrossDeployments(t *testing.T, siteA, siteB string, between func()) (a, b *originWalk) {
	t.Helper()
	ca := gatewaytest.Start(t, siteA, "")
	caddymodule.TrustWalks()
	a = &originWalk{base: ca.URL, origin: "a"}
	for range 8 {
		caddymodule.SettleReadsAhead()
		a.next(t)
	}
	caddymodule.SettleReadsAhead()
	fpA := caddymodule.Fingerprints()
	ca.Stop(t)
	between()

	cb := gatewaytest.Start(t, siteB, "")
	caddymodule.TrustWalks()
	b = &originWalk{base: cb.URL, origin: "b", cursor: a.cursor}
	for !b.done {
		b.next(t)
	}
	for server, fp := range caddymodule.Fingerprints() {
		t.Logf("a: %+v\nb: %+v", fpA[server], fp)
	}
	t.Logf("b continued a's walk: %d of %d records came from a's backend", b.foreign, len(b.ids))
	return a, b
}

// storeLine is the options of a gateway sharing store, with name as
// its deployment option when not "".
func storeLine(store *redistest.Server, name string) string {
	line := sharedStoreOptions(store, storeTimeout)
	if name != "" {
		line += "\n\t\t\tdeployment " + name
	}
	return line
}

// TestInvokedRouteIsInTheFingerprint: the gateway then invokes a named
// route, which proxies to another backend in each deployment. The walk
// a started, continued through b, gets b's records only.
func TestInvokedRouteIsInTheFingerprint(t *testing.T) {
	store := redistest.Start(t)
	a := originList{origin: "a", ids: multiples(2, 300)}
	b := originList{origin: "b", ids: multiples(3, 300)}
	srvA := httptest.NewServer(&originBackend{views: map[string]originList{"": a}})
	t.Cleanup(srvA.Close)
	srvB := httptest.NewServer(&originBackend{views: map[string]originList{"": b}})
	t.Cleanup(srvB.Close)
	site := func(backend string) string {
		return fmt.Sprintf(reachSite, "&(helpdesk) {\n\treverse_proxy "+strings.TrimPrefix(backend, "http://")+"\n}",
			storeLine(store, ""), "invoke helpdesk")
	}
	_, wb := acrossDeployments(t, site(srvA.URL), site(srvB.URL), func() {})
	assert.Zero(t, wb.foreign, "b served a's records")
	want, _ := nextAfter(b.ids, wb.ids[0]-1, len(b.ids))
	assert.Equal(t, want, wb.ids, "b's own records after the cursor")
}

// tenantBackend shows list a to the tenant its X-Tenant header names
// "a", and list b to any other.
func tenantBackend(a, b originList) http.Handler {
	ob := &originBackend{views: map[string]originList{"a": a, "b": b}}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		q.Set("view", "b")
		if r.Header.Get("X-Tenant") == "a" {
			q.Set("view", "a")
		}
		r.URL.RawQuery = q.Encode()
		ob.ServeHTTP(w, r)
	})
}

// TestFilePlaceholderMakesKeysPrivate: reverse_proxy names the tenant by
// a file (header_up X-Tenant {file.*}), which says a in one deployment
// and b in the other; the Caddyfile is the same. The gateway cannot
// vouch for a value read at request time, so its store entries stay its
// own (with a warning), and the walk continued through b gets b's
// records only. With the deployment option the operator names them.
func TestFilePlaceholderMakesKeysPrivate(t *testing.T) {
	a := originList{origin: "a", ids: multiples(2, 300)}
	b := originList{origin: "b", ids: multiples(3, 300)}
	srv := httptest.NewServer(tenantBackend(a, b))
	t.Cleanup(srv.Close)
	secret := filepath.Join(t.TempDir(), "tenant")
	for _, tc := range []struct{ name, nameA, nameB string }{
		{"unnamed", "", ""},
		{"named apart", "staging", "production"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := redistest.Start(t)
			require.NoError(t, os.WriteFile(secret, []byte("a\n"), 0o600))
			site := func(name string) string {
				return fmt.Sprintf(reachSite, "", storeLine(store, name),
					"reverse_proxy "+strings.TrimPrefix(srv.URL, "http://")+" {\n\t\t\theader_up X-Tenant {file."+secret+"}\n\t\t}")
			}
			_, wb := acrossDeployments(t, site(tc.nameA), site(tc.nameB), func() {
				require.NoError(t, os.WriteFile(secret, []byte("b\n"), 0o600))
			})
			assert.Zero(t, wb.foreign, "b served a's records")
		})
	}
}

// swapBackend is a backend whose records change with the environment:
// what the DNS name in the Caddyfile resolves to.
type swapBackend struct{ h atomic.Pointer[originBackend] }

func (s *swapBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.h.Load().ServeHTTP(w, r) }

// TestDNSNameUpstreamNeedsADeploymentName: two environments run the same
// Caddyfile, whose upstream is a DNS name (localhost), each resolving it
// to its own backend, with one store and one key (issue 46 point 2: a
// walk continued from one through the other got 250 of 250 records from
// the first one's backend). The test plays both environments one after
// the other on one machine: the name reaches a's backend, then b's.
// Unnamed, or named apart, the store's entries stay apart and b serves
// its own records; named alike, the operator said they are one
// deployment, and b continues from a's windows.
func TestDNSNameUpstreamNeedsADeploymentName(t *testing.T) {
	a := originList{origin: "a", ids: multiples(2, 300)}
	b := originList{origin: "b", ids: multiples(3, 300)}
	for _, tc := range []struct {
		name, nameA, nameB string
		shared             bool
	}{
		{"unnamed", "", "", false},
		{"named apart", "staging", "production", false},
		{"named alike", "production", "production", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := redistest.Start(t)
			obA, obB := &originBackend{views: map[string]originList{"": a}}, &originBackend{views: map[string]originList{"": b}}
			sw := &swapBackend{}
			sw.h.Store(obA)
			srv := httptest.NewServer(sw)
			t.Cleanup(srv.Close)
			upstream := strings.Replace(strings.TrimPrefix(srv.URL, "http://"), "127.0.0.1", "localhost", 1)
			site := func(name string) string {
				return fmt.Sprintf(reachSite, "", storeLine(store, name), "reverse_proxy "+upstream)
			}
			_, wb := acrossDeployments(t, site(tc.nameA), site(tc.nameB), func() { sw.h.Store(obB) })
			if tc.shared {
				assert.Positive(t, wb.foreign, "one deployment, as the operator said: b continued from a's windows")
				return
			}
			assert.Zero(t, wb.foreign, "b served a's records")
			want, _ := nextAfter(b.ids, wb.ids[0]-1, len(b.ids))
			assert.Equal(t, want, wb.ids, "b's own records after the cursor")
		})
	}
}
