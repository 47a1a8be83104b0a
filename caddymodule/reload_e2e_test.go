package caddymodule_test

import (
	"encoding/json"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule"
	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
)

// TestReloadKeepsStateOnlyWhenUnchanged holds docs/operating.md's claim
// ("Reloads"): Caddy skips loading a config identical to the running one,
// so a reload that changes nothing keeps the gateway with its read-ahead
// windows, position index and learned sizes; a reload that changes the
// config makes new gateways, with none of them. Issue 30 point 5.
func TestReloadKeepsStateOnlyWhenUnchanged(t *testing.T) {
	kb := newKeyedBackend(300, 1000)
	srv := httptest.NewServer(kb)
	t.Cleanup(srv.Close)
	// A fixed port, so that the reloaded config serves where the first did.
	port := gatewaytest.FreeLoopbackAddr(t)[len("127.0.0.1"):]
	siteWith := func(options string) string {
		return "http://" + port + " {\n\thelpdesk_gateway {\n\t\t" + options + "\n\t}\n\treverse_proxy {backend}\n}\n"
	}
	site := siteWith("readahead_ttl 30s")
	c := gatewaytest.Start(t, site, srv.URL, gatewaytest.Options{Admin: true})
	caddymodule.TrustWalks()
	state := func() (loaded time.Time, lists int) {
		resp, err := gatewaytest.Client.Get("http://" + c.Admin + "/helpdesk/endpoints")
		require.NoError(t, err)
		defer resp.Body.Close()
		var rep adminReport
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&rep))
		require.Len(t, rep.Gateways, 1)
		ep := rep.Gateways[0].Endpoints[0]
		require.Equal(t, "/calls", ep.Path)
		return rep.Gateways[0].Loaded, ep.Index.Lists
	}
	w := &keyedWalker{base: c.URL, perPage: 10, headers: fixed("X-Api-Key", "a-reload")}
	for range 3 {
		w.next(t)
	}
	require.Equal(t, kb.a[:30], w.ids)
	inside := strconv.FormatInt(w.ids[len(w.ids)-1], 10) // where the walk goes on, from its window
	probe := func() (calls int) {
		before := kb.pageCalls("a-reload")
		a := get(t, c.URL+"/calls?_perPage=10&_cursor="+cursorFor(inside), "X-Api-Key", "a-reload")
		ids, _ := records(t, a)
		n, _ := strconv.ParseInt(inside, 10, 64)
		want, _ := nextAfter(kb.a, n, 10)
		require.Equal(t, want, ids)
		after := kb.pageCalls("a-reload")
		return after - before
	}
	loaded, lists := state()
	require.Positive(t, lists)

	c.Reload(t, site, srv.URL)
	again, listsAgain := state()
	assert.Equal(t, loaded, again, "an unchanged config is not loaded again: the same gateway")
	assert.Equal(t, lists, listsAgain, "its position index kept")
	assert.Zero(t, probe(), "its read-ahead window kept: no backend call")

	c.Reload(t, siteWith("readahead_ttl 31s"), srv.URL)
	changed, listsChanged := state()
	assert.True(t, changed.After(loaded), "a changed config makes a new gateway")
	assert.Zero(t, listsChanged, "with an empty position index")
	assert.Positive(t, probe(), "and no window: the backend is asked")
}
