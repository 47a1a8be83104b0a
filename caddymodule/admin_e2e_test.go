package caddymodule_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule"
	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// adminReport mirrors the JSON of GET /helpdesk/endpoints. It is decoded
// with unknown fields refused, so a field the endpoint starts to show fails
// the test until it is documented here (and in docs/operating.md and SECURITY.md).
type adminReport struct {
	Gateways []struct {
		Server    string    `json:"server"`
		Listen    []string  `json:"listen"`
		Hosts     []string  `json:"hosts"`
		BasePath  string    `json:"base_path"`
		Loaded    time.Time `json:"loaded"`
		Readahead struct {
			TTL            string `json:"ttl"`
			MemoryLimit    int64  `json:"memory_limit"`
			Windows        int    `json:"windows"`
			Bytes          int64  `json:"bytes"`
			PagesServed    int64  `json:"pages_served"`
			WindowsEvicted int64  `json:"windows_evicted"`
			WindowsExpired int64  `json:"windows_expired"`
			Walks          *struct {
				Proven       int   `json:"lists_proven"`
				StandingDown int   `json:"lists_standing_down"`
				Continued    int64 `json:"continued"`
				Signs        struct {
					ContinuedElsewhere int64 `json:"continued_elsewhere"`
					NotIssuedHere      int64 `json:"not_issued_here"`
				} `json:"signs"`
				Reused    int64     `json:"reused"`
				Late      int64     `json:"late"`
				StoodDown int64     `json:"stood_down"`
				LastSign  time.Time `json:"last_sign"`
			} `json:"walks"`
		} `json:"readahead"`
		Endpoints []struct {
			Path                   string `json:"path"`
			Kind                   string `json:"kind"`
			BackendPageLimit       int    `json:"backend_page_limit"`
			BackendPageLimitSource string `json:"backend_page_limit_source"`
			LearnedPageLimits      []struct {
				Limit   int  `json:"limit"`
				Fixed   bool `json:"fixed"`
				Lists   int  `json:"lists"`
				Callers int  `json:"callers"`
			} `json:"learned_page_limits"`
			Index *struct {
				Lists     int `json:"lists"`
				Samples   int `json:"samples"`
				IndexSize int `json:"index_size"`
			} `json:"index"`
			Pages *struct {
				Served                        int64    `json:"served"`
				FromWindows                   int64    `json:"from_readahead_windows"`
				BackendCalls                  int64    `json:"backend_calls"`
				RecordsFetched                int64    `json:"records_fetched"`
				RecordsServed                 int64    `json:"records_served"`
				BackendCallsPerPage           *float64 `json:"backend_calls_per_page"`
				RecordsFetchedPerRecordServed *float64 `json:"records_fetched_per_record_served"`
			} `json:"pages"`
			OffsetCost *struct {
				ListRecords                int     `json:"list_records"`
				Window                     int     `json:"window"`
				RowsSteppedPerRecordServed float64 `json:"rows_stepped_per_record_served"`
				Advice                     string  `json:"advice"`
			} `json:"offset_cost"`
		} `json:"endpoints"`
		Deployment *struct {
			Fingerprint string   `json:"fingerprint"`
			Name        string   `json:"name"`
			Unknown     []string `json:"unknown"`
		} `json:"deployment"`
	} `json:"gateways"`
}

// backendCounter counts the calls that reach the backend and the records
// its answers hold.
type backendCounter struct {
	next           http.Handler
	mu             sync.Mutex
	calls, records int64
}

