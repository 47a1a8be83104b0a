package caddymodule_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// documentedMetrics reads the metrics table of docs/metrics.md
// ("Metrics"): each metric's name, prefixed, and its labels.
func documentedMetrics(t *testing.T) map[string][]string {
	t.Helper()
	raw, err := os.ReadFile("../docs/metrics.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(raw), "\n## Metrics\n")
	require.True(t, ok)
	section, _, _ = strings.Cut(section, "\n## ")
	row := regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| *([a-z_, ]*?) *\\|")
	out := map[string][]string{}
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		var labels []string
		for _, l := range strings.Split(m[2], ",") {
			if l = strings.TrimSpace(l); l != "" {
				labels = append(labels, l)
			}
		}
		sort.Strings(labels)
		out["helpdesk_gateway_"+m[1]] = labels
	}
	require.NotEmpty(t, out, "the metrics table of docs/metrics.md")
	return out
}

// scrapedSeries reads Prometheus text: each sample of a helpdesk_gateway_
// metric, by its name with labels as written, and its value.
func scrapedSeries(text string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "helpdesk_gateway_") {
			i := strings.LastIndexByte(line, ' ')
			out[line[:i]] = line[i+1:]
		}
	}
	return out
}

// pendingMetrics are named by the pages ahead of their code (none now).
// Once exported, they are checked as every other (and must be in the
// table).
var pendingMetrics = map[string]bool{}

var seriesRE = regexp.MustCompile(`^([a-z_]+)(?:\{(.*)\})?$`)

// TestDocumentedMetricsAtFirstScrape scrapes the admin endpoint's
// /metrics of a Caddy that has served nothing, with no metrics global
// option: every metric docs/metrics.md lists is there with the labels
// it lists, the gateway exports no metric the page leaves out, and every
// counter of the gateway's endpoints (a base_path no other test uses, so
// no other test counted in them) is there at 0: the ones the rollout
// checklist says stay at 0 among them.
func TestDocumentedMetricsAtFirstScrape(t *testing.T) {
	srv := httptest.NewServer(reference.New(reference.Config{Seed: 1, Records: 10}))
	t.Cleanup(srv.Close)
	const base = "/first-scrape"
	c := gatewaytest.Start(t, fmt.Sprintf(gatewaySite, "base_path "+base), srv.URL, gatewaytest.Options{Admin: true})
	resp, err := gatewaytest.Client.Get("http://" + c.Admin + "/metrics")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	series := scrapedSeries(string(body))

	documented := documentedMetrics(t)
	exported := map[string][]string{}
	for s := range series {
		m := seriesRE.FindStringSubmatch(s)
		require.NotNil(t, m, s)
		name := m[1]
		var labels []string
		for _, kv := range regexp.MustCompile(`([a-z_]+)="`).FindAllStringSubmatch(m[2], -1) {
			if kv[1] != "le" {
				labels = append(labels, kv[1])
			}
		}
		sort.Strings(labels)
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if b, ok := strings.CutSuffix(name, suffix); ok && !strings.HasSuffix(name, "_total") {
				name = b
			}
		}
		exported[name] = labels
	}
	for name, labels := range documented {
		got, ok := exported[name]
		if assert.True(t, ok, "%s is documented but not at the first scrape", name) {
			assert.Equal(t, labels, got, "%s: the labels docs/metrics.md lists", name)
		}
	}
	for name := range exported {
		_, ok := documented[name]
		assert.True(t, ok, "%s is exported but not in docs/metrics.md's table", name)
	}

	// Every metric the pages name anywhere, in the text too.
	pages, err := filepath.Glob("../docs/*.md")
	require.NoError(t, err)
	named := regexp.MustCompile(`helpdesk_gateway_[a-z_]*[a-z]`)
	for _, page := range append(pages, "../README.md", "../SECURITY.md") {
		raw, err := os.ReadFile(page)
		require.NoError(t, err)
		for _, name := range named.FindAllString(string(raw), -1) {
			if pendingMetrics[name] {
				continue
			}
			_, ok := exported[name]
			assert.True(t, ok, "%s names %s, which the gateway does not export", page, name)
		}
	}

	// The counters every cursor endpoint has at 0 from the start: every
	// outcome, every index event, unusable answers and keyset misreads.
	for _, ep := range []string{"/calls", "/grid/reports/time", "/phone_numbers", "/tickets/history"} {
		path := base + ep
		var want []string
		for _, o := range []string{"ok", "client_error", "backend_status", "unusable_answer", "unavailable", "subrequest_limit", "error"} {
			want = append(want, fmt.Sprintf(`helpdesk_gateway_requests_total{endpoint=%q,outcome=%q}`, path, o))
		}
		for _, e := range []string{"hit", "miss", "relocation"} {
			want = append(want, fmt.Sprintf(`helpdesk_gateway_position_index_total{endpoint=%q,event=%q}`, path, e))
		}
		for _, m := range []string{"backend_unusable_answers_total", "backend_keyset_misreads_total", "readahead_pages_total", "backend_subrequests_count"} {
			want = append(want, fmt.Sprintf(`helpdesk_gateway_%s{endpoint=%q}`, m, path))
		}
		for _, s := range want {
			assert.Equal(t, "0", series[s], s)
		}
	}
	for _, s := range []string{
		`helpdesk_gateway_requests_total{endpoint="/first-scrape/tickets",outcome="ok"}`,
		`helpdesk_gateway_requests_total{endpoint="/first-scrape/tickets",outcome="client_error"}`,
	} {
		assert.Equal(t, "0", series[s], s)
	}
	// The counters of no endpoint are the process's: present from the
	// start, whatever other tests counted in them.
	for label, values := range map[string][]string{
		`helpdesk_gateway_filter_rejections_total{reason=%q}`:         {"query", "repeated", "syntax", "too_long", "too_many", "unknown_parameter", "not_filterable", "operator", "value"},
		`helpdesk_gateway_readahead_windows_dropped_total{reason=%q}`: {"evicted", "expired"},
		`helpdesk_gateway_readahead_store_errors_total{op=%q}`:        {"cut", "walked", "ahead", "check", "peers"},
	} {
		for _, v := range values {
			_, ok := series[fmt.Sprintf(label, v)]
			assert.True(t, ok, label, v)
		}
	}
}
