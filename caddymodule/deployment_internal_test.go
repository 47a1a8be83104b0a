package caddymodule

import (
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/helpdesk-gateway/gateway/redisstore"
)

// TestDeploymentWarnsOnce: a gateway in a subroute, whose reverse_proxy
// takes its upstreams from a dynamic source, reads its fingerprint once
// however often it is asked, and with a store warns once that the
// backend is not known, recommending the deployment option; with the
// option set it says so at info. Its readahead_store_key never reaches
// the fingerprint, its own or a gateway's after another.
func TestDeploymentWarnsOnce(t *testing.T) {
	for _, tc := range []struct {
		name, deployment string
		level            zapcore.Level
	}{
		{"unnamed", "", zapcore.WarnLevel},
		{"named", "production", zapcore.InfoLevel},
	} {
		t.Run(tc.name, func(t *testing.T) {
			core, logs := observer.New(zapcore.DebugLevel)
			store, err := redisstore.New(redisstore.Config{URL: "redis://127.0.0.1:1/0", Secret: []byte("a-secret-key-of-the-store"),
				Encode: func(any) ([]byte, bool) { return nil, false }, Decode: func([]byte) any { return nil }})
			require.NoError(t, err) // never asked anything
			t.Cleanup(func() { _ = store.Close() })
			g := &Gateway{Deployment: tc.deployment, ReadaheadStoreKey: "a-secret-key-of-the-store", logger: zap.New(core),
				store: &sharedStore{Store: store}, deploy: &deploymentState{}}
			proxy := &reverseproxy.Handler{DynamicUpstreams: &reverseproxy.AUpstreams{Name: "backend.internal", Port: "8080"}}
			sub := &caddyhttp.Subroute{Routes: caddyhttp.RouteList{{Handlers: []caddyhttp.MiddlewareHandler{g, proxy}}}}
			g.deploy.app = &caddyhttp.App{Servers: map[string]*caddyhttp.Server{
				"srv0": {Routes: caddyhttp.RouteList{{Handlers: []caddyhttp.MiddlewareHandler{sub}, Terminal: true}}},
			}}
			var d *deployment
			for range 3 {
				d = g.deployment()
			}
			require.Len(t, d.unknown, 1)
			assert.Contains(t, d.unknown[0], "dynamic upstreams")

			entries := logs.All()
			require.Len(t, entries, 1)
			assert.Equal(t, tc.level, entries[0].Level)
			if tc.deployment == "" {
				assert.Contains(t, entries[0].Message, "deployment <name>")
			}
			opts, err := g.optionsJSON()
			require.NoError(t, err)
			assert.NotContains(t, string(opts), "a-secret-key-of-the-store")
		})
	}
}
