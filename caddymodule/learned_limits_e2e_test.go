package caddymodule_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
)

// TestLearnedLimitStaysWithItsCaller (issue 26 point 3): a backend
// honours a client's maxrows=30 by answering at most 30 records, and
// otherwise clamps at 500. A caller that sends maxrows=30 walks every
// record; the page-size limit its answers prove is its own: another
// caller (another key, no maxrows) walking afterwards costs the backend
// what it costs walking alone on a fresh Caddy, with read-ahead off
// (about one call a page) and on (windows up to 500, not 30).
func TestLearnedLimitStaysWithItsCaller(t *testing.T) {
	const records = 2000
	for _, tc := range []struct {
		name    string
		options string
		perPage int
		// slack is how many calls the walk after the short caller may
		// cost past the walk alone: none without read-ahead, where the
		// calls do not depend on timing; with read-ahead, window sizes
		// follow the walker's pace.
		slack func(alone int) int
	}{
		{"perPage 100, read-ahead off", "readahead_ttl 0", 100, func(int) int { return 0 }},
		{"perPage 10, read-ahead on", "", 10, func(alone int) int { return alone/2 + 2 }},
		{"perPage 100, read-ahead on", "", 100, func(alone int) int { return alone/2 + 2 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kb := newKeyedBackend(records, 500)
			srv := httptest.NewServer(kb)
			t.Cleanup(srv.Close)
			site := fmt.Sprintf(gatewaySite, tc.options)

			c := gatewaytest.Start(t, site, srv.URL)
			alone := &keyedWalker{base: c.URL, perPage: tc.perPage, headers: fixed("X-Api-Key", "a-alone")}
			walkAll(t, alone)
			require.Equal(t, kb.a, alone.ids)
			c.Stop(t) // one Caddy at a time; the next one starts fresh

			c = gatewaytest.Start(t, site, srv.URL)
			short := &keyedWalker{base: c.URL, perPage: tc.perPage, extra: "maxrows=30", headers: fixed("X-Api-Key", "a-short")}
			walkAll(t, short)
			require.Equal(t, kb.a, short.ids, "the caller with maxrows=30 walks every record")
			shortCalls, _ := kb.cost("a-short")

			after := &keyedWalker{base: c.URL, perPage: tc.perPage, headers: fixed("X-Api-Key", "a-after")}
			walkAll(t, after)
			require.Equal(t, kb.a, after.ids)

			aloneCalls, _ := kb.cost("a-alone")
			afterCalls, _ := kb.cost("a-after")
			assert.LessOrEqual(t, afterCalls, aloneCalls+tc.slack(aloneCalls),
				"backend calls of a walk after the short caller's, against a walk alone on a fresh Caddy")
			if tc.options == "readahead_ttl 0" {
				assert.LessOrEqual(t, float64(afterCalls)/float64(after.pages), 1.05, "calls per page")
			}
			t.Logf("alone %d calls, after the maxrows=30 caller %d calls (%d pages); the maxrows=30 caller: %d calls (%d pages)",
				aloneCalls, afterCalls, after.pages, shortCalls, short.pages)
		})
	}
}

// TestOneCallersClampIsNotTheEndpoints (issue 30 point 3): a caller whose
// own maxrows=30 makes the backend answer at most 30 records teaches the
// gateway 30 for its list. The admin endpoint shows that limit as one
// caller's and the endpoint's as backend_max_per_page, and so does the
// gauge. Two other callers that meet the backend's own clamp of 500 do
// not agree with it, so nothing changes; on a fresh Caddy the same two
// agree, and the endpoint shows 500 as learned.
func TestOneCallersClampIsNotTheEndpoints(t *testing.T) {
	kb := newKeyedBackend(2000, 500)
	srv := httptest.NewServer(kb)
	t.Cleanup(srv.Close)
	site := fmt.Sprintf(gatewaySite, "readahead_ttl 0")
	type learned struct{ Limit, Lists, Callers int }
	state := func(c *gatewaytest.Caddy) (limit int, source string, limits []learned, gauge string) {
		resp, err := gatewaytest.Client.Get("http://" + c.Admin + "/helpdesk/endpoints")
		require.NoError(t, err)
		defer resp.Body.Close()
		var rep adminReport
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&rep))
		ep := rep.Gateways[0].Endpoints[0]
		require.Equal(t, "/calls", ep.Path)
		for _, l := range ep.LearnedPageLimits {
			limits = append(limits, learned{l.Limit, l.Lists, l.Callers})
		}
		m, err := gatewaytest.Client.Get("http://" + c.Admin + "/metrics")
		require.NoError(t, err)
		defer m.Body.Close()
		body, _ := io.ReadAll(m.Body)
		for line := range strings.SplitSeq(string(body), "\n") {
			if strings.HasPrefix(line, `helpdesk_gateway_backend_page_limit{endpoint="/calls"}`) {
				gauge = line[strings.LastIndexByte(line, ' ')+1:]
			}
		}
		return ep.BackendPageLimit, ep.BackendPageLimitSource, limits, gauge
	}
	walk := func(c *gatewaytest.Caddy, key, extra string) {
		w := &keyedWalker{base: c.URL, perPage: 600, extra: extra, headers: fixed("X-Api-Key", key)}
		walkAll(t, w)
		require.Equal(t, kb.view(key), w.ids)
	}

	c := gatewaytest.Start(t, site, srv.URL, gatewaytest.Options{Admin: true})
	walk(c, "a-short", "maxrows=30")
	limit, source, limits, gauge := state(c)
	assert.Equal(t, 1000, limit, "one caller's clamp is not the endpoint's limit")
	assert.Equal(t, "configured", source)
	assert.Equal(t, []learned{{30, 1, 1}}, limits, "shown as one caller's")
	assert.Equal(t, "1000", gauge)

	walk(c, "a-one", "")
	walk(c, "b-two", "")
	limit, source, limits, gauge = state(c)
	assert.Equal(t, 1000, limit, "callers that learned 500 do not agree with the one that learned 30")
	assert.Equal(t, "configured", source)
	assert.Equal(t, []learned{{30, 1, 1}, {500, 2, 2}}, limits)
	assert.Equal(t, "1000", gauge)
	c.Stop(t)

	c = gatewaytest.Start(t, site, srv.URL, gatewaytest.Options{Admin: true})
	walk(c, "a-one", "")
	limit, _, _, gauge = state(c)
	assert.Equal(t, 1000, limit, "one caller")
	assert.Equal(t, "1000", gauge)
	walk(c, "b-two", "")
	limit, source, limits, gauge = state(c)
	assert.Equal(t, 500, limit, "two callers agree")
	assert.Equal(t, "learned", source)
	assert.Equal(t, []learned{{500, 2, 2}}, limits)
	assert.Equal(t, "500", gauge)
}
