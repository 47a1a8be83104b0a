// Package harness runs a real Caddy, in this process, for end-to-end
// tests: the gateway as configured by a Caddyfile, listening on loopback
// at a port the system picks, in front of any HTTP backend.
package harness

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	_ "github.com/caddyserver/caddy/v2/caddyconfig/caddyfile" // the caddyfile adapter
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/helpdesk-gateway/gateway/caddymodule"
	"github.com/helpdesk-gateway/gateway/legacy"
)

// Global options of every harness config: no admin endpoint unless asked,
// no certificates, nothing written to disk, quick shutdown.
const globals = `{
	admin %s
	default_bind 127.0.0.1
	auto_https off
	persist_config off
	grace_period 2s
	log {
		level ERROR
	}
	%s
}
`

// Caddy is one running Caddy.
type Caddy struct {
	// URL is the base URL of the first site, e.g. http://127.0.0.1:41234.
	URL string
	// URLs maps each server name (srv0, srv1, ...) to its base URL.
	URLs map[string]string
	// Admin is the admin endpoint's address when Options.Admin was set.
	Admin string

	globals string
	stop    sync.Once
}

// Options change how Start runs Caddy.
type Options struct {
	// Admin turns on the admin endpoint on a free loopback port.
	Admin bool
	// Global holds extra global options, e.g. "servers { metrics }".
	Global string
}

// caddyMu serialises harnesses: Caddy runs one config per process.
var caddyMu sync.Mutex

// Start adapts caddyfile and runs it until the test ends. Sites bind to
// 127.0.0.1 (default_bind) and should use port 0 (http://:0): the system
// picks a free port, and the harness reads it back from the listener; a
// listener on any other address fails the test. In caddyfile, {backend}
// stands for backendURL's host:port.
func Start(t testing.TB, caddyfile, backendURL string, opts ...Options) *Caddy {
	t.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	admin := "off"
	c := &Caddy{URLs: map[string]string{}}
	if o.Admin {
		c.Admin = freeLoopbackAddr(t)
		admin = c.Admin
	}
	caddyMu.Lock()
	locked := true
	defer func() {
		if locked { // Start failed before Stop could take over the lock
			caddyMu.Unlock()
		}
	}()

	c.globals = fmt.Sprintf(globals, admin, o.Global)
	text := c.globals + strings.ReplaceAll(caddyfile, "{backend}", strings.TrimPrefix(backendURL, "http://"))
	cfg, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(text), map[string]any{"filename": "Caddyfile"})
	if err != nil {
		t.Fatalf("adapting the Caddyfile: %v\n%s", err, text)
	}
	if err := caddy.Load(cfg, true); err != nil {
		t.Fatalf("starting Caddy: %v", err)
	}
	locked = false
	t.Cleanup(func() { c.Stop(t) })
	app, err := caddy.ActiveContext().App("http")
	if err != nil {
		t.Fatalf("no http app: %v", err)
	}
	names := make([]string, 0)
	for name, srv := range app.(*caddyhttp.App).Servers {
		for _, ln := range srv.Listeners() {
			addr, ok := ln.Addr().(*net.TCPAddr)
			if !ok || !addr.IP.IsLoopback() {
				t.Fatalf("server %s listens on %v: tests listen on loopback only", name, ln.Addr())
			}
			c.URLs[name] = "http://" + addr.String()
		}
		names = append(names, name)
	}
	sort.Strings(names)
	if len(names) > 0 {
		c.URL = c.URLs[names[0]]
	}
	return c
}

// Stop stops Caddy now; it is safe to call more than once.
func (c *Caddy) Stop(t testing.TB) {
	c.stop.Do(func() {
		defer caddyMu.Unlock()
		if err := caddy.Stop(); err != nil {
			t.Errorf("stopping Caddy: %v", err)
		}
		if c.Admin != "" {
			// caddy.Stop leaves the admin endpoint up, as it outlives
			// configs; an empty config without one takes it down.
			if err := caddy.Load([]byte(`{"admin":{"disabled":true}}`), true); err != nil {
				t.Errorf("stopping the admin endpoint: %v", err)
			}
			_ = caddy.Stop()
		}
	})
}

// Reload loads caddyfile (with the same globals and {backend}) through the
// admin endpoint, as `caddy reload` does. It needs Options.Admin.
func (c *Caddy) Reload(t testing.TB, caddyfile, backendURL string) {
	t.Helper()
	text := c.globals + strings.ReplaceAll(caddyfile, "{backend}", strings.TrimPrefix(backendURL, "http://"))
	req, err := http.NewRequest(http.MethodPost, "http://"+c.Admin+"/load", strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "text/caddyfile")
	resp, err := Client.Do(req)
	if err != nil {
		t.Fatalf("reloading: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("reloading: %s: %s", resp.Status, body)
	}
}

// FreeLoopbackAddr returns a loopback address with a port that was free a
// moment ago, for configs that must keep their address across a reload.
func FreeLoopbackAddr(t testing.TB) string {
	t.Helper()
	return freeLoopbackAddr(t)
}

// Backend runs the reference legacy backend on loopback for one test.
func Backend(t testing.TB, cfg legacy.Config) (*legacy.Backend, *httptest.Server) {
	t.Helper()
	b := legacy.New(cfg)
	b.Start()
	srv := httptest.NewServer(b)
	t.Cleanup(func() {
		srv.Close()
		b.Close()
	})
	return b, srv
}

// Client is an HTTP client for tests: no proxy from the environment, and a
// timeout so a hung server fails the test instead of stalling it.
var Client = &http.Client{
	Timeout:   30 * time.Second,
	Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 64},
}

func freeLoopbackAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
