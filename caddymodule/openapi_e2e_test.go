package caddymodule_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
	"github.com/helpdesk-gateway/gateway/openapi/contract"
)

const openAPISite = `
http://:0 {
	helpdesk_gateway {
		base_path /api/v3
		max_per_page 200
		status_codes C L R
		openapi_path /openapi.json
	}
	reverse_proxy {backend}
}
`

// TestOpenAPIPathServesTheDocument: openapi_path serves, for GET and HEAD,
// the document `caddy helpdesk openapi` prints for the same Caddyfile, and
// the document follows the config.
func TestOpenAPIPathServesTheDocument(t *testing.T) {
	_, srv := gatewaytest.Backend(t, reference.Config{Seed: 1, Records: 50, BasePath: "/api/v3"})
	c := gatewaytest.Start(t, openAPISite, srv.URL)

	a := get(t, c.URL+"/openapi.json")
	require.Equal(t, http.StatusOK, a.status, string(a.body))
	assert.Equal(t, "application/json", a.header.Get("Content-Type"))
	assert.Equal(t, "nosniff", a.header.Get("X-Content-Type-Options"))
	_, err := contract.Load(a.body)
	require.NoError(t, err, "the served document is valid OpenAPI")

	file := filepath.Join(t.TempDir(), "Caddyfile")
	require.NoError(t, os.WriteFile(file, []byte(strings.ReplaceAll(openAPISite, "{backend}", strings.TrimPrefix(srv.URL, "http://"))), 0o600))
	printed, stderr, err := runHelpdesk(t, "openapi", "--config", file)
	require.NoError(t, err, stderr)
	assert.Equal(t, printed, string(a.body), "the command prints what the gateway serves")

	var doc struct {
		OpenAPI string
		Paths   map[string]json.RawMessage
	}
	require.NoError(t, json.Unmarshal(a.body, &doc))
	assert.Equal(t, "3.1.0", doc.OpenAPI)
	for _, p := range []string{"/api/v3/calls", "/api/v3/grid/reports/time", "/api/v3/phone_numbers", "/api/v3/tickets/history", "/api/v3/tickets"} {
		assert.Contains(t, doc.Paths, p)
	}
	assert.Contains(t, string(a.body), `"maximum": 200`)
	assert.Contains(t, string(a.body), `"C",`, "configured status codes are listed")

	req, err := http.NewRequest(http.MethodHead, c.URL+"/openapi.json", nil)
	require.NoError(t, err)
	resp, err := gatewaytest.Client.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Empty(t, body)
	assert.Equal(t, a.header.Get("Content-Length"), resp.Header.Get("Content-Length"))

	resp, err = gatewaytest.Client.Post(c.URL+"/openapi.json", "application/json", strings.NewReader("{}"))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "other methods go to the backend")

	// Off by default: the path is the backend's.
	c.Stop(t)
	c = gatewaytest.Start(t, strings.Replace(openAPISite, "openapi_path /openapi.json", "", 1), srv.URL)
	assert.Equal(t, http.StatusNotFound, get(t, c.URL+"/openapi.json").status)
}

// TestContractCheckCatchesStrayAnswers: the e2e tests' client checks every
// answer of a gateway site against its document, so an answer that strays
// fails the request. Here `respond` answers in the gateway's place.
func TestContractCheckCatchesStrayAnswers(t *testing.T) {
	c := gatewaytest.Start(t, `
http://:0 {
	route {
		header Content-Type application/json
		respond /calls "not a page" 200
		respond /tickets "[]" 200
		helpdesk_gateway
	}
}
`, "")
	_, err := gatewaytest.Client.Get(c.URL + "/calls?_perPage=2")
	require.ErrorContains(t, err, "OpenAPI contract: GET /calls?_perPage=2: the 200 answer strays from the document")

	_, err = gatewaytest.Client.Get(c.URL + "/tickets?_filters=" + url.QueryEscape(`[["status","L","open"]]`))
	require.ErrorContains(t, err, "the document finds the request invalid")

	resp, err := gatewaytest.Client.Get(c.URL + "/tickets?_filters=" + url.QueryEscape(`[["status","IN","open"]]`))
	require.NoError(t, err, "a valid request answered as documented passes")
	resp.Body.Close()
}

// TestOpenAPICommand: `caddy helpdesk openapi` over Caddyfiles with none,
// one and several gateways.
func TestOpenAPICommand(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
		return path
	}
	one := write("one", ":8080 {\n\thelpdesk_gateway {\n\t\tcursor_endpoints /calls\n\t\tfilter_endpoints /tickets\n\t}\n\treverse_proxy 127.0.0.1:9080\n}\n")
	alike := write("alike", ":8080 {\n\thelpdesk_gateway\n\treverse_proxy 127.0.0.1:9080\n}\n:8081 {\n\thelpdesk_gateway\n\treverse_proxy 127.0.0.1:9080\n}\n")
	differ := write("differ", ":8080 {\n\thelpdesk_gateway\n\treverse_proxy 127.0.0.1:9080\n}\n:8081 {\n\thelpdesk_gateway {\n\t\tmax_per_page 50\n\t}\n\treverse_proxy 127.0.0.1:9080\n}\n")
	none := write("none", ":8080 {\n\treverse_proxy 127.0.0.1:9080\n}\n")
	bad := write("bad", ":8080 {\n\thelpdesk_gateway {\n\t\tmax_per_page many\n\t}\n}\n")
	for _, tc := range []struct {
		name    string
		args    []string
		paths   []string // in the document
		failure string
	}{
		{"one gateway", []string{"--config", one}, []string{"/calls", "/tickets"}, ""},
		{"several alike", []string{"--config", alike}, []string{"/calls", "/tickets", "/phone_numbers"}, ""},
		{"several that differ", []string{"--config", differ}, nil, "both serve /calls with different settings; describe one at a time; pick one server with --server (srv0, srv1)"},
		{"one server of several", []string{"--config", differ, "--server", "srv1"}, []string{"/calls"}, ""},
		{"a server without gateway", []string{"--config", differ, "--server", "srv9"}, nil, `server "srv9" has no helpdesk_gateway handler; servers with one: srv0, srv1`},
		{"no gateway", []string{"--config", none}, nil, "the config has no helpdesk_gateway handler"},
		{"a bad Caddyfile", []string{"--config", bad}, nil, `max_per_page: "many" is not a whole number`},
		{"a missing file", []string{"--config", filepath.Join(dir, "nope")}, nil, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, err := runHelpdesk(t, append([]string{"openapi"}, tc.args...)...)
			if tc.failure != "" {
				require.Error(t, err)
				assert.Contains(t, stderr+err.Error(), tc.failure)
				assert.Empty(t, stdout)
				return
			}
			require.NoError(t, err, stderr)
			_, err = contract.Load([]byte(stdout))
			require.NoError(t, err)
			var doc struct{ Paths map[string]any }
			require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
			for _, p := range tc.paths {
				assert.Contains(t, doc.Paths, p)
			}
		})
	}
}
