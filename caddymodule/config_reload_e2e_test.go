package caddymodule_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
)

// TestReloadRefusesABadConfig is `caddy reload` (a POST /load) of
// configs the gateway refuses, issue 41's among them: each answer is a
// 400 naming the option (with its line when the Caddyfile gives it),
// never a crash (the client read EOF), and the running config keeps
// serving.
func TestReloadRefusesABadConfig(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "[]")
	}))
	t.Cleanup(backend.Close)
	site := func(options string) string {
		return "http://:0 {\n\thelpdesk_gateway {\n\t\t" + options + "\n\t}\n\treverse_proxy {backend}\n}\n"
	}
	c := gatewaytest.Start(t, site("cursor_endpoints /calls"), backend.URL, gatewaytest.Options{Admin: true})
	t.Setenv("HELPDESK_RELOAD_TEST_SHORT", "short")
	for _, tc := range []struct{ options, want string }{
		{"readahead_store redis://127.0.0.1:1/0\n\t\treadahead_store_key {env.HELPDESK_RELOAD_TEST_UNSET}",
			"readahead_store_key: 0 bytes once placeholders are replaced (HELPDESK_RELOAD_TEST_UNSET is not set in Caddy's environment)"},
		{"readahead_store redis://127.0.0.1:1/0\n\t\treadahead_store_key {env.HELPDESK_RELOAD_TEST_SHORT}",
			"readahead_store_key: 5 bytes once placeholders are replaced; at least 16 are needed"},
		{"readahead_store {env.HELPDESK_RELOAD_TEST_UNSET}\n\t\treadahead_store_key {env.HELPDESK_RELOAD_TEST_SHORT}",
			"readahead_store \"{env.HELPDESK_RELOAD_TEST_UNSET}\": empty once its placeholders are replaced"},
		{"readahead_store_key 0123456789abcdef-shared-secret", "readahead_store_key: set without readahead_store, so nothing would use it; set readahead_store too (each instance then shares its walks), or remove readahead_store_key, at Caddyfile:7"},
		{"readahead_ttl 2h", "readahead_ttl: 2h0m0s is above 1h0m0s"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			text := "{\n\tadmin " + c.Admin + "\n\tauto_https off\n}\n" +
				strings.ReplaceAll(site(tc.options), "{backend}", strings.TrimPrefix(backend.URL, "http://"))
			req, err := http.NewRequest(http.MethodPost, "http://"+c.Admin+"/load", strings.NewReader(text))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "text/caddyfile")
			resp, err := gatewaytest.Client.Do(req)
			require.NoError(t, err, "an answer, not a crash")
			defer resp.Body.Close()
			var answer struct{ Error string }
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&answer))
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode, answer.Error)
			assert.Contains(t, answer.Error, tc.want)
		})
	}
	resp, err := gatewaytest.Client.Get(c.URL + "/calls")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the running config serves on")
}
