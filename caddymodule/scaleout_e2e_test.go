package caddymodule_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// scaleOutSites runs instances gateways, each a server of its own with its
// own helpdesk_gateway handler (its own Provision, so its own position
// index: the gateway keeps no index in process globals), in front of one
// backend, and a front server that spreads clients over them with
// reverse_proxy's lb_policy. Each gateway names itself to the backend in a
// header, so the test sees which instance made each backend call: by its
// port, a placeholder, so that the instances' configs are one deployment
// (deployment.go) and share readahead_store's entries.
func scaleOutSites(t *testing.T, instances int, lbPolicy, options string) string {
	t.Helper()
	var sb strings.Builder
	upstreams := make([]string, instances)
	for i := range upstreams {
		upstreams[i] = gatewaytest.FreeLoopbackAddr(t)
		fmt.Fprintf(&sb, "http://%s {\n\thelpdesk_gateway {\n\t\t%s\n\t}\n\treverse_proxy {backend} {\n\t\theader_up X-Gateway-Instance {http.request.local.port}\n\t}\n}\n", upstreams[i], options)
	}
	fmt.Fprintf(&sb, "http://:0 {\n\treverse_proxy %s {\n\t\tlb_policy %s\n\t}\n}\n", strings.Join(upstreams, " "), lbPolicy)
	return sb.String()
}

// TestScaleOutRoundRobin walks a list of 20,000 records by cursor through
// three fresh gateway instances behind a round-robin reverse_proxy: every
// page lands on an instance that did not serve the page before, yet a first
// walk costs at most 1.10 backend calls per page for numeric ids and 1.25
// for lexical ones, at most 2.5 records asked for per record served at
// perPage 100 and 4 at perPage 10, and is exact. A sticky policy (hashing the client's API
// key header) costs exactly one call per page.
func TestScaleOutRoundRobin(t *testing.T) {
	if testing.Short() {
		t.Skip("walks 20,000 records through four servers")
	}
	const records = 20_000
	numeric := reference.New(reference.Config{Seed: 12, Records: records})
	lexical := randomLexicalList(records)
	for _, tc := range []struct {
		name     string
		backend  http.Handler
		options  string
		lb       string
		perPage  int
		maxCalls float64
		want     func() []string
	}{
		{"numeric/round_robin/perPage=100", numeric, "", "round_robin", 100, 1.10, func() []string { return strIDs(numeric.IDs("calls")) }},
		{"numeric/round_robin/perPage=10", numeric, "", "round_robin", 10, 1.10, func() []string { return strIDs(numeric.IDs("calls")) }},
		{"lexical/round_robin/perPage=100", lexical, "id_order lexical", "round_robin", 100, 1.25, lexical.ids},
		{"numeric/header X-Api-Key/perPage=100", numeric, "", "header X-Api-Key", 100, 1.00, func() []string { return strIDs(numeric.IDs("calls")) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{next: tc.backend}
			srv := httptest.NewServer(rec)
			t.Cleanup(srv.Close)
			c := gatewaytest.Start(t, scaleOutSites(t, 3, tc.lb, tc.options), srv.URL)

			ids, pages := walkCursorAs(t, c.URL, "/calls", tc.perPage, "client-1")
			assert.Equal(t, tc.want(), ids, "the walk is exact")
			reqs := rec.requests()
			perPage := float64(len(reqs)) / float64(pages)
			t.Logf("%d pages, %d backend calls: %.3f calls per page", pages, len(reqs), perPage)
			assert.LessOrEqual(t, perPage, tc.maxCalls, "backend calls per page")

			// Records asked for: at least the records fetched, since an
			// answer holds at most _perPage of them.
			asked := 0
			for _, r := range reqs {
				n, err := strconv.Atoi(r.URL.Query().Get("_perPage"))
				require.NoError(t, err, r.URL.RawQuery)
				asked += n
			}
			maxFetched := map[int]float64{10: 4, 100: 2.5}[tc.perPage]
			t.Logf("%.3f records asked per record served", float64(asked)/float64(len(ids)))
			assert.LessOrEqual(t, float64(asked)/float64(len(ids)), maxFetched, "records fetched per record served")

			calls := map[string]int{}
			for _, r := range reqs {
				calls[r.Header.Get("X-Gateway-Instance")]++
			}
			if tc.lb != "round_robin" {
				assert.Len(t, calls, 1, "a sticky policy sends one client to one instance: %v", calls)
				return
			}
			assert.Len(t, calls, 3, "every instance served pages: %v", calls)
		})
	}
}

// TestScaleOutInstancesShareNoIndex shows that gateway instances in one
// process keep separate state: a deep cursor that one instance has just
// served is found by it again from its index, in one call at the cursor's
// place, while another instance meets it cold and starts from the list's
// first page.
func TestScaleOutInstancesShareNoIndex(t *testing.T) {
	b := reference.New(reference.Config{Seed: 12, Records: 5000})
	rec := &recorder{next: b}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	sites := scaleOutSites(t, 2, "round_robin", "")
	gatewaytest.Start(t, sites, srv.URL)
	var gateways []string
	for _, line := range strings.Split(sites, "\n") {
		if strings.HasPrefix(line, "http://127.0.0.1:") {
			gateways = append(gateways, strings.TrimSuffix(line, " {"))
		}
	}
	require.Len(t, gateways, 2)
	ids := strIDs(b.IDs("calls"))
	firstCall := func(gateway string) url.Values {
		rec.reset()
		a := get(t, gateway+"/calls?_perPage=10&_cursor="+cursorFor(ids[4000]))
		require.Equal(t, http.StatusOK, a.status, string(a.body))
		require.Equal(t, ids[4001:4011], a.ids(t))
		reqs := rec.requests()
		require.NotEmpty(t, reqs)
		return reqs[0].URL.Query()
	}
	cold := firstCall(gateways[0])
	assert.Equal(t, "1", cold.Get("_page"), "a fresh instance starts from the list's first page")
	warm := firstCall(gateways[0])
	assert.NotEqual(t, "1", warm.Get("_page"), "the same instance knows the cursor's place now: %v", warm)
	other := firstCall(gateways[1])
	assert.Equal(t, "1", other.Get("_page"), "another instance has not seen it: %v", other)
}

// randomLexicalList serves n random ids of 6 to 16 letters and digits in
// byte order, which no arithmetic on ids guesses exactly.
func randomLexicalList(n int) *listBackend {
	r := rand.New(rand.NewPCG(12, 12))
	const alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
	seen := map[string]bool{}
	ids := make([]string, 0, n)
	for len(ids) < n {
		b := make([]byte, 6+r.IntN(11))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		if !seen[string(b)] {
			seen[string(b)] = true
			ids = append(ids, string(b))
		}
	}
	slices.Sort(ids)
	return &listBackend{tokens: jsonTokens(ids)}
}

// walkCursorAs is walkCursor for a client that sends an API key.
func walkCursorAs(t *testing.T, base, path string, perPage int, apiKey string) (ids []string, pages int) {
	t.Helper()
	cursor := ""
	for {
		q := url.Values{"_perPage": {itoa(perPage)}}
		if cursor != "" {
			q.Set("_cursor", cursor)
		}
		a := get(t, base+path+"?"+q.Encode(), "X-Api-Key", apiKey)
		require.Equal(t, http.StatusOK, a.status, string(a.body))
		page := a.ids(t)
		pages++
		ids = append(ids, page...)
		cursor = a.header.Get("next_page_cursor")
		if cursor == "" {
			return ids, pages
		}
		require.Len(t, page, perPage, "a page before the last is full")
		require.Less(t, pages, 100000)
	}
}
