package caddymodule_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
	"github.com/helpdesk-gateway/gateway/redisstore/redistest"
)

// sharingReport is the admin endpoint's readahead.sharing and store.
type sharingReport struct {
	Gateways []struct {
		Readahead struct {
			Store *struct {
				Up bool
			}
			Sharing *struct {
				Instance      string
				KeyID         string   `json:"key_id"`
				Peers         int      `json:"peers"`
				PeerInstances []string `json:"peer_instances"`
				NotSharing    []struct {
					Instance, Reason string
				} `json:"not_sharing"`
			}
		}
	}
}

// startLogged runs caddyfile with the gateway's logs from level on
// written as JSON to a file, and the admin endpoint; logs reads them.
func startLogged(t *testing.T, caddyfile, backendURL, level string) (*gatewaytest.Caddy, func() []map[string]any) {
	t.Helper()
	logFile := filepath.Join(t.TempDir(), "gateway.log")
	global := fmt.Sprintf("log gateway {\n\t\toutput file %s\n\t\tformat json\n\t\tlevel %s\n\t\tinclude http.handlers.helpdesk_gateway\n\t}", logFile, level)
	c := gatewaytest.Start(t, caddyfile, backendURL, gatewaytest.Options{Admin: true, Global: global})
	return c, func() []map[string]any {
		file, err := os.Open(logFile)
		if os.IsNotExist(err) {
			return nil
		}
		require.NoError(t, err)
		defer file.Close()
		var out []map[string]any
		sc := bufio.NewScanner(file)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var e map[string]any
			require.NoError(t, json.Unmarshal(sc.Bytes(), &e), sc.Text())
			out = append(out, e)
		}
		return out
	}
}

// eventually polls cond until it holds, within a deadline no loaded
// machine outlasts (the heartbeats come every second at first): what it
// waits for is a state, never a time.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 60s: %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sharingOf reads the admin endpoint's report.
func sharingOf(t *testing.T, c *gatewaytest.Caddy) sharingReport {
	t.Helper()
	var r sharingReport
	require.NoError(t, json.Unmarshal([]byte(adminGet(t, c.Admin, "/helpdesk/endpoints")), &r))
	return r
}

// scaleOutKeys is scaleOutSites with a readahead_store_key of its own
// for each instance (keys[i]), the rest of the options the same.
func scaleOutKeys(t *testing.T, store *redistest.Server, keys []string) string {
	t.Helper()
	var sb strings.Builder
	upstreams := make([]string, len(keys))
	for i, key := range keys {
		upstreams[i] = gatewaytest.FreeLoopbackAddr(t)
		fmt.Fprintf(&sb, "http://%s {\n\thelpdesk_gateway {\n\t\treadahead_store %s\n\t\treadahead_store_key %s\n\t\t%s\n\t}\n\treverse_proxy {backend} {\n\t\theader_up X-Gateway-Instance {http.request.local.port}\n\t}\n}\n",
			upstreams[i], store.URL(), key, storeTimeout)
	}
	fmt.Fprintf(&sb, "http://:0 {\n\treverse_proxy %s {\n\t\tlb_policy round_robin\n\t}\n}\n", strings.Join(upstreams, " "))
	return sb.String()
}

