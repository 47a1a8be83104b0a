package caddymodule_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// TestDebugLogKeepsKeysOut runs Caddy at debug level, as
// docs/operating.md ("Debug lines") shows, and walks two pages with an
// API key in the query, another in X-Api-Key and a token in
// Authorization. Caddy's own reverse_proxy debug line ("upstream
// roundtrip") logs the backend request's URI and headers: without a
// filter it holds the query key and X-Api-Key (Caddy hides only
// Authorization and cookies); with the page's filter, or with debug on
// for the gateway's logger alone, none of them. The gateway's own
// "cursor page" lines are there each time.
func TestDebugLogKeepsKeysOut(t *testing.T) {
	srv := httptest.NewServer(reference.New(reference.Config{Seed: 1, Records: 50}))
	t.Cleanup(srv.Close)
	// The page's global options block, as a named log (the harness has
	// the default one) writing to a file.
	filtered := docExample(t, "debug-log-filter")
	filtered = strings.TrimSpace(filtered)
	filtered = strings.TrimSuffix(strings.TrimPrefix(filtered, "{"), "}")
	onlyGateway := docExample(t, "debug-log-gateway")
	for _, tc := range []struct {
		name      string
		log       string // a global log block named debuglog
		roundtrip bool   // reverse_proxy's debug line is logged
		leaks     []string
	}{
		{"debug, no filter", "log debuglog {\n\t\tlevel DEBUG\n\t}", true, []string{"query-key-1", "header-key-2"}},
		{"debug, the page's filter", strings.Replace(filtered, "log {", "log debuglog {", 1), true, nil},
		{"debug for the gateway only", strings.Replace(onlyGateway, "log helpdesk {", "log debuglog {", 1), false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Contains(t, tc.log, "log debuglog {")
			file := filepath.Join(t.TempDir(), "debug.log")
			global := strings.Replace(tc.log, "log debuglog {", "log debuglog {\n\t\toutput file "+file, 1)
			c := gatewaytest.Start(t, fmt.Sprintf(gatewaySite, ""), srv.URL, gatewaytest.Options{Global: global})
			headers := []string{"X-Api-Key", "header-key-2", "Authorization", "Bearer auth-token-3"}
			first := get(t, c.URL+"/calls?_perPage=5&apikey=query-key-1", headers...)
			require.Equal(t, http.StatusOK, first.status)
			next := get(t, c.URL+"/calls?_perPage=5&apikey=query-key-1&_cursor="+first.header.Get("next_page_cursor"), headers...)
			require.Equal(t, http.StatusOK, next.status)
			c.Stop(t) // the log is complete

			raw, err := os.ReadFile(file)
			require.NoError(t, err)
			log := string(raw)
			assert.Equal(t, 2, strings.Count(log, `"msg":"cursor page"`), "the gateway's debug line, one per request")
			assert.Equal(t, tc.roundtrip, strings.Contains(log, `"msg":"upstream roundtrip"`), "reverse_proxy's debug line")
			for _, secret := range []string{"query-key-1", "header-key-2", "auth-token-3"} {
				assert.Equal(t, strings.Contains(strings.Join(tc.leaks, " "), secret), strings.Contains(log, secret), secret)
			}
		})
	}
}
