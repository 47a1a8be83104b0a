package caddymodule_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/legacy"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// TestAdminEndpointsSayWhenKeysetPays: after a walk, GET
// /helpdesk/endpoints shows what walks of the endpoint's longest list
// cost a backend read by offset (offset_cost): the list's extent from
// the position index, the window (the backend page limit with
// read-ahead on, the mean page served without), rows stepped over per
// record served, N/(2w), and for a large list that backend_keyset makes
// them linear. A backend_keyset endpoint shows none. Issue 40, point 3.
func TestAdminEndpointsSayWhenKeysetPays(t *testing.T) {
	// /p is large enough for the advice at the smallest backend page
	// limit; the others, which show less, are smaller.
	records := map[string]int{"/p": 2500, "/k": 500, "/n": 1000}
	mux := http.NewServeMux()
	for base, n := range records {
		cfg := reference.Config{Seed: 7, Records: n, BasePath: base, Only: []string{"calls"}}
		if base == "/k" {
			cfg.Paging = legacy.Dialect{Keyset: "id_gt={id}"}
		}
		mux.Handle(base+"/", reference.New(cfg))
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	const site = `
http://:0 {
	route /p/* {
		helpdesk_gateway {
			base_path /p
			cursor_endpoints /calls
			backend_max_per_page 25
		}
		reverse_proxy {backend}
	}
	route /k/* {
		helpdesk_gateway {
			base_path /k
			cursor_endpoints /calls
			backend_max_per_page 25
			backend_keyset "id_gt={id}"
		}
		reverse_proxy {backend}
	}
	route /n/* {
		helpdesk_gateway {
			base_path /n
			cursor_endpoints /calls
			backend_max_per_page 25
			readahead_ttl 0
		}
		reverse_proxy {backend}
	}
}
`
	c := gatewaytest.Start(t, site, srv.URL, gatewaytest.Options{Admin: true})
	type cost struct {
		ListRecords                int     `json:"list_records"`
		Window                     int     `json:"window"`
		RowsSteppedPerRecordServed float64 `json:"rows_stepped_per_record_served"`
		Advice                     string  `json:"advice"`
	}
	read := func() map[string]*cost {
		t.Helper()
		resp, err := gatewaytest.Client.Get("http://" + c.Admin + "/helpdesk/endpoints")
		require.NoError(t, err)
		defer resp.Body.Close()
		var rep struct {
			Gateways []struct {
				Endpoints []struct {
					Path       string `json:"path"`
					OffsetCost *cost  `json:"offset_cost"`
				} `json:"endpoints"`
			} `json:"gateways"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&rep))
		out := map[string]*cost{}
		for _, g := range rep.Gateways {
			for _, ep := range g.Endpoints {
				out[ep.Path] = ep.OffsetCost
			}
		}
		require.Len(t, out, 6, "three gateways, each with /calls and the default /tickets")
		return out
	}
	for path, c := range read() {
		assert.Nil(t, c, "%s: no list known before a walk", path)
	}

	walk := func(path string, perPage string) {
		t.Helper()
		served := 0
		for next := ""; ; {
			a := get(t, c.URL+path+"?_perPage="+perPage+next)
			require.Equal(t, http.StatusOK, a.status, string(a.body))
			served += len(a.ids(t))
			cursor := a.header.Get("next_page_cursor")
			if cursor == "" {
				break
			}
			next = "&_cursor=" + cursor
		}
		require.Equal(t, records[path[:2]], served, path)
	}
	walk("/p/calls", "100")
	walk("/k/calls", "100")
	walk("/n/calls", "100")

	got := read()
	require.NotNil(t, got["/p/calls"], "a page-dialect endpoint, read ahead")
	assert.Equal(t, cost{ListRecords: 2500, Window: 25, RowsSteppedPerRecordServed: 50,
		Advice: `this list's walks step over 50 rows per record served (2500 records read by offset in windows of 25); if the backend can filter by id, backend_keyset "id_gt={id}" (in its own form) makes them linear`},
		*got["/p/calls"])
	assert.Nil(t, got["/k/calls"], "backend_keyset: walks are linear")
	require.NotNil(t, got["/n/calls"], "a page-dialect endpoint without read-ahead")
	assert.Equal(t, cost{ListRecords: 1000, Window: 100, RowsSteppedPerRecordServed: 5}, *got["/n/calls"],
		"a call a page of 100: no advice below 50 rows a record")
}
