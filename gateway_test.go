package gateway

import (
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestModulesRegistered: `xcaddy build --with` the module path gets the
// gateway, its admin endpoint and the reference backend, as
// docs/xcaddy's build test lists them.
func TestModulesRegistered(t *testing.T) {
	for _, id := range []string{"http.handlers.helpdesk_gateway", "http.handlers.helpdesk_legacy", "admin.api.helpdesk"} {
		info, err := caddy.GetModule(id)
		require.NoError(t, err, id)
		assert.NotNil(t, info.New(), id)
	}
}
