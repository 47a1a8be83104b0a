package caddymodule

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dashboardFile is the Grafana dashboard of the gateway's metrics.
const dashboardFile = "../docs/grafana-dashboard.json"

// exportedSeries maps every series name the gateway's collectors export
// to its label names, read from the collectors themselves as
// registerMetrics registers them into a fresh registry: a histogram's
// name stands for itself and its _bucket (with le), _sum and _count.
func exportedSeries(t *testing.T) map[string][]string {
	t.Helper()
	reg := prometheus.NewRegistry()
	require.NoError(t, registerMetrics(reg))
	descRE := regexp.MustCompile(`^Desc\{fqName: "([^"]+)".*variableLabels: \{([^}]*)\}\}$`)
	series := map[string][]string{}
	for _, c := range collectors() {
		require.ErrorAs(t, reg.Register(c), new(prometheus.AlreadyRegisteredError), "registerMetrics registered it")
		descs := make(chan *prometheus.Desc, 8)
		c.Describe(descs)
		close(descs)
		for d := range descs {
			m := descRE.FindStringSubmatch(d.String())
			require.NotNil(t, m, d.String())
			var labels []string
			if m[2] != "" {
				labels = strings.Split(m[2], ",")
			}
			series[m[1]] = labels
			if _, ok := c.(*prometheus.HistogramVec); ok {
				series[m[1]+"_bucket"] = append(slices.Clone(labels), "le")
				series[m[1]+"_sum"] = labels
				series[m[1]+"_count"] = labels
			}
		}
	}
	return series
}

// promqlNames returns the metric names and the label names a PromQL
// expression (with Grafana's $variables) uses. Identifiers inside {...}
// and in the lists of by, without, on, ignoring, group_left and
// group_right are labels; an identifier before "(" is a function; the
// rest, but for the keywords and aggregation operators, are metric names.
func promqlNames(expr string) (metrics, labels []string, err error) {
	isIdent := func(c byte, first bool) bool {
		return c == '_' || c == ':' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || !first && '0' <= c && c <= '9'
	}
	keywords := map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true, "inf": true, "nan": true}
	for _, agg := range []string{"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values", "bottomk", "topk", "quantile", "limitk", "limit_ratio"} {
		keywords[agg] = true // aggregation operators, also before "by (...)"
	}
	labelLists := map[string]bool{"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true}
	inBraces, inList := false, false
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			j := i + 1
			for j < len(expr) && expr[j] != c {
				if expr[j] == '\\' && c != '`' {
					j++
				}
				j++
			}
			if j >= len(expr) {
				return nil, nil, fmt.Errorf("unterminated string at %d", i)
			}
			i = j + 1
		case c == '$': // $var, ${var}, $__rate_interval
			i++
			if i < len(expr) && expr[i] == '{' {
				for i < len(expr) && expr[i] != '}' {
					i++
				}
				i++
				continue
			}
			for i < len(expr) && isIdent(expr[i], false) {
				i++
			}
		case c == '[': // a range or subquery's duration
			j := strings.IndexByte(expr[i:], ']')
			if j < 0 {
				return nil, nil, fmt.Errorf("unterminated [ at %d", i)
			}
			i += j + 1
		case c == '{':
			inBraces, i = true, i+1
		case c == '}':
			inBraces, i = false, i+1
		case c == ')':
			inList, i = false, i+1
		case '0' <= c && c <= '9' || c == '.':
			for i < len(expr) && (isIdent(expr[i], false) || expr[i] == '.') {
				i++
			}
		case isIdent(c, true):
			j := i
			for j < len(expr) && isIdent(expr[j], false) {
				j++
			}
			word := expr[i:j]
			k := j
			for k < len(expr) && expr[k] == ' ' {
				k++
			}
			call := k < len(expr) && expr[k] == '('
			switch {
			case inBraces || inList:
				labels = append(labels, word)
			case labelLists[word]:
				if call {
					inList, j = true, k+1
				}
			case call || keywords[strings.ToLower(word)]:
			default:
				metrics = append(metrics, word)
			}
			i = j
		default:
			i++
		}
	}
	return metrics, labels, nil
}

// checkQuery reports a metric in expr that the gateway does not export,
// or a label none of the expression's metrics has.
func checkQuery(series map[string][]string, expr string) error {
	metrics, labels, err := promqlNames(expr)
	if err != nil {
		return err
	}
	if len(metrics) == 0 {
		return fmt.Errorf("%q names no metric", expr)
	}
	var known []string
	for _, m := range metrics {
		ls, ok := series[m]
		if !ok {
			return fmt.Errorf("%q: the gateway exports no metric %s", expr, m)
		}
		known = append(known, ls...)
	}
	for _, l := range labels {
		if !slices.Contains(known, l) {
			return fmt.Errorf("%q: no metric of the expression has a label %s (they have %v)", expr, l, known)
		}
	}
	return nil
}

