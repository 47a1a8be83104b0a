package caddymodule_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDocConfigExamplesValidate is `caddy validate` on the configurations
// docs/ shows for pasting: the dialect sites and option blocks of
// docs/backends.md, the sticky balancer and the JSON route of
// docs/operating.md, and the shared store of docs/shared-store.md (with
// its URL and key in the environment, as it reads them). Each adapts (warning at most that its columns are
// aligned, which caddy fmt would undo) and every module in it
// provisions, so an operator who copies one gets a config Caddy loads. A
// block of gateway options alone is tried inside a site, as it is used.
func TestDocConfigExamplesValidate(t *testing.T) {
	site := func(block string) string {
		return "http://:0 {\n" + block + "\treverse_proxy 127.0.0.1:9\n}\n"
	}
	t.Setenv("HELPDESK_STORE_URL", "rediss://hdgw:long-random-password@127.0.0.1:6380/0")
	t.Setenv("HELPDESK_STORE_KEY", "0123456789abcdef0123456789abcdef")
	for _, tc := range []struct {
		example string
		wrap    func(string) string
	}{
		{"minimal-caddyfile", nil},
		{"dialect-liveagent", nil},
		{"dialect-page-per-page", nil},
		{"dialect-offset-limit", nil},
		{"keyset", site},
		{"drop-envelope-members", site},
		{"sticky-instances", nil},
		{"shared-store", site},
	} {
		t.Run(tc.example, func(t *testing.T) {
			text := docExample(t, tc.example)
			if tc.wrap != nil {
				text = tc.wrap(text)
			}
			cfg, warnings, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(text), map[string]any{"filename": tc.example})
			require.NoError(t, err, text)
			for _, w := range warnings {
				// The docs align option values in columns, as caddy fmt
				// would not; that is the only warning allowed.
				assert.Contains(t, w.Message, "not formatted", "no warning but the format's")
			}
			var config caddy.Config
			require.NoError(t, json.Unmarshal(cfg, &config))
			require.NoError(t, caddy.Validate(&config), text)
		})
	}

	t.Run("json-route", func(t *testing.T) {
		route := docExample(t, "json-route")
		var decoded map[string]any
		require.NoError(t, json.Unmarshal([]byte(route), &decoded), "the block is JSON")
		text := fmt.Sprintf(`{"apps": {"http": {"servers": {"srv0": {"listen": [":0"], "routes": [%s]}}}}}`, route)
		var config caddy.Config
		dec := json.NewDecoder(strings.NewReader(text))
		dec.DisallowUnknownFields()
		require.NoError(t, dec.Decode(&config))
		require.NoError(t, caddy.Validate(&config))
	})
}
