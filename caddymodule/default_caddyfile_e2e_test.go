package caddymodule_test

import (
	"encoding/base64"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/internal/harness"
)

// TestDefaultCaddyfileRuns runs the repository's default Caddyfile, as
// `go run ./cmd/caddy run` does, with its two ports moved to free loopback
// ports, and follows the README's curl session: the first page of /calls,
// then next_page_cursor, then a cursor built by hand with printf | base64.
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

	gateway, backend := harness.FreeLoopbackAddr(t), harness.FreeLoopbackAddr(t)
	for _, r := range []struct{ old, new string }{
		{"reverse_proxy 127.0.0.1:9080", "reverse_proxy " + backend},
		{":8080 {", "http://" + gateway + " {"},
		{":9080 {", "http://" + backend + " {"},
	} {
		require.Contains(t, sites, r.old)
		sites = strings.Replace(sites, r.old, r.new, 1)
	}
	harness.Start(t, sites, "")
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

	// The backend site serves the reference backend directly, newest first.
	direct := get(t, "http://"+backend+"/calls?_perPage=50")
	require.Equal(t, http.StatusOK, direct.status)
	assert.False(t, slices.IsSorted(toInts(t, direct.ids(t))), "not in id order")
}
