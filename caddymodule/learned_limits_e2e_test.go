package caddymodule_test

import (
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/internal/harness"
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

			c := harness.Start(t, site, srv.URL)
			alone := &keyedWalker{base: c.URL, perPage: tc.perPage, headers: fixed("X-Api-Key", "a-alone")}
			walkAll(t, alone)
			require.Equal(t, kb.a, alone.ids)
			c.Stop(t) // one Caddy at a time; the next one starts fresh

			c = harness.Start(t, site, srv.URL)
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
