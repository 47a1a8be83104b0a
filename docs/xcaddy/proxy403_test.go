package xcaddy_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/testdeps"
)

// proxyLine is the docs' xcaddy command behind a module proxy that
// answers 403 for a module it does not hold: its GOPROXY is the one set,
// then off on any error ("|").
var proxyLine = regexp.MustCompile(`(?m)^GOPROXY="\$\(go env GOPROXY\)\|off" xcaddy build \S+ --with ` + regexp.QuoteMeta(docsPath) + `=\.$`)

// TestXcaddyBehindAProxyThatAnswers403 runs the step of xcaddy's build
// that asks the module proxy for this module (go get of it, replaced by
// the checkout, in a fresh module as xcaddy makes one) behind a proxy on
// 127.0.0.1 that answers 403 for it, as many corporate proxies do for a
// module they do not hold: go falls back to the next source only on a
// 404 or 410, so the docs' plain command fails there. With the docs'
// GOPROXY line (docs/operating.md, Installing) it passes: "|off" falls
// back on any error to no proxy, and a module replaced by a folder needs
// none. The other modules come from the module cache (the proxy answers
// 404 for them), so the test runs offline once the module's dependencies
// are cached; where they are not, it skips (fails in CI: testdeps).
func TestXcaddyBehindAProxyThatAnswers403(t *testing.T) {
	goBin, err := exec.LookPath("go")
	require.NoError(t, err, "the go command runs the build")
	checkout, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	goMod, err := os.ReadFile(filepath.Join(checkout, "go.mod"))
	require.NoError(t, err)
	first, _, _ := strings.Cut(string(goMod), "\n")
	modulePath := strings.TrimPrefix(first, "module ")
	ops, err := os.ReadFile(filepath.Join(checkout, "docs", "operating.md"))
	require.NoError(t, err)
	require.Regexp(t, proxyLine, string(ops), "docs/operating.md gives the xcaddy command for a proxy that answers 403")

	var asked atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(strings.TrimPrefix(r.URL.Path, "/"), modulePath+"/") {
			asked.Add(1)
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		http.NotFound(w, r) // not held: the module cache has it, or nothing does
	}))
	t.Cleanup(proxy.Close)

	goGet := func(goproxy string) ([]byte, error) {
		dir := t.TempDir()
		run := func(args ...string) ([]byte, error) {
			cmd := exec.CommandContext(t.Context(), goBin, args...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "GOWORK=off", "GOTOOLCHAIN=local", "GOSUMDB=off", "GOFLAGS=-mod=mod", "GOPROXY="+goproxy)
			return cmd.CombinedOutput()
		}
		for _, args := range [][]string{{"mod", "init", "caddy"}, {"mod", "edit", "-replace", modulePath + "=" + checkout}} {
			out, err := run(args...)
			require.NoError(t, err, "go %s: %s", strings.Join(args, " "), out)
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nimport _ \""+modulePath+"\"\n\nfunc main() {}\n"), 0o600))
		return run("get", modulePath)
	}

	// As the docs' plain command meets it: the proxy's 403 ends the build.
	out, err := goGet(proxy.URL)
	require.Error(t, err, "%s", out)
	assert.Contains(t, string(out), "403 Forbidden")
	assert.Positive(t, asked.Load(), "the proxy was asked for the module")

	// With the docs' line: $(go env GOPROXY) is the proxy.
	out, err = goGet(proxy.URL + "|off")
	if err != nil && bytes.Contains(out, []byte("module lookup disabled")) && !bytes.Contains(out, []byte(modulePath+"@")) {
		testdeps.Missing(t, "the module cache lacks the module's dependencies (go mod download, once, online):\n%s", out)
	}
	require.NoError(t, err, "%s", out)
}
