// Package xcaddy_test proves that xcaddy builds a Caddy with this module,
// by running xcaddy itself on the command the README documents. It lives
// apart from the module's root package, which it builds, so that its own
// test binary does not link Caddy as well: one Caddy link per run.
package xcaddy_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/testdeps"
)

// xcaddyCommand is the xcaddy the test runs: a pinned release that `go
// install` fetches through the module proxy once (then from the module
// cache), so that xcaddy stays out of this module's go.mod.
const xcaddyCommand = "github.com/caddyserver/xcaddy/cmd/xcaddy@v0.4.5"

// docsPath is the module path the docs' commands name.
const docsPath = "github.com/helpdesk-gateway/gateway"

// TestXcaddyBuild runs the README's "from a checkout" xcaddy command, as
// written, from the checkout's root: xcaddy's whole build (go mod init,
// the replace, go get of Caddy and of this module, go mod tidy, go
// build). It checks that the binary lists the gateway's modules, that the
// checkout's go.mod and go.sum are untouched, and that every xcaddy
// command in README.md and docs/operating.md names the Caddy version
// go.mod requires.
//
// What differs from a user's run is the environment, not the command:
//   - xcaddy's build flags (XCADDY_GO_BUILD_FLAGS, CGO_ENABLED, and -race
//     under -race) are the tests' own, without its -trimpath and
//     -ldflags, so that the build reuses the packages the tests were
//     compiled with rather than compiling Caddy again;
//   - a file:// proxy ahead of GOPROXY holds no version of this module,
//     as a proxy that does not hold it answers (404), so that no proxy is
//     asked for it; other modules come from the module cache, or GOPROXY
//     for what it lacks (GOSUMDB off: go.sum pins them).
//
// Published under another module path (docs/operating.md), the command
// runs with go.mod's path. Where xcaddy or a module cannot be fetched,
// the test skips on a developer's machine and fails in CI (testdeps).
func TestXcaddyBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("links a whole Caddy; skipped in -short mode")
	}
	goBin, err := exec.LookPath("go")
	require.NoError(t, err, "the go command runs xcaddy")
	checkout, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	goMod, err := os.ReadFile(filepath.Join(checkout, "go.mod"))
	require.NoError(t, err)
	goSum, err := os.ReadFile(filepath.Join(checkout, "go.sum"))
	require.NoError(t, err)
	first, _, _ := strings.Cut(string(goMod), "\n")
	modulePath, ok := strings.CutPrefix(first, "module ")
	require.True(t, ok, "go.mod starts with its module line: %q", first)
	caddy := regexp.MustCompile(`(?m)^\s*github\.com/caddyserver/caddy/v2 (v\S+)`).FindStringSubmatch(string(goMod))
	require.NotNil(t, caddy, "go.mod requires Caddy")
	caddyVersion := caddy[1]

	// The docs' commands: the README's from a checkout is the one run.
	var run []string
	for _, doc := range []string{"README.md", filepath.Join("docs", "operating.md")} {
		text, err := os.ReadFile(filepath.Join(checkout, doc))
		require.NoError(t, err)
		for _, line := range strings.Split(string(text), "\n") {
			args := strings.Fields(line)
			if len(args) < 2 || args[0] != "xcaddy" || args[1] != "build" {
				continue
			}
			require.GreaterOrEqual(t, len(args), 3, "%s: %s", doc, line)
			assert.Equal(t, caddyVersion, args[2], "%s: %q builds the Caddy go.mod requires", doc, line)
			for _, a := range args {
				if p, dir, ok := strings.Cut(strings.TrimPrefix(a, "--with="), "="); ok && strings.HasPrefix(p, docsPath) {
					assert.Equal(t, ".", dir, "%s: %q: run from the checkout's root, whatever its folder's name", doc, line)
					if doc == "README.md" && run == nil {
						run = args
					}
				}
			}
		}
	}
	require.NotNil(t, run, "README.md has the xcaddy command to run from a checkout (--with %s=.)", docsPath)
	if modulePath != docsPath {
		t.Logf("go.mod names %s: the docs' %s is replaced by it", modulePath, docsPath)
		for i := range run {
			run[i] = strings.ReplaceAll(run[i], docsPath, modulePath)
		}
	}

	ctx := t.Context()
	if deadline, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline.Add(-10*time.Second))
		defer cancel()
	}
	// xcaddy itself, installed into the test's own folder (go install
	// leaves go.mod alone), through the module proxy unless cached.
	tools := t.TempDir()
	install := exec.CommandContext(ctx, goBin, "install", xcaddyCommand)
	install.Dir = tools
	install.Env = append(os.Environ(), "GOBIN="+tools, "GOWORK=off", "GOTOOLCHAIN=local")
	if out, err := install.CombinedOutput(); err != nil {
		testdeps.Missing(t, "go install %s: %v\n%s(the module proxy, or a module cache holding xcaddy, installs it)", xcaddyCommand, err, out)
	}
	env := append(os.Environ(), "GOWORK=off", "GOTOOLCHAIN=local", "GOSUMDB=off",
		"GOPROXY="+unpublished(t, tools, modulePath)+","+goEnv(t, goBin, "GOPROXY"),
		"XCADDY_WHICH_GO="+goBin, "XCADDY_SETCAP=0", "XCADDY_SUDO=0",
		"XCADDY_GO_BUILD_FLAGS=-buildvcs=false",
		// xcaddy sets CGO_ENABLED=0 unless told 1: as the tests' build.
		"CGO_ENABLED="+goEnv(t, goBin, "CGO_ENABLED"))
	if raceBuild {
		env = append(env, "XCADDY_RACE_DETECTOR=1")
	}

	bin := filepath.Join(t.TempDir(), "caddy")
	start := time.Now()
	build := exec.CommandContext(ctx, filepath.Join(tools, "xcaddy"), append(run[1:], "--output", bin)...)
	build.Dir, build.Env = checkout, env
	out, err := build.CombinedOutput()
	if err != nil && bytes.Contains(out, []byte("module lookup disabled")) {
		testdeps.Missing(t, "%s: the module cache lacks what xcaddy's build needs, and no proxy is set:\n%s", strings.Join(run, " "), out)
	}
	require.NoError(t, err, "%s:\n%s", strings.Join(run, " "), out)
	t.Logf("%s: built in %v", strings.Join(run, " "), time.Since(start).Round(time.Second))

	list, err := exec.CommandContext(ctx, bin, "list-modules").CombinedOutput()
	require.NoError(t, err, "%s", list)
	modules := strings.Fields(string(list))
	for _, m := range []string{"http.handlers.helpdesk_gateway", "http.handlers.helpdesk_legacy", "admin.api.helpdesk"} {
		assert.Contains(t, modules, m)
	}
	for name, before := range map[string][]byte{"go.mod": goMod, "go.sum": goSum} {
		after, err := os.ReadFile(filepath.Join(checkout, name))
		require.NoError(t, err)
		assert.True(t, bytes.Equal(before, after), "xcaddy leaves the checkout's %s as it was", name)
	}
}

// goEnv is the go command's setting of name.
func goEnv(t *testing.T, goBin, name string) string {
	out, err := exec.Command(goBin, "env", name).Output()
	require.NoError(t, err)
	return strings.TrimSpace(string(out))
}

// unpublished returns a file:// module proxy, under dir, that holds no
// version of module: xcaddy's go get then takes the replacement (the
// checkout) without asking the proxies after it, as it does when a proxy
// answers 404 for a module it does not hold. A proxy that answers 403
// instead fails go get.
func unpublished(t *testing.T, dir, module string) string {
	var escaped strings.Builder // the proxy protocol's case encoding
	for _, r := range module {
		if 'A' <= r && r <= 'Z' {
			escaped.WriteString("!" + string(r-'A'+'a'))
		} else {
			escaped.WriteRune(r)
		}
	}
	root := filepath.Join(dir, "proxy")
	versions := filepath.Join(root, filepath.FromSlash(escaped.String()), "@v")
	require.NoError(t, os.MkdirAll(versions, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(versions, "list"), nil, 0o644))
	return "file://" + filepath.ToSlash(root)
}
