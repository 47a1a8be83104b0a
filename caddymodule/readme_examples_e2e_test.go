package caddymodule_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// TestReadmeClientExamples runs the README's paging loops for curl, Python
// and JavaScript (Node), exactly as the README shows them, against the
// gateway, and checks that each got every record of /calls once, in id
// order. A loop whose interpreter is missing is skipped, with a message.
func TestReadmeClientExamples(t *testing.T) {
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
			require.NoError(t, os.WriteFile(filepath.Join(dir, tc.file), []byte(readmeExample(t, tc.example)), 0o644))
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

// TestReadmeGoExample: the README's Go loop is the text Example_walkCalls
// runs, word for word.
func TestReadmeGoExample(t *testing.T) {
	src, err := os.ReadFile("example_walk_test.go")
	require.NoError(t, err)
	_, code, ok := strings.Cut(string(src), "// README: begin walk-go\n")
	require.True(t, ok)
	code, _, ok = strings.Cut(code, "\n// README: end walk-go\n")
	require.True(t, ok)
	assert.Equal(t, code, readmeExample(t, "walk-go"))
}

// requireProgram skips the test when name is not on PATH or does not run.
func requireProgram(t *testing.T, name string) {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not on PATH: install it to run the README's example for it", name)
	}
	if out, err := exec.Command(path, "--version").CombinedOutput(); err != nil {
		t.Skipf("%s --version fails (%v: %s): install a working %s to run the README's example for it", name, err, bytes.TrimSpace(out), name)
	}
}

// requireNode18 skips the test below Node 18, which has no global fetch.
func requireNode18(t *testing.T) {
	t.Helper()
	out, err := exec.Command("node", "--version").Output()
	require.NoError(t, err)
	major, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(string(out)), "v"), ".")
	if n, err := strconv.Atoi(major); err != nil || n < 18 {
		t.Skipf("node %s has no fetch: Node 18 or later runs the README's JavaScript example", bytes.TrimSpace(out))
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
