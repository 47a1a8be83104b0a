// Package xcaddy_test proves that xcaddy can build a Caddy with this
// module. It lives apart from the module's root package, which it builds,
// so that its own test binary does not link Caddy as well: one Caddy link
// per run.
package xcaddy_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// xcaddyMain is the main.go that `xcaddy build --with <module path>`
// writes: Caddy's command, the standard modules and the plugin's module
// path (here %s, the path go.mod names), blank-imported.
const xcaddyMain = `package main

import (
	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	// plug in Caddy modules here
	_ "github.com/caddyserver/caddy/v2/modules/standard"
	_ "%s"
)

func main() {
	caddycmd.Main()
}
`

// TestXcaddyBuild builds a Caddy the way xcaddy does, offline: a
// temporary module "caddy" holding xcaddy's main.go, requiring this module
// replaced by the checkout (xcaddy's `--with <path>=<dir>`), and checks
// that the binary lists both modules. It takes this module's requirements
// and go.sum, so the build needs nothing beyond the module cache
// (GOPROXY=off), and the build cache of the test's own build (-race when
// the tests run with it). It fails if the module root holds no package, as
// xcaddy then does.
func TestXcaddyBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("links a whole Caddy; skipped in -short mode")
	}
	goBin, err := exec.LookPath("go")
	require.NoError(t, err, "the go command builds the Caddy")
	checkout, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)

	dir := t.TempDir()
	goMod, err := os.ReadFile(filepath.Join(checkout, "go.mod"))
	require.NoError(t, err)
	first, rest, _ := strings.Cut(string(goMod), "\n")
	modulePath, ok := strings.CutPrefix(first, "module ")
	require.True(t, ok, "go.mod starts with its module line: %q", first)
	mod := "module caddy\n" + rest +
		"\nrequire " + modulePath + " v0.0.0\n" +
		"\nreplace " + modulePath + " => " + checkout + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644))
	goSum, err := os.ReadFile(filepath.Join(checkout, "go.sum"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), goSum, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(fmt.Sprintf(xcaddyMain, modulePath)), 0o644))

	ctx := t.Context()
	if deadline, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline.Add(-10*time.Second))
		defer cancel()
	}
	bin := filepath.Join(dir, "caddy")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race") // reuse the packages the tests were built with
	}
	build := exec.CommandContext(ctx, goBin, append(args, ".")...)
	build.Dir = dir
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
	start := time.Now()
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build of xcaddy's main.go:\n%s", out)
	t.Logf("built in %v", time.Since(start).Round(time.Second))

	list, err := exec.CommandContext(ctx, bin, "list-modules").CombinedOutput()
	require.NoError(t, err, "%s", list)
	modules := strings.Fields(string(list))
	for _, m := range []string{"http.handlers.helpdesk_gateway", "http.handlers.helpdesk_legacy", "admin.api.helpdesk"} {
		assert.Contains(t, modules, m)
	}
}
