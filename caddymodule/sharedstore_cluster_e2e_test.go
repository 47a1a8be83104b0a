package caddymodule_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
	"github.com/helpdesk-gateway/gateway/redisstore/redistest"
)

// TestSharedStoreCluster walks a list of 20,000 records by cursor
// through three gateway instances behind round_robin that share a
// three-master Redis Cluster, spelled redis+cluster://: the walk is exact
// and costs the backend what it does on one Redis (issue 33's target at
// 100 a page, TestSharedStoreWholeWalk), and each instance's admin
// report shows the cluster by its nodes, without credentials.
func TestSharedStoreCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("walks 20,000 records through four servers and a Redis Cluster")
	}
	cluster := redistest.StartCluster(t, 3)
	backend := reference.New(reference.Config{Seed: 39, Records: 20_000})
	for _, tc := range []struct {
		perPage  int
		maxCalls float64
	}{{100, 0.25}} { // 10 a page, 0.05: redisstore's TestCluster, without Caddy's cost in test time
		t.Run(fmt.Sprintf("perPage=%d", tc.perPage), func(t *testing.T) {
			rec := &recorder{next: backend}
			srv := httptest.NewServer(rec)
			t.Cleanup(srv.Close)
			// The deadline and TTL of TestSharedStoreWholeWalk.
			options := fmt.Sprintf("readahead_store %s\n\t\treadahead_store_key 0123456789abcdef-e2e-secret\n\t\t%s\n\t\treadahead_ttl 30s", cluster.URL(), storeTimeout)
			c := gatewaytest.Start(t, scaleOutSites(t, 3, "round_robin", options), srv.URL, gatewaytest.Options{Admin: true})

			ids, pages := walkSharedPages(t, c.URL, "/calls", tc.perPage, "client-1", "")
			require.Equal(t, strIDs(backend.IDs("calls")), ids, "the walk is exact")
			calls := len(rec.requests())
			t.Logf("%d pages, %d backend calls: %.3f calls per page", pages, calls, float64(calls)/float64(pages))
			assert.LessOrEqual(t, float64(calls)/float64(pages), tc.maxCalls, "backend calls per page, shared through the cluster")

			resp, err := gatewaytest.Client.Get("http://" + c.Admin + "/helpdesk/endpoints")
			require.NoError(t, err)
			defer resp.Body.Close()
			var report struct {
				Gateways []struct {
					Readahead struct {
						Store *struct {
							Addr, Kind string
							Up         bool
							Served     int64
						}
					}
				}
			}
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&report))
			require.Len(t, report.Gateways, 3)
			for i, g := range report.Gateways {
				st := g.Readahead.Store
				require.NotNil(t, st, "gateway %d shows its store", i)
				assert.Equal(t, "cluster", st.Kind)
				assert.Equal(t, cluster.URL()[len("redis+cluster://"):], st.Addr)
				assert.True(t, st.Up)
			}
		})
	}
}
