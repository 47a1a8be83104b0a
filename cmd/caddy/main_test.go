package main

import (
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestModulesRegistered: this Caddy has what the default Caddyfile runs,
// the gateway in front of the reference backend, and the admin endpoint.
func TestModulesRegistered(t *testing.T) {
	for _, id := range []string{"http.handlers.helpdesk_gateway", "http.handlers.helpdesk_legacy", "admin.api.helpdesk", "http.handlers.reverse_proxy"} {
		info, err := caddy.GetModule(id)
		require.NoError(t, err, id)
		assert.NotNil(t, info.New(), id)
	}
}
