package caddymodule

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// TestLearnedLimitWarnings: pages that meet a clamp many times log it
// once per endpoint as one caller's, with no advice; the gauge stays at
// backend_max_per_page. When a second caller's answers prove the same
// limit, the callers agree: one more warning per endpoint names the
// Caddyfile line that avoids the learning, and the gauge shows the
// limit. Issue 30 point 3.
func TestLearnedLimitWarnings(t *testing.T) {
	g := provisioned(t)
	core, logs := observer.New(zapcore.DebugLevel)
	g.logger = zap.New(core)
	b := reference.New(reference.Config{Seed: 1, Records: 700,
		ListMaxPerPage: map[string]int{"calls": 100, "tickets/history": 137}})
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		b.ServeHTTP(w, r)
		return nil
	})
	walk := func(key, params string) {
		for range 3 {
			for _, path := range []string{"/calls", "/tickets/history"} {
				for _, q := range []string{"_perPage=300", "_perPage=250&_page=2", "_perPage=10&_page=30"} {
					w := httptest.NewRecorder()
					r := httptest.NewRequest(http.MethodGet, path+"?"+q+"&apikey=s3cret"+params, nil)
					r.Header.Set("X-Api-Key", key)
					require.NoError(t, g.ServeHTTP(w, r, next))
					require.Equal(t, http.StatusOK, w.Code, w.Body.String())
				}
			}
		}
	}
	gauge := func(endpoint string) float64 {
		reg := prometheus.NewRegistry()
		require.NoError(t, reg.Register(metrics.pageLimit))
		families, err := reg.Gather()
		require.NoError(t, err)
		for _, f := range families {
			for _, m := range f.GetMetric() {
				if m.GetLabel()[0].GetValue() == endpoint {
					return m.GetGauge().GetValue()
				}
			}
		}
		return -1
	}

	walk("one", "")
	warnings := logs.FilterLevelExact(zapcore.WarnLevel).All()
	require.Len(t, warnings, 2, "one per endpoint")
	for _, w := range warnings {
		assert.Contains(t, w.Message, "clamps _perPage for one caller")
		assert.NotContains(t, w.ContextMap(), "caddyfile", "no advice from one caller")
	}
	assert.Equal(t, 1000.0, gauge("/calls"), "one caller's limit is not the endpoint's")
	assert.Equal(t, 1000.0, gauge("/tickets/history"))

	// A second caller with the same client parameters: the limit may be
	// what those parameters ask of the backend (a maxrows=30 both send),
	// so it is still not the endpoint's.
	walk("two", "")
	walk("one", "")
	assert.Len(t, logs.FilterLevelExact(zapcore.WarnLevel).All(), 2, "no advice from callers that share their parameters")
	assert.Equal(t, 1000.0, gauge("/calls"), "the same parameters' limit is not the endpoint's")

	walk("three", "&lang=de")
	warnings = logs.FilterLevelExact(zapcore.WarnLevel).All()[2:]
	require.Len(t, warnings, 2, "one more per endpoint")
	got := map[any]any{}
	for _, w := range warnings {
		f := w.ContextMap()
		got[f["endpoint"]] = f["caddyfile"]
		assert.Contains(t, w.Message, "callers agree")
		assert.Equal(t, int64(3), f["callers"])
	}
	assert.Equal(t, map[any]any{"/calls": "backend_max_per_page 100", "/tickets/history": "backend_max_per_page 137"}, got)
	assert.Equal(t, 100.0, gauge("/calls"))
	assert.Equal(t, 137.0, gauge("/tickets/history"))
	assert.Equal(t, 1000.0, gauge("/phone_numbers"))
	assertNoSecretLogged(t, logs)
}
