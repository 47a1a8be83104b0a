package caddymodule_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
	"github.com/helpdesk-gateway/gateway/redisstore/redistest"
)

// TestAdminCountersRelate walks a short list through one instance, with
// its own windows and with readahead_store, and checks the relations
// between the admin endpoint's counters and the metrics that
// docs/operating.md ("How the counters relate") states.
func TestAdminCountersRelate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		store bool
	}{
		{"own windows", false},
		{"readahead_store", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := "/relate-" + strconv.FormatBool(tc.store) // a label no other test counts in
			options := "base_path " + base
			if tc.store {
				options += "\n\t\t" + sharedStoreOptions(redistest.Start(t), storeTimeout)
			}
			b := reference.New(reference.Config{Seed: 41, Records: 1000})
			rec := &recorder{next: b}
			srv := httptest.NewServer(http.StripPrefix(base, rec)) // the backend sees base_path too
			t.Cleanup(srv.Close)
			c := gatewaytest.Start(t, fmt.Sprintf(gatewaySite, options), srv.URL, gatewaytest.Options{Admin: true})

			ids, pages := walkCursor(t, c.URL, base+"/calls", 10, "")
			require.Len(t, ids, 1000)
			g, ep := relateReport(t, c.Admin, base+"/calls")
			m := scrapedSeries(adminGet(t, c.Admin, "/metrics"))
			metric := func(name string) float64 {
				v, err := strconv.ParseFloat(m[fmt.Sprintf(`helpdesk_gateway_%s{endpoint=%q}`, name, base+"/calls")], 64)
				require.NoError(t, err, name)
				return v
			}
			t.Logf("readahead %+v; pages %+v", g.Readahead, ep.Pages)

			p := ep.Pages
			assert.Equal(t, int64(pages), p.Served, "pages.served: every page served")
			assert.Equal(t, int64(len(ids)), p.RecordsServed)
			assert.Positive(t, p.FromReadaheadWindows, "a walk of 100 pages is read ahead")
			assert.Less(t, p.FromReadaheadWindows, p.Served)
			assert.Equal(t, float64(p.FromReadaheadWindows), metric("readahead_pages_total"), "the metric counts what from_readahead_windows counts")
			// backend_calls: the calls of the pages, and the reads ahead of
			// the walker, which count when they end: at least the pages'
			// own calls, at most what the backend saw.
			assert.GreaterOrEqual(t, float64(p.BackendCalls), metric("backend_subrequests_sum"))
			assert.LessOrEqual(t, p.BackendCalls, int64(len(rec.requests())))
			require.NotNil(t, p.BackendCallsPerPage)
			assert.InDelta(t, float64(p.BackendCalls)/float64(p.Served), *p.BackendCallsPerPage, 1e-9)

			r := g.Readahead
			if !tc.store {
				assert.Nil(t, r.Store)
				assert.Equal(t, p.FromReadaheadWindows, r.PagesServed, "readahead.pages_served: the pages of the gateway's endpoints cut from its windows")
				return
			}
			require.NotNil(t, r.Store)
			assert.Zero(t, r.PagesServed, "under the store the gateway's own windows serve nothing")
			assert.Zero(t, r.Windows)
			assert.Positive(t, r.Bytes, "readahead.bytes still counts the lists' identities, learned state and samples")
			assert.GreaterOrEqual(t, r.Store.Served, p.FromReadaheadWindows, "store.served: a window taken from the store for each such page, and more")
			assert.Positive(t, r.Store.Kept)
		})
	}
}

type (
	adminGateway struct {
		Readahead struct {
			Windows     int
			Bytes       int64
			PagesServed int64 `json:"pages_served"`
			Store       *struct{ Served, Kept int64 }
		}
		Endpoints []adminEndpoint
	}
	adminEndpoint struct {
		Path  string
		Pages struct {
			Served               int64
			FromReadaheadWindows int64    `json:"from_readahead_windows"`
			BackendCalls         int64    `json:"backend_calls"`
			RecordsServed        int64    `json:"records_served"`
			BackendCallsPerPage  *float64 `json:"backend_calls_per_page"`
		}
	}
)

// relateReport reads /helpdesk/endpoints: the one gateway, and its
// endpoint at path.
func relateReport(t *testing.T, admin, path string) (adminGateway, adminEndpoint) {
	t.Helper()
	var report struct{ Gateways []adminGateway }
	require.NoError(t, json.Unmarshal([]byte(adminGet(t, admin, "/helpdesk/endpoints")), &report))
	require.Len(t, report.Gateways, 1)
	g := report.Gateways[0]
	for _, ep := range g.Endpoints {
		if ep.Path == path {
			return g, ep
		}
	}
	t.Fatalf("no endpoint %s in the report", path)
	return g, adminEndpoint{}
}

func adminGet(t *testing.T, admin, path string) string {
	t.Helper()
	resp, err := gatewaytest.Client.Get("http://" + admin + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(body)
}
