package caddymodule_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
)

// TestDefaultCaddyfileRuns runs the repository's default Caddyfile, as
// `go run ./cmd/caddy run` does, with its two ports moved to free loopback
// ports, and follows the README's curl session: the first page of /calls,
// then next_page_cursor, then a cursor built by hand with printf | base64;
// then runs that session's block with sh and curl, as the README shows it.
func TestDefaultCaddyfileRuns(t *testing.T) {
	text, err := os.ReadFile("../Caddyfile")
	require.NoError(t, err)
	// The harness brings its own global options (loopback, no admin);
	// the default file's ones must go, and must be only what we expect.
	global := regexp.MustCompile(`(?s)^(?:\s*#[^\n]*\n)*\s*\{\n(.*?)\n\}\n`)
	m := global.FindSubmatch(text)
	require.NotNil(t, m, "the default Caddyfile starts with its global options")
	require.Equal(t, "auto_https off", strings.TrimSpace(regexp.MustCompile(`(?m)^\s*#.*$`).ReplaceAllString(string(m[1]), "")))
	sites := string(text[len(m[0]):])

	gateway, backend := gatewaytest.FreeLoopbackAddr(t), gatewaytest.FreeLoopbackAddr(t)
	for _, r := range []struct{ old, new string }{
		{"reverse_proxy 127.0.0.1:9080", "reverse_proxy " + backend},
		{":8080 {", "http://" + gateway + " {"},
		{":9080 {", "http://" + backend + " {"},
	} {
		require.Contains(t, sites, r.old)
		sites = strings.Replace(sites, r.old, r.new, 1)
	}
	gatewaytest.Start(t, sites, "")
	base := "http://" + gateway

	first := get(t, base+"/calls?_perPage=3")
	require.Equal(t, http.StatusOK, first.status, string(first.body))
	ids := first.ids(t)
	require.Len(t, ids, 3)
	cursor := first.header.Get("next_page_cursor")
	require.Equal(t, exactCursor(ids[2]), cursor)

	var walked []int64
	walked = append(walked, toInts(t, ids)...)
	for range 5 {
		a := get(t, base+"/calls?_perPage=1000&_cursor="+cursor)
		require.Equal(t, http.StatusOK, a.status, string(a.body))
		walked = append(walked, toInts(t, a.ids(t))...)
		cursor = a.header.Get("next_page_cursor")
		require.NotEmpty(t, cursor, "20,000 records: more than 5 pages of 1000")
	}
	for i := 1; i < len(walked); i++ {
		require.Less(t, walked[i-1], walked[i], "ascending ids across pages")
	}

	// printf '{"id":"%s"}' 61 | base64
	handMade := base64.StdEncoding.EncodeToString([]byte(`{"id":"61"}`))
	a := get(t, base+"/calls?_perPage=3&_cursor="+handMade)
	require.Equal(t, http.StatusOK, a.status, string(a.body))
	for _, id := range toInts(t, a.ids(t)) {
		assert.Greater(t, id, int64(61))
	}
	assert.NotEmpty(t, a.header.Get("next_page_cursor"))

	// The README's "Try it" session, word for word but for the address.
	t.Run("README try-it", func(t *testing.T) {
		requireProgram(t, "curl")
		script := docExample(t, "try-it")
		require.Contains(t, script, "http://localhost:8080/")
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "sh", "-e", "-c", strings.ReplaceAll(script, "http://localhost:8080/", base+"/"))
		cmd.Dir = t.TempDir() // it writes headers.txt
		cmd.Env = withoutProxies(os.Environ())
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		require.NoError(t, err, "stderr:\n%s", stderr.String())
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		require.Len(t, lines, 10, "3 ids, the header, 3 ids, 3 ids:\n%s", out)
		ids := func(lines []string) []int64 {
			var out []int64
			for _, l := range lines {
				id, ok := strings.CutPrefix(l, `"id":`)
				require.True(t, ok, l)
				out = append(out, toInts(t, []string{id})...)
			}
			require.True(t, slices.IsSorted(out) && len(out) == 3, "%v", out)
			return out
		}
		first, next, after61 := ids(lines[:3]), ids(lines[4:7]), ids(lines[7:])
		assert.Equal(t, "next_page_cursor: "+exactCursor(strconv.FormatInt(first[2], 10)), strings.TrimSpace(lines[3]), "the first page's header")
		assert.Greater(t, next[0], first[2], "the cursor followed: the records after the first page")
		assert.Greater(t, after61[0], int64(61), "the hand-made cursor: the records after id 61")
	})

	// The backend site serves the reference backend directly, newest first.
	direct := get(t, "http://"+backend+"/calls?_perPage=50")
	require.Equal(t, http.StatusOK, direct.status)
	assert.False(t, slices.IsSorted(toInts(t, direct.ids(t))), "not in id order")
}