// TestSharedStoreShowsWhoShares: three instances behind round_robin on
// one redis-server. With one key, each shows the same key id and the
// other two as its peers, and the peers metric says so. With a key each
// (as `openssl rand -hex 32` run on each host gives), nothing is shared:
// the key ids differ, each shows no peer and the two others apart for
// another key, the peers metric is 0, and each logs a warning naming
// the cause.
func TestSharedStoreShowsWhoShares(t *testing.T) {
	backend := reference.New(reference.Config{Seed: 46, Records: 300})
	srv := httptest.NewServer(backend)
	t.Cleanup(srv.Close)
	const same = "0123456789abcdef-e2e-secret"
	for _, tc := range []struct {
		name  string
		keys  []string
		peers int
	}{
		{"one key", []string{same, same, same}, 2},
		{"a key each", []string{same + "-a", same + "-b", same + "-c"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := redistest.Start(t)
			c, logs := startLogged(t, scaleOutKeys(t, store, tc.keys), srv.URL, "WARN")
			ids, _ := walkSharedPages(t, c.URL, "/calls", 25, "client-1", "")
			require.Equal(t, strIDs(backend.IDs("calls")), ids, "the walk is exact either way")

			// Every instance heard from the two others through the store.
			var r sharingReport
			eventually(t, "each instance sees the two others", func() bool {
				r = sharingOf(t, c)
				for _, g := range r.Gateways {
					sh := g.Readahead.Sharing
					if sh == nil || sh.Peers+len(sh.NotSharing) < 2 {
						return false
					}
				}
				return len(r.Gateways) == 3
			})
			keyIDs := map[string]bool{}
			for i, g := range r.Gateways {
				sh := g.Readahead.Sharing
				t.Logf("gateway %d: %+v", i, *sh)
				assert.NotEmpty(t, sh.Instance)
				assert.NotContains(t, sh.KeyID, "secret", "a digest, never the key")
				keyIDs[sh.KeyID] = true
				assert.Equal(t, tc.peers, sh.Peers)
				assert.Len(t, sh.PeerInstances, tc.peers)
				assert.NotContains(t, sh.PeerInstances, sh.Instance)
				for _, a := range sh.NotSharing {
					assert.Equal(t, "key", a.Reason, a.Instance)
				}
			}
			m := scrapedSeries(adminGet(t, c.Admin, "/metrics"))
			assert.Equal(t, "3", m["helpdesk_gateway_readahead_store_configured"])
			assert.Equal(t, "3", m["helpdesk_gateway_readahead_store_up"])
			assert.Equal(t, fmt.Sprint(tc.peers), m["helpdesk_gateway_readahead_store_peers"])
			if tc.peers > 0 {
				assert.Len(t, keyIDs, 1, "one key, one key id")
				for _, e := range logs() {
					assert.NotContains(t, e["msg"], "shares its walks with no other instance")
				}
				return
			}
			assert.Len(t, keyIDs, 3, "a key each, a key id each")
			warned := 0
			eventually(t, "each instance warns", func() bool {
				warned = 0
				for _, e := range logs() {
					if msg, _ := e["msg"].(string); strings.Contains(msg, "shares its walks with no other instance") {
						assert.Contains(t, msg, "another readahead_store_key")
						assert.NotContains(t, fmt.Sprint(e), same, "the key is never logged")
						warned++
					}
				}
				return warned == 3
			})
		})
	}
}

// TestSharedStoreCheckedAtLoad: a store that cannot serve is named, with
// its cause, in an error logged as the config starts running, not at the
// first page; the config serves all the same, each page from the
// backend.
func TestSharedStoreCheckedAtLoad(t *testing.T) {
	backend := reference.New(reference.Config{Seed: 47, Records: 120})
	srv := httptest.NewServer(backend)
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		name  string
		store func(t *testing.T) string // readahead_store
		cause string
		want  string // in the logged error
	}{
		{"dead store", func(t *testing.T) string { return "redis://" + gatewaytest.FreeLoopbackAddr(t) + "/0" }, "unreachable", "connection refused"},
		{"wrong password", func(t *testing.T) string {
			s := redistest.Start(t) // it must answer its PING first
			_, err := s.Do("CONFIG", "SET", "requirepass", "right-password")
			require.NoError(t, err)
			return "redis://:wrong-password@" + s.Addr() + "/0"
		}, "auth", ""},
		{"a replica", func(t *testing.T) string {
			m := redistest.Start(t)
			host, port, _ := strings.Cut(m.Addr(), ":")
			return redistest.Start(t, "--replicaof", host, port).URL()
		}, "replica", "not a master"},
		{"an evicting policy", func(t *testing.T) string {
			return redistest.Start(t, "--maxmemory-policy", "allkeys-lru").URL()
		}, "eviction", "allkeys-lru"},
		{"wrong master name", func(t *testing.T) string {
			st := redistest.StartSentinels(t)
			return "redis+sentinel://" + st.Sentinel.Addr() + "/not-" + st.Name
		}, "master_name", `no master named "not-gwmaster"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := tc.store(t)
			site := fmt.Sprintf(gatewaySite, "readahead_store "+url+"\n\t\treadahead_store_key 0123456789abcdef-e2e-secret\n\t\t"+storeTimeout)
			c, logs := startLogged(t, site, srv.URL, "ERROR")
			var found map[string]any
			eventually(t, "an error naming the cause "+tc.cause, func() bool {
				for _, e := range logs() {
					if e["cause"] == tc.cause {
						found = e
						return true
					}
				}
				return false
			})
			t.Logf("%v", found)
			assert.Equal(t, "error", found["level"])
			assert.Contains(t, found["msg"], "readahead_store")
			assert.Contains(t, fmt.Sprint(found["error"]), tc.want)
			assert.NotContains(t, fmt.Sprint(found), "wrong-password", "no credential logged")
			ids, _ := walkSharedPages(t, c.URL, "/calls", 25, "client-1", "")
			assert.Equal(t, strIDs(backend.IDs("calls")), ids, "the config serves without the store")
		})
	}
}
