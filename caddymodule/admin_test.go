package caddymodule

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunningGateways checks the admin endpoint's registry: a gateway
// joins when provisioned, and leaves at Cleanup (Caddy unloading its
// config) or when the context it was provisioned with ends, whichever
// comes first, and only once.
func TestRunningGateways(t *testing.T) {
	for _, tc := range []struct {
		name  string
		leave func(g *Gateway, cancel context.CancelFunc)
	}{
		{"cleanup", func(g *Gateway, _ context.CancelFunc) { require.NoError(t, g.Cleanup()) }},
		{"context ends", func(_ *Gateway, cancel context.CancelFunc) { cancel() }},
		{"both", func(g *Gateway, cancel context.CancelFunc) {
			require.NoError(t, g.Cleanup())
			cancel()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
			defer cancel()
			g, other := new(Gateway), new(Gateway)
			require.NoError(t, g.Provision(ctx))
			require.NoError(t, other.Provision(ctx))
			assert.Contains(t, runningGateways(), g)
			assert.Contains(t, runningGateways(), other)

			require.NoError(t, other.Cleanup())
			tc.leave(g, cancel)
			assert.Eventually(t, func() bool {
				running := runningGateways()
				return !slices.Contains(running, g) && !slices.Contains(running, other)
			}, 5*time.Second, time.Millisecond, "both left") // AfterFunc runs in its own goroutine
		})
	}
	t.Run("a failed provision does not join", func(t *testing.T) {
		ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
		defer cancel()
		g := &Gateway{BasePath: "no-slash"}
		require.Error(t, g.Provision(ctx))
		assert.NotContains(t, runningGateways(), g)
	})
}
