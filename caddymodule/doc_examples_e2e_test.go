package caddymodule_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
	"github.com/helpdesk-gateway/gateway/testdeps"
)

// TestClientDocExamples runs the paging loops of docs/clients.md for curl,
// Python and JavaScript (Node), exactly as the page shows them, against the
// gateway, and checks that each got every record of /calls once, in id
// order. A loop whose interpreter is missing is skipped, with a message
// (fails in CI: testdeps.Missing).
func TestClientDocExamples(t *testing.T) {
	c, b, _ := startGateway(t, reference.Config{Seed: 21, Records: 2000}, "")
	all := strIDs(b.IDs("calls"))
	for _, tc := range []struct {
		example, file string
		command       []string // the file's name is added
		needs         string   // the program that must be there
		ids           func(t *testing.T, out []byte) []string
	}{
		{"walk-curl", "walk.sh", []string{"sh"}, "curl", pageLines},
		{"walk-python", "walk.py", []string{"python3"}, "python3", idLines},
		{"walk-javascript", "walk.mjs", []string{"node"}, "node", idLines},
	} {
		t.Run(tc.example, func(t *testing.T) {
			requireProgram(t, tc.needs)
			if tc.needs == "node" {
				requireNode18(t)
			}
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, tc.file), []byte(docExample(t, tc.example)), 0o644))
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, tc.command[0], append(tc.command[1:], tc.file)...)
			cmd.Dir = dir
			cmd.Env = append(withoutProxies(os.Environ()), "HELPDESK_URL="+c.URL)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			require.NoError(t, err, "stderr:\n%s", stderr.String())
			got := tc.ids(t, out)
			assert.Len(t, got, len(all))
			assert.Equal(t, all, got, "every record once, in id order")
		})
	}
}

// TestClientDocGoExample: the Go loop of docs/clients.md is the text
// Example_walkCalls runs, word for word.
func TestClientDocGoExample(t *testing.T) {
	src, err := os.ReadFile("example_walk_test.go")
	require.NoError(t, err)
	_, code, ok := strings.Cut(string(src), "// docs/clients.md: begin walk-go\n")
	require.True(t, ok)
	code, _, ok = strings.Cut(code, "\n// docs/clients.md: end walk-go\n")
	require.True(t, ok)
	assert.Equal(t, code, docExample(t, "walk-go"))
}

// requireProgram skips the test (fails it in CI) when name is not on PATH
// or does not run.
func requireProgram(t *testing.T, name string) {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		testdeps.Missing(t, "%s is not on PATH: install it to run the documentation's example for it", name)
	}
	if out, err := exec.Command(path, "--version").CombinedOutput(); err != nil {
		testdeps.Missing(t, "%s --version fails (%v: %s): install a working %s to run the documentation's example for it", name, err, bytes.TrimSpace(out), name)
	}
}

// requireNode18 skips the test (fails it in CI) below Node 18, which has
// no global fetch.
func requireNode18(t *testing.T) {
	t.Helper()
	out, err := exec.Command("node", "--version").Output()
	require.NoError(t, err)
	major, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(string(out)), "v"), ".")
	if n, err := strconv.Atoi(major); err != nil || n < 18 {
		testdeps.Missing(t, "node %s has no fetch: Node 18 or later runs the documentation's JavaScript example", bytes.TrimSpace(out))
	}
}

// withoutProxies drops proxy settings from env: the examples talk to the
// gateway on loopback, and curl and Python's urllib honour *_proxy.
func withoutProxies(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasSuffix(strings.ToLower(name), "_proxy") {
			out = append(out, kv)
		}
	}
	return out
}

// idLines reads one id per line.
func idLines(t *testing.T, out []byte) []string {
	t.Helper()
	return strings.Fields(string(out))
}

// pageLines reads one page, a JSON array of records, per line.
func pageLines(t *testing.T, out []byte) []string {
	t.Helper()
	var ids []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var page []struct{ ID json.Number }
		require.NoError(t, json.Unmarshal(sc.Bytes(), &page), sc.Text())
		for _, r := range page {
			ids = append(ids, r.ID.String())
		}
	}
	require.NoError(t, sc.Err())
	return ids
}

// TestMinimalCaddyfileRuns runs the README's minimal Caddyfile, its site
// address and upstream moved to loopback, in front of a backend under
// /api/v3: a cursor page comes back.
func TestMinimalCaddyfileRuns(t *testing.T) {
	site := docExample(t, "minimal-caddyfile")
	for _, r := range []struct{ old, new string }{
		{"api.example.com {", "http://:0 {"},
		{"reverse_proxy helpdesk.internal:8000", "reverse_proxy {backend}"},
	} {
		require.Contains(t, site, r.old)
		site = strings.Replace(site, r.old, r.new, 1)
	}
	b, srv := gatewaytest.Backend(t, reference.Config{Seed: 23, Records: 50, BasePath: "/api/v3"})
	c := gatewaytest.Start(t, site, srv.URL)
	a := get(t, c.URL+"/api/v3/calls?_perPage=5")
	require.Equal(t, http.StatusOK, a.status, string(a.body))
	all := strIDs(b.IDs("calls"))
	assert.Equal(t, all[:5], a.ids(t))
	assert.Equal(t, exactCursor(all[4]), a.header.Get("next_page_cursor"))
}
