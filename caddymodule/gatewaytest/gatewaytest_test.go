package gatewaytest

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// TestStartInFrontOfAnyServer runs Caddy with the gateway in front of a
// plain handler (StartBehind), checks it serves on a loopback port of its
// own, and that Stop frees the port.
func TestStartInFrontOfAnyServer(t *testing.T) {
	var seen atomic.Value // the last request URI the backend got
	c := StartBehind(t, "http://:0 {\n\thelpdesk_gateway\n\treverse_proxy {backend}\n}\n", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Store(r.URL.RequestURI())
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `[{"id":1},{"id":2}]`)
	}))

	host, _, err := net.SplitHostPort(strings.TrimPrefix(c.URL, "http://"))
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1", host)
	assert.Equal(t, map[string]string{"srv0": c.URL}, c.URLs)
	assert.Empty(t, c.Admin, "no admin endpoint unless asked")

	resp, err := Client.Get(c.URL + "/calls?_perPage=5")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.JSONEq(t, `[{"id":1},{"id":2}]`, string(body))
	uri, _ := seen.Load().(string)
	assert.True(t, strings.HasPrefix(uri, "/calls?_sortField=id&_sortDir=ASC&_page=1&_perPage="), uri)

	c.Stop(t)
	c.Stop(t) // a second Stop does nothing
	Client.CloseIdleConnections()
	_, err = (&http.Client{Timeout: 2 * time.Second}).Get(c.URL + "/calls")
	assert.Error(t, err, "the listener is closed after Stop")
}

// TestStartTwiceInOneTest shows that harnesses follow one another: the
// second waits for the first to stop, so tests may each start their own.
func TestStartTwiceInOneTest(t *testing.T) {
	_, srv := Backend(t, reference.Config{Seed: 1, Records: 30})
	site := "http://:0 {\n\thelpdesk_gateway\n\treverse_proxy {backend}\n}\n"
	first := Start(t, site, srv.URL)
	first.Stop(t)
	second := Start(t, site, srv.URL)
	resp, err := Client.Get(second.URL + "/phone_numbers?_perPage=30")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Empty(t, resp.Header.Get("next_page_cursor"), "30 of 30 records: the last page")
}

func TestRunRefusesABadCaddyfile(t *testing.T) {
	_, err := Run("http://:0 {\n\thelpdesk_gateway {\n\t\tbogus 1\n\t}\n}\n", "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown option "bogus"`)
	// The lock is free again: a good config starts.
	c := Start(t, "http://:0 {\n\trespond ok\n}\n", "")
	resp, err := Client.Get(c.URL)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

// TestReloadThenAskAtOnce reloads again and again and, right after each
// reload, asks the admin endpoint and the site, with no retry: Caddy
// stops the old admin and site servers as it answers the load, and Reload
// must not return while a connection could still reach one as it shuts
// down and be closed unanswered (EOF: before Reload waited, some 1 run in
// 10 of this test under load).
func TestReloadThenAskAtOnce(t *testing.T) {
	_, srv := Backend(t, reference.Config{Seed: 3, Records: 40})
	addr := FreeLoopbackAddr(t) // a fixed port: reloads keep it
	const site = "http://%s {\n\thelpdesk_gateway {\n\t\tdefault_per_page %d\n\t}\n\treverse_proxy {backend}\n}\n"
	c := Start(t, fmt.Sprintf(site, addr, 5), srv.URL, Options{Admin: true})
	for i := range 30 {
		c.Reload(t, fmt.Sprintf(site, addr, 6+i%2), srv.URL)
		for _, url := range []string{"http://" + c.Admin + "/config/", c.URL + "/calls"} {
			resp, err := Client.Get(url)
			require.NoError(t, err, "reload %d: %s", i+1, url)
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode, "reload %d: %s", i+1, url)
		}
	}
}

// TestLoopbackAddrNeverRepeats gives LoopbackAddr a kernel that hands out
// the same free port twice in a row, as Linux may once the first bind is
// closed (a CI run once got one port for a gateway and its backend), and
// checks that the second address asked for is another one.
func TestLoopbackAddrNeverRepeats(t *testing.T) {
	var last net.Listener
	repeats := true
	listen = func(network, address string) (net.Listener, error) {
		if repeats && last != nil {
			repeats = false
			return net.Listen(network, last.Addr().String())
		}
		ln, err := net.Listen(network, address)
		last = ln
		return ln, err
	}
	t.Cleanup(func() { listen = net.Listen })

	first, err := LoopbackAddr()
	require.NoError(t, err)
	second, err := LoopbackAddr()
	require.NoError(t, err)
	assert.NotEqual(t, first, second)
	assert.False(t, repeats, "the repeating kernel was asked")
}