// labelValuesRE is Grafana's label_values(<series selector>, <label>).
var labelValuesRE = regexp.MustCompile(`^\s*label_values\((.*),\s*([A-Za-z_]\w*)\s*\)\s*$`)

// dashboardQueries returns every PromQL expression of a dashboard: each
// target's expr, anywhere, and each query variable's query, with
// label_values(selector, label) checked as selector{label=""}.
func dashboardQueries(v any, out *[]string) {
	switch v := v.(type) {
	case map[string]any:
		if e, ok := v["expr"].(string); ok {
			*out = append(*out, e)
		}
		if v["type"] == "query" {
			q, _ := v["query"].(string)
			if m, ok := v["query"].(map[string]any); ok {
				q, _ = m["query"].(string)
			}
			if m := labelValuesRE.FindStringSubmatch(q); m != nil {
				q = m[1] + `{` + m[2] + `!=""}`
			}
			*out = append(*out, q)
		}
		for _, x := range v {
			dashboardQueries(x, out)
		}
	case []any:
		for _, x := range v {
			dashboardQueries(x, out)
		}
	}
}

func TestPromqlNames(t *testing.T) {
	for _, tc := range []struct {
		expr            string
		metrics, labels []string
	}{
		{`helpdesk_gateway_backend_page_limit`, []string{"helpdesk_gateway_backend_page_limit"}, nil},
		{`sum by (endpoint, outcome) (rate(helpdesk_gateway_requests_total{endpoint=~"$endpoint",outcome!="ok"}[$__rate_interval]))`,
			[]string{"helpdesk_gateway_requests_total"}, []string{"endpoint", "outcome", "endpoint", "outcome"}},
		{`histogram_quantile(0.99, sum(rate(a_bucket[5m])) by (le)) / on(endpoint) group_left b offset 1h`,
			[]string{"a_bucket", "b"}, []string{"le", "endpoint"}},
		{`x{l="a}b(c)"} and bool y`, []string{"x", "y"}, []string{"l"}},
		{`max without(instance) (${metric})`, nil, []string{"instance"}},
		{`sum by (endpoint) (rate(m[1m])) / count(n)`, []string{"m", "n"}, []string{"endpoint"}},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			metrics, labels, err := promqlNames(tc.expr)
			require.NoError(t, err)
			assert.Equal(t, tc.metrics, metrics)
			assert.Equal(t, tc.labels, labels)
		})
	}
}

func TestCheckQuery(t *testing.T) {
	series := exportedSeries(t)
	for _, tc := range []struct {
		expr  string
		wrong string // in the error; "" for none
	}{
		{`sum by (endpoint) (rate(helpdesk_gateway_requests_total[5m]))`, ""},
		{`histogram_quantile(0.5, sum by (endpoint, le) (rate(helpdesk_gateway_backend_subrequests_bucket[5m])))`, ""},
		{`rate(helpdesk_gateway_backend_subrequests_sum[5m]) / rate(helpdesk_gateway_backend_subrequests_count[5m])`, ""},
		{`rate(helpdesk_gateway_request_total[5m])`, "no metric helpdesk_gateway_request_total"},
		{`rate(helpdesk_gateway_requests_total_bucket[5m])`, "no metric helpdesk_gateway_requests_total_bucket"},
		{`sum by (reason) (rate(helpdesk_gateway_requests_total[5m]))`, "no metric of the expression has a label reason"},
		{`rate(caddy_http_requests_total[5m])`, "no metric caddy_http_requests_total"},
		{`vector(1)`, "names no metric"},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			err := checkQuery(series, tc.expr)
			if tc.wrong == "" {
				assert.NoError(t, err)
			} else {
				assert.ErrorContains(t, err, tc.wrong)
			}
		})
	}
}

// TestGrafanaDashboard: the dashboard in docs/ is JSON Grafana can import,
// every one of its queries names only metrics (and labels) the gateway
// exports, and every exported metric is on it.
func TestGrafanaDashboard(t *testing.T) {
	raw, err := os.ReadFile(dashboardFile)
	require.NoError(t, err)
	var dash map[string]any
	require.NoError(t, json.Unmarshal(raw, &dash))
	for _, key := range []string{"uid", "title", "panels", "templating", "schemaVersion"} {
		assert.Contains(t, dash, key)
	}
	series := exportedSeries(t)
	var queries []string
	dashboardQueries(dash, &queries)
	require.NotEmpty(t, queries)
	shown := map[string]bool{}
	for _, q := range queries {
		assert.NoError(t, checkQuery(series, q))
		metrics, _, _ := promqlNames(q)
		for _, m := range metrics {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				if base, ok := strings.CutSuffix(m, suffix); ok && series[base] != nil && !strings.HasSuffix(base, "_total") {
					m = base
				}
			}
			shown[m] = true
		}
	}
	var missing []string
	for name, labels := range series {
		if !shown[name] && !slices.Contains(labels, "le") && !strings.HasSuffix(name, "_sum") && !strings.HasSuffix(name, "_count") {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	assert.Empty(t, missing, "exported metrics the dashboard does not show")
}
