package caddymodule

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// TestOneWarningPerLearnedLimit: pages that meet a clamp many times log it
// once per endpoint, with the limit and the Caddyfile line that avoids
// the learning; PageSizeLimit reports it as learned.
func TestOneWarningPerLearnedLimit(t *testing.T) {
	g := provisioned(t)
	core, logs := observer.New(zapcore.DebugLevel)
	g.logger = zap.New(core)
	b := reference.New(reference.Config{Seed: 1, Records: 700,
		ListMaxPerPage: map[string]int{"calls": 100, "tickets/history": 137}})
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		b.ServeHTTP(w, r)
		return nil
	})
	for range 3 {
		for _, path := range []string{"/calls", "/tickets/history"} {
			for _, q := range []string{"_perPage=300", "_perPage=250&_page=2", "_perPage=10&_page=30"} {
				w := httptest.NewRecorder()
				require.NoError(t, g.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path+"?"+q+"&apikey=s3cret", nil), next))
				require.Equal(t, http.StatusOK, w.Code, w.Body.String())
			}
		}
	}
	warnings := logs.FilterLevelExact(zapcore.WarnLevel).All()
	require.Len(t, warnings, 2, "one per endpoint")
	got := map[any]any{}
	for _, w := range warnings {
		f := w.ContextMap()
		got[f["endpoint"]] = f["caddyfile"]
		assert.Contains(t, w.Message, "clamps _perPage")
	}
	assert.Equal(t, map[any]any{"/calls": "backend_max_per_page 100", "/tickets/history": "backend_max_per_page 137"}, got)
	limit, learned := g.endpoints["/calls"].engine.PageSizeLimit()
	assert.Equal(t, 100, limit)
	assert.True(t, learned)
	limit, learned = g.endpoints["/phone_numbers"].engine.PageSizeLimit()
	assert.Equal(t, 1000, limit)
	assert.False(t, learned)
	assertNoSecretLogged(t, logs)
}
