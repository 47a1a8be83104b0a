package caddymodule_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// adminReportOf reads c's admin endpoint /helpdesk/endpoints.
func adminReportOf(t *testing.T, c *gatewaytest.Caddy) adminReport {
	t.Helper()
	resp, err := gatewaytest.Client.Get("http://" + c.Admin + "/helpdesk/endpoints")
	require.NoError(t, err)
	defer resp.Body.Close()
	var rep adminReport
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&rep))
	return rep
}

// walksSeen sums what the running gateways' read-ahead saw of walks
// (the admin endpoint's readahead.walks): the signs that callers' walks
// go on at other instances, and the callers' lists proven to stay.
func walksSeen(t *testing.T, c *gatewaytest.Caddy) (signs int64, proven int) {
	t.Helper()
	for _, g := range adminReportOf(t, c).Gateways {
		w := g.Readahead.Walks
		require.NotNil(t, w, "read-ahead with no store shows what it saw of walks")
		signs += w.Signs.ContinuedElsewhere + w.Signs.NotIssuedHere
		proven += w.Proven
	}
	return signs, proven
}

// TestDefaultConfigBehindRoundRobin: three instances with the default
// config (read-ahead on, no readahead_store) behind round_robin, random
// or least_conn, one
// caller walking back to back while the backend churns and the list
// changes between walks (three walks at 7 a page, then three at 100), in the page, offset and keyset dialects and at
// several page sizes: every walk is exact (every record that existed for
// the whole walk, with its bytes), since no instance sees a walk of the
// caller run the proof (liststore/stay.go). Behind a sticky policy
// (client_ip_hash: every test client is 127.0.0.1) read-ahead proves
// itself in the first walk and serves most pages of the next.
func TestDefaultConfigBehindRoundRobin(t *testing.T) {
	for i, e := range exampleBackends {
		lb := []string{"round_robin", "random", "least_conn"}[i%3]
		t.Run(e.file+"/"+lb, func(t *testing.T) {
			s, c := churnedWalksBehind(t, e, 1000, scaleOutSites(t, 3, lb, e.gatewayOptions(t)), true, gatewaytest.Options{Admin: true})
			for _, perPage := range []int{7, 100} {
				for n := range 3 {
					walkThrough(s, fmt.Sprintf("walk %d by %d", n+1, perPage), perPage)
				}
			}
			_, proven := walksSeen(t, c)
			assert.Zero(t, proven, "no instance proves the caller's walks behind round robin")
			assert.Zero(t, metricSum(t, c, "helpdesk_gateway_readahead_lists_proven"), "the metric counts what the admin endpoint does")
		})
	}
	t.Run("sticky", func(t *testing.T) {
		e := exampleBackends[0]
		s, c := churnedWalksBehind(t, e, 1500, scaleOutSites(t, 3, "client_ip_hash", e.gatewayOptions(t)), true, gatewaytest.Options{Admin: true})
		first := walkThrough(s, "walk 1", 10)
		second := walkThrough(s, "walk 2", 10)
		t.Logf("calls a page: %.3f in the first walk, %.3f in the second", callsPerPage(first), callsPerPage(second))
		assert.Less(t, callsPerPage(second), 0.3, "read-ahead serves a proven instance's walks")
		signs, proven := walksSeen(t, c)
		assert.Zero(t, signs, "a sticky balancer sends every page of a walk to one instance")
		assert.Equal(t, 1, proven, "the instance the client reaches proves the caller's walks")
		assert.Equal(t, 1.0, metricSum(t, c, "helpdesk_gateway_readahead_lists_proven"), "the metric counts what the admin endpoint does")
		assert.Zero(t, metricSum(t, c, "helpdesk_gateway_readahead_lists_standing_down"))
	})
}

// TestRoundRobinWalkSplitAcrossWalks: the case the proof is for, through
// Caddy. Two instances with the default config behind round_robin, one
// client walking a list of 99 pages back to back: each walk's pages
// alternate between the instances, and since the walk has an odd number
// of pages, each instance receives, in one walk, the cursors it handed
// out in the walk before, and reads windows there. Between the second
// and the third walk, records are renewed (a new record under the same
// id, as the reference churn does): the third walk must show every one
// as it is now. Trusting its windows, an instance would serve the third
// walk pages from windows it read in the second.
func TestRoundRobinWalkSplitAcrossWalks(t *testing.T) {
	b := reference.New(reference.Config{Seed: 41, Records: 990})
	srv := httptest.NewServer(b)
	t.Cleanup(srv.Close)
	c := gatewaytest.Start(t, scaleOutSites(t, 2, "round_robin", ""), srv.URL, gatewaytest.Options{Admin: true})
	walk := func() map[string]string {
		t.Helper()
		got, after := map[string]string{}, ""
		for {
			a, page := pageAfter(t, c.URL, "calls", 10, after)
			var records []json.RawMessage
			require.NoError(t, json.Unmarshal(a.body, &records))
			for i, id := range page {
				got[strconv.FormatInt(id, 10)] = string(records[i])
			}
			if a.header.Get("next_page_cursor") == "" {
				return got
			}
			after = strconv.FormatInt(page[len(page)-1], 10)
		}
	}
	walk()
	walk()
	ids := b.IDs("calls")
	for i := 5; i < len(ids); i += 7 {
		require.True(t, b.Delete("calls", ids[i]))
		require.NoError(t, b.Insert("calls", ids[i]))
	}
	now := map[string]string{}
	var records []json.RawMessage
	a := get(t, srv.URL+"/calls?_perPage=1000&_page=1")
	require.NoError(t, json.Unmarshal(a.body, &records))
	for i, id := range a.ids(t) {
		now[id] = string(records[i])
	}
	got := walk()
	stale := 0
	for id, rec := range now {
		if got[id] != rec {
			stale++
		}
	}
	assert.Zero(t, stale, "records the third walk was served as they were before it began")
	assert.Len(t, got, len(now))
}