func (bc *backendCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	bc.next.ServeHTTP(rec, r)
	var records []json.RawMessage
	if json.Unmarshal(rec.Body.Bytes(), &records) == nil {
		bc.mu.Lock()
		bc.calls++
		bc.records += int64(len(records))
		bc.mu.Unlock()
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

func (bc *backendCounter) counts() (calls, records int64) {
	caddymodule.SettleReadsAhead()
	bc.mu.Lock()
	defer bc.mu.Unlock()
	return bc.calls, bc.records
}

// TestAdminEndpoints reads GET /helpdesk/endpoints from a running Caddy:
// where each gateway serves, its endpoints' limits, index and cost after a
// walk, that it shows no query, id or credential, that only GET is allowed,
// and that a reload replaces all it shows.
func TestAdminEndpoints(t *testing.T) {
	b := reference.New(reference.Config{Seed: 11, Records: 120, BasePath: "/api/v3"})
	counter := &backendCounter{next: b}
	srv := httptest.NewServer(counter)
	t.Cleanup(srv.Close)
	port := gatewaytest.FreeLoopbackAddr(t)[len("127.0.0.1"):] // a fixed port: the reload keeps it
	const before = `
http://localhost%[1]s {
	helpdesk_gateway {
		base_path /other
		cursor_endpoints /calls
		filter_endpoints /tickets
	}
	reverse_proxy {backend}
}
http://%[1]s {
	helpdesk_gateway {
		base_path /api/v3
		cursor_endpoints /calls /phone_numbers
		backend_max_per_page 100
		index_size 5000
	}
	reverse_proxy {backend}
}
`
	c := gatewaytest.Start(t, fmt.Sprintf(before, port), srv.URL, gatewaytest.Options{Admin: true})
	base := "http://127.0.0.1" + port
	read := func() (adminReport, string) {
		t.Helper()
		resp, err := gatewaytest.Client.Get("http://" + c.Admin + "/helpdesk/endpoints")
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
		assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		var rep adminReport
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		require.NoError(t, dec.Decode(&rep), string(body))
		return rep, string(body)
	}

	// Before any request: both gateways, by server, hosts and base path;
	// the host-matched site's route comes first, as Caddy orders routes.
	rep, _ := read()
	require.Len(t, rep.Gateways, 2)
	other, api := rep.Gateways[0], rep.Gateways[1]
	for _, g := range rep.Gateways {
		assert.Equal(t, "srv0", g.Server)
		assert.Equal(t, []string{"127.0.0.1" + port}, g.Listen)
		assert.WithinDuration(t, time.Now(), g.Loaded, time.Minute)
	}
	// Each shows its deployment fingerprint: two sites whose options
	// differ are two deployments (deployment.go).
	for _, g := range rep.Gateways {
		require.NotNil(t, g.Deployment)
		assert.Regexp(t, `^[0-9a-f]{12}$`, g.Deployment.Fingerprint)
		assert.Empty(t, g.Deployment.Unknown, "reverse_proxy to a fixed upstream: the backend is known")
	}
	assert.NotEqual(t, other.Deployment.Fingerprint, api.Deployment.Fingerprint)
	assert.Equal(t, "/other", other.BasePath)
	assert.Equal(t, []string{"localhost"}, other.Hosts)
	assert.Equal(t, "/api/v3", api.BasePath)
	assert.Empty(t, api.Hosts, "the catch-all site has no host matcher")
	require.Len(t, api.Endpoints, 3)
	for i, want := range []struct{ path, kind string }{
		{"/api/v3/calls", "cursor"}, {"/api/v3/phone_numbers", "cursor"}, {"/api/v3/tickets", "filter"},
	} {
		ep := api.Endpoints[i]
		assert.Equal(t, want.path, ep.Path)
		assert.Equal(t, want.kind, ep.Kind)
		if want.kind == "filter" {
			assert.Zero(t, ep.BackendPageLimit)
			assert.Nil(t, ep.Index)
			assert.Nil(t, ep.Pages)
			continue
		}
		assert.Equal(t, 100, ep.BackendPageLimit)
		assert.Equal(t, "configured", ep.BackendPageLimitSource)
		require.NotNil(t, ep.Index)
		assert.Equal(t, 0, ep.Index.Lists)
		assert.Equal(t, 5000, ep.Index.IndexSize)
		require.NotNil(t, ep.Pages)
		assert.Zero(t, ep.Pages.Served)
		assert.Nil(t, ep.Pages.BackendCallsPerPage, "no ratio before a page")
	}
	assert.Equal(t, 1000, other.Endpoints[0].BackendPageLimit, "the default")
	assert.Equal(t, 100000, other.Endpoints[0].Index.IndexSize, "the default")

	// A walk of /calls with an API key, a page refused, a filter request,
	// on an instance that has seen walks stay (the proof: stay_e2e_test.go).
	caddymodule.TrustWalks()
	const secret = "s3cret-key-0xC0FFEE"
	query := "apikey=" + secret + "&_perPage=30"
	var pages int64
	var lastCursor string
	for next := ""; ; pages++ {
		a := get(t, base+"/api/v3/calls?"+query+next)
		require.Equal(t, http.StatusOK, a.status, string(a.body))
		cursor := a.header.Get("next_page_cursor")
		if cursor == "" {
			pages++
			break
		}
		lastCursor, next = cursor, "&_cursor="+cursor
	}
	require.Equal(t, int64(4), pages, "120 records in pages of 30")
	calls, fetched := counter.counts()
	require.Equal(t, http.StatusBadRequest, get(t, base+"/api/v3/calls?_perPage=0").status)
	require.Equal(t, http.StatusOK, get(t, base+"/api/v3/tickets?apikey="+secret+"&_filters=%7B%7D").status)

	rep, body := read()
	require.Len(t, rep.Gateways, 2)
	ep := rep.Gateways[1].Endpoints[0]
	require.Equal(t, "/api/v3/calls", ep.Path)
	assert.Equal(t, 1, ep.Index.Lists, "one list: /calls with this query")
	assert.Positive(t, ep.Index.Samples)
	assert.LessOrEqual(t, ep.Index.Samples, 5000)
	p := ep.Pages
	assert.Equal(t, pages, p.Served, "served pages; the refused one is not a page")
	assert.Equal(t, int64(120), p.RecordsServed)
	assert.Equal(t, calls, p.BackendCalls, "every backend call the walk made")
	assert.Equal(t, fetched, p.RecordsFetched, "every record the backend sent")
	require.NotNil(t, p.BackendCallsPerPage)
	assert.InDelta(t, float64(calls)/float64(pages), *p.BackendCallsPerPage, 1e-9)
	require.NotNil(t, p.RecordsFetchedPerRecordServed)
	assert.InDelta(t, float64(fetched)/120, *p.RecordsFetchedPerRecordServed, 1e-9)
	ra := rep.Gateways[1].Readahead
	assert.Equal(t, "2s", ra.TTL, "the default")
	assert.Equal(t, int64(64<<20), ra.MemoryLimit, "the default")
	assert.Positive(t, p.FromWindows, "the walk continued: pages from a read-ahead window")
	assert.Equal(t, p.FromWindows, ra.PagesServed, "each a backend call saved")
	assert.Less(t, calls, pages, "fewer backend calls than pages")
	assert.Positive(t, ra.Windows)
	assert.Positive(t, ra.Bytes)
	assert.LessOrEqual(t, ra.Bytes, ra.MemoryLimit)
	assert.Zero(t, rep.Gateways[1].Endpoints[1].Pages.Served, "/phone_numbers had no request")
	assert.Zero(t, rep.Gateways[0].Endpoints[0].Pages.Served, "the other site's /calls had no request")
	for _, hidden := range []string{secret, "apikey", lastCursor, "_perPage", "_filters"} {
		assert.NotContains(t, body, hidden, "the report shows no query, cursor or credential")
	}

	// Only GET, as Caddy's own admin handlers.
	for _, method := range []string{http.MethodPost, http.MethodDelete} {
		req, err := http.NewRequest(method, "http://"+c.Admin+"/helpdesk/endpoints", strings.NewReader("{}"))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		resp, err := gatewaytest.Client.Do(req)
		require.NoError(t, err)
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, "%s: %s", method, msg)
	}

	// A reload replaces everything: one gateway, fresh counters and index,
	// nothing of the old config.
	const after = `
http://%s {
	helpdesk_gateway {
		base_path /api/v3
		cursor_endpoints /calls
		filter_endpoints /tickets
		backend_max_per_page 50
	}
	reverse_proxy {backend}
}
`
	loaded := api.Loaded
	c.Reload(t, fmt.Sprintf(after, port), srv.URL)
	rep, body = read()
	require.Len(t, rep.Gateways, 1, body)
	g := rep.Gateways[0]
	assert.Equal(t, "srv0", g.Server)
	assert.Equal(t, []string{"127.0.0.1" + port}, g.Listen)
	assert.True(t, g.Loaded.After(loaded), "loaded by the reload")
	require.Len(t, g.Endpoints, 2)
	assert.Equal(t, "/api/v3/calls", g.Endpoints[0].Path)
	assert.Equal(t, 50, g.Endpoints[0].BackendPageLimit)
	assert.Zero(t, g.Endpoints[0].Index.Lists, "a new index")
	assert.Zero(t, g.Endpoints[0].Pages.Served, "new counters")
	assert.Equal(t, "/api/v3/tickets", g.Endpoints[1].Path)
	assert.NotContains(t, body, "/other")
	assert.NotContains(t, body, "phone_numbers")

	// The new gateway counts its own pages.
	require.Equal(t, http.StatusOK, get(t, base+"/api/v3/calls?_perPage=10").status)
	rep, _ = read()
	require.Len(t, rep.Gateways, 1)
	assert.Equal(t, int64(1), rep.Gateways[0].Endpoints[0].Pages.Served)
	assert.Equal(t, int64(10), rep.Gateways[0].Endpoints[0].Pages.RecordsServed)
}

// TestAdminEndpointsShowLearnedLimit: on a backend that clamps _perPage
// below backend_max_per_page, the limit one caller's answers proved is
// shown as that caller's, not as the endpoint's; once a second caller's
// answers prove the same, the endpoint shows it as learned. An endpoint
// not yet asked shows the configured one. Issue 30 point 3.
func TestAdminEndpointsShowLearnedLimit(t *testing.T) {
	b := reference.New(reference.Config{Seed: 12, Records: 600, ListMaxPerPage: map[string]int{"calls": 100}})
	c := gatewaytest.StartBehind(t, fmt.Sprintf(gatewaySite, "cursor_endpoints /calls /phone_numbers"), b, gatewaytest.Options{Admin: true})
	report := func() adminReport {
		resp, err := gatewaytest.Client.Get("http://" + c.Admin + "/helpdesk/endpoints")
		require.NoError(t, err)
		defer resp.Body.Close()
		var rep adminReport
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&rep))
		require.Len(t, rep.Gateways, 1)
		require.Len(t, rep.Gateways[0].Endpoints, 3)
		return rep
	}

	a := get(t, c.URL+"/calls?_perPage=300", "X-Api-Key", "one")
	require.Equal(t, http.StatusOK, a.status, string(a.body))
	require.Len(t, a.ids(t), 300)
	eps := report().Gateways[0].Endpoints
	assert.Equal(t, "/calls", eps[0].Path)
	assert.Equal(t, 1000, eps[0].BackendPageLimit, "one caller's limit is not the endpoint's")
	assert.Equal(t, "configured", eps[0].BackendPageLimitSource)
	require.Len(t, eps[0].LearnedPageLimits, 1)
	assert.Equal(t, 100, eps[0].LearnedPageLimits[0].Limit)
	assert.Equal(t, 1, eps[0].LearnedPageLimits[0].Callers)

	a = get(t, c.URL+"/calls?_perPage=300", "X-Api-Key", "two")
	require.Equal(t, http.StatusOK, a.status, string(a.body))
	eps = report().Gateways[0].Endpoints
	assert.Equal(t, 100, eps[0].BackendPageLimit, "two callers agree")
	assert.Equal(t, "learned", eps[0].BackendPageLimitSource)
	require.Len(t, eps[0].LearnedPageLimits, 1)
	assert.Equal(t, 2, eps[0].LearnedPageLimits[0].Callers)
	assert.Equal(t, "/phone_numbers", eps[1].Path)
	assert.Equal(t, 1000, eps[1].BackendPageLimit)
	assert.Equal(t, "configured", eps[1].BackendPageLimitSource)
	assert.Empty(t, eps[1].LearnedPageLimits)
}
