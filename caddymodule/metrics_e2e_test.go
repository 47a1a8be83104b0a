package caddymodule_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule"
	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// TestMetricsAtTheAdminEndpoint reads the gateway's metrics from a running
// Caddy after requests of each outcome.
func TestMetricsAtTheAdminEndpoint(t *testing.T) {
	b := reference.New(reference.Config{Seed: 1, Records: 200})
	var broken atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if broken.Load() {
			_, _ = w.Write([]byte("<html>"))
			return
		}
		b.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	c := gatewaytest.Start(t, fmt.Sprintf(gatewaySite, ""), srv.URL, gatewaytest.Options{Admin: true})
	caddymodule.TrustWalks()

	metricsText := func() string {
		resp, err := gatewaytest.Client.Get("http://" + c.Admin + "/metrics")
		require.NoError(t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return string(body)
	}
	before := metricsText()
	ids := strIDs(b.IDs("calls"))
	first := get(t, c.URL+"/calls?_perPage=5")
	require.Equal(t, http.StatusOK, first.status)
	second := get(t, c.URL+"/calls?_perPage=5&_cursor="+first.header.Get("next_page_cursor")) // index hit; the walk continues: a window
	require.Equal(t, http.StatusOK, second.status)
	require.Equal(t, http.StatusOK, get(t, c.URL+"/calls?_perPage=5&_cursor="+second.header.Get("next_page_cursor")).status) // from the window
	windowBytes, _ := metricValue(metricsText(), "\nhelpdesk_gateway_readahead_window_bytes")                                // not its HELP line
	assert.Positive(t, windowBytes)
	require.Equal(t, http.StatusOK, get(t, c.URL+"/calls?_perPage=5&_cursor="+cursorFor(bump(ids[150]))).status) // miss
	require.Equal(t, http.StatusBadRequest, get(t, c.URL+"/calls?_perPage=0").status)
	require.Equal(t, http.StatusBadRequest, get(t, c.URL+"/tickets?_filters="+url.QueryEscape(`[["status","L","x"]]`)).status)
	require.Equal(t, http.StatusOK, get(t, c.URL+"/tickets?_filters="+url.QueryEscape(`{"status":"C"}`)).status)
	broken.Store(true)
	require.Equal(t, http.StatusBadGateway, get(t, c.URL+"/phone_numbers").status)

	after := metricsText()
	// The collectors live for the process, so other tests count too:
	// compare what this test added.
	for metric, want := range map[string]float64{
		`helpdesk_gateway_requests_total{endpoint="/calls",outcome="ok"}`:                      4,
		`helpdesk_gateway_readahead_pages_total{endpoint="/calls"}`:                            1,
		`helpdesk_gateway_requests_total{endpoint="/calls",outcome="client_error"}`:            1,
		`helpdesk_gateway_requests_total{endpoint="/tickets",outcome="client_error"}`:          1,
		`helpdesk_gateway_requests_total{endpoint="/tickets",outcome="ok"}`:                    1,
		`helpdesk_gateway_requests_total{endpoint="/phone_numbers",outcome="unusable_answer"}`: 1,
		`helpdesk_gateway_position_index_total{endpoint="/calls",event="hit"}`:                 1,
		`helpdesk_gateway_position_index_total{endpoint="/calls",event="miss"}`:                1,
		`helpdesk_gateway_filter_rejections_total{reason="operator"}`:                          1,
		`helpdesk_gateway_backend_unusable_answers_total{endpoint="/phone_numbers"}`:           1,
		`helpdesk_gateway_backend_subrequests_count{endpoint="/calls"}`:                        4,
	} {
		got, ok := metricValue(after, metric)
		if !assert.True(t, ok, "%s missing", metric) {
			continue
		}
		was, _ := metricValue(before, metric)
		assert.Equal(t, want, got-was, metric)
	}
	// The first page and the index hit cost one call each, the page from
	// the window none; the miss one call or more, as the density of the
	// ids seen places it.
	const oneCall = `helpdesk_gateway_backend_subrequests_bucket{endpoint="/calls",le="1"}`
	got, _ := metricValue(after, oneCall)
	was, _ := metricValue(before, oneCall)
	assert.GreaterOrEqual(t, got-was, 3.0, oneCall)
	assert.LessOrEqual(t, got-was, 4.0, oneCall)
}

// metricValue reads one sample from Prometheus text; absent counts as 0.
func metricValue(text, metric string) (float64, bool) {
	m := regexp.MustCompile(regexp.QuoteMeta(metric) + ` (\S+)`).FindStringSubmatch(text)
	if m == nil {
		return 0, false
	}
	v, err := strconv.ParseFloat(m[1], 64)
	return v, err == nil
}

// TestRelocationMetricAtTheAdminEndpoint makes the position index stale
// by deleting records before a learned position, then reads the
// relocation count from a running Caddy.
func TestRelocationMetricAtTheAdminEndpoint(t *testing.T) {
	b := reference.New(reference.Config{Seed: 1, Records: 300})
	c := gatewaytest.StartBehind(t, fmt.Sprintf(gatewaySite, ""), b, gatewaytest.Options{Admin: true})
	const metric = `helpdesk_gateway_position_index_total{endpoint="/calls",event="relocation"}`
	read := func() float64 {
		resp, err := gatewaytest.Client.Get("http://" + c.Admin + "/metrics")
		require.NoError(t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		v, _ := metricValue(string(body), metric)
		return v
	}
	ids := strIDs(b.IDs("calls"))
	page := "/calls?_perPage=10&_cursor=" + cursorFor(ids[199])
	require.Equal(t, http.StatusOK, get(t, c.URL+page).status)
	before := read()
	for _, id := range b.IDs("calls")[10:70] {
		require.True(t, b.Delete("calls", id))
	}
	a := get(t, c.URL+page)
	require.Equal(t, http.StatusOK, a.status)
	assert.Equal(t, ids[200:210], a.ids(t), "the page is right after the relocation")
	assert.Positive(t, read()-before)
}
