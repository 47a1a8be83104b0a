// Package gatewaytest runs a real Caddy, in this process, for end-to-end
// tests: the gateway as configured by a Caddyfile, listening on loopback
// at a port the system picks, in front of any HTTP backend.
package gatewaytest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	_ "github.com/caddyserver/caddy/v2/caddyconfig/caddyfile" // the caddyfile adapter
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	_ "github.com/caddyserver/caddy/v2/modules/standard"

	"github.com/helpdesk-gateway/gateway/caddymodule"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
	"github.com/helpdesk-gateway/gateway/openapi"
	"github.com/helpdesk-gateway/gateway/openapi/contract"
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

	globals    string
	hosts      map[string][]string // server name -> its listeners' host:port
	unregister []func()            // of the contract checks
	stop       sync.Once
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
	c, err := Run(caddyfile, backendURL, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop(t) })
	return c
}

// StartBehind is Start in front of backend, a stand-in for the help desk
// that the harness serves on 127.0.0.1 at a port the system picks, for
// the test's length: {backend} in caddyfile is its address. Caddy stops
// before the backend closes, so no request of the test's end finds it
// gone. It is the one way e2e tests put Caddy in front of a stand-in.
func StartBehind(t testing.TB, caddyfile string, backend http.Handler, opts ...Options) *Caddy {
	t.Helper()
	srv := httptest.NewServer(backend)
	t.Cleanup(srv.Close) // after Start's own cleanup: cleanups run last first
	return Start(t, caddyfile, srv.URL, opts...)
}

// Run is Start for programs, such as the load bench, that have no test:
// it returns an error instead of failing one, and the caller must Close
// the Caddy it returns.
func Run(caddyfile, backendURL string, opts ...Options) (*Caddy, error) {
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	admin := "off"
	c := &Caddy{URLs: map[string]string{}, hosts: map[string][]string{}}
	if o.Admin {
		addr, err := loopbackAddr()
		if err != nil {
			return nil, err
		}
		c.Admin = addr
		admin = c.Admin
	}
	caddyMu.Lock()
	c.globals = fmt.Sprintf(globals, admin, o.Global)
	text := c.globals + strings.ReplaceAll(caddyfile, "{backend}", strings.TrimPrefix(backendURL, "http://"))
	cfg, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(text), map[string]any{"filename": "Caddyfile"})
	if err != nil {
		caddyMu.Unlock()
		return nil, fmt.Errorf("adapting the Caddyfile: %v\n%s", err, text)
	}
	if err := caddy.Load(cfg, true); err != nil {
		caddyMu.Unlock()
		return nil, fmt.Errorf("starting Caddy: %v", err)
	}
	// From here on Close owns the lock.
	app, err := caddy.ActiveContext().App("http")
	if err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("no http app: %v", err)
	}
	names := make([]string, 0)
	for name, srv := range app.(*caddyhttp.App).Servers {
		for _, ln := range srv.Listeners() {
			addr, ok := ln.Addr().(*net.TCPAddr)
			if !ok || !addr.IP.IsLoopback() {
				_ = c.Close()
				return nil, fmt.Errorf("server %s listens on %v: the harness listens on loopback only", name, ln.Addr())
			}
			c.URLs[name] = "http://" + addr.String()
			c.hosts[name] = append(c.hosts[name], addr.String())
		}
		names = append(names, name)
	}
	sort.Strings(names)
	if len(names) > 0 {
		c.URL = c.URLs[names[0]]
	}
	if err := c.checkContracts(cfg); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// checker checks every exchange of Client with a Caddy the harness runs
// against the OpenAPI document of that Caddy's gateways.
var checker = &contract.Transport{Next: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 64}}

// contracts caches the documents by the settings they are made of, so
// that a reload, or a test that starts the same config again, does not
// make and load the document anew.
var contracts sync.Map // JSON of []openapi.Config -> *contract.Document

func contractFor(gateways []openapi.Config) (*contract.Document, error) {
	key, err := json.Marshal(gateways)
	if err != nil {
		return nil, err
	}
	if doc, ok := contracts.Load(string(key)); ok {
		return doc.(*contract.Document), nil
	}
	raw, err := openapi.Generate(gateways...)
	if err != nil {
		return nil, err
	}
	doc, err := contract.Load(raw)
	if err != nil {
		return nil, err
	}
	contracts.Store(string(key), doc)
	return doc, nil
}

// checkContracts makes Client check every exchange with each server of
// cfg (a Caddy JSON config) that has helpdesk_gateway handlers against
// their OpenAPI document, as `caddy helpdesk openapi` prints it for that
// server, until Close. A server whose handlers cannot make one document
// (two configure one path differently) is an error, as no answer of it
// could be checked.
func (c *Caddy) checkContracts(cfg []byte) error {
	for _, undo := range c.unregister {
		undo()
	}
	c.unregister = nil
	byServer, err := caddymodule.OpenAPIConfigs(cfg)
	if err != nil {
		return fmt.Errorf("the OpenAPI document: %v", err)
	}
	for name, gateways := range byServer {
		doc, err := contractFor(gateways)
		if err != nil {
			return fmt.Errorf("the OpenAPI document of server %s: %v", name, err)
		}
		for _, host := range c.hosts[name] {
			c.unregister = append(c.unregister, checker.Register(host, doc))
		}
	}
	return nil
}

// Stop stops Caddy now; it is safe to call more than once.
func (c *Caddy) Stop(t testing.TB) {
	if err := c.Close(); err != nil {
		t.Error(err)
	}
}

// Close stops Caddy now and reports what failed; only the first call does
// anything.
func (c *Caddy) Close() error {
	var err error
	c.stop.Do(func() {
		defer caddyMu.Unlock()
		for _, undo := range c.unregister {
			undo()
		}
		if e := caddy.Stop(); e != nil {
			err = fmt.Errorf("stopping Caddy: %v", e)
		}
		if c.Admin != "" {
			// caddy.Stop leaves the admin endpoint up, as it outlives
			// configs; an empty config without one takes it down. It is
			// not persisted, so tests write nothing outside their temp dirs.
			const off = `{"admin":{"disabled":true,"config":{"persist":false}}}`
			if e := caddy.Load([]byte(off), true); e != nil && err == nil {
				err = fmt.Errorf("stopping the admin endpoint: %v", e)
			}
			_ = caddy.Stop()
		}
	})
	return err
}

// Reload loads caddyfile (with the same globals and {backend}) through the
// admin endpoint, as `caddy reload` does. It needs Options.Admin.
//
// Caddy answers the load and then stops the old admin and site servers
// (the admin one asynchronously). On Linux each server has a socket of its
// own on the shared address (SO_REUSEPORT), so until an old server has
// closed its socket, a new connection may land on it, and one it accepts
// as it shuts down is closed without an answer: the client reads EOF. A
// kept-alive connection to an old server fails the same way. So Reload
// returns only once every old socket on the new config's addresses is
// closed, and with the Client's idle connections forgotten: every request
// after it reaches a server of the new config.
func (c *Caddy) Reload(t testing.TB, caddyfile, backendURL string) {
	t.Helper()
	text := c.globals + strings.ReplaceAll(caddyfile, "{backend}", strings.TrimPrefix(backendURL, "http://"))
	req, err := http.NewRequest(http.MethodPost, "http://"+c.Admin+"/load", strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "text/caddyfile")
	req.Close = true // the admin server that answers is the old one
	resp, err := Client.Do(req)
	if err != nil {
		t.Fatalf("reloading: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("reloading: %s: %s", resp.Status, body)
	}
	if err := c.waitOldServersClosed(15 * time.Second); err != nil {
		t.Fatalf("reloading: %v", err)
	}
	Client.CloseIdleConnections()
	cfg, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(text), map[string]any{"filename": "Caddyfile"})
	if err != nil {
		t.Fatalf("adapting the reloaded Caddyfile: %v", err)
	}
	if err := c.checkContracts(cfg); err != nil {
		t.Fatal(err)
	}
}

// waitOldServersClosed waits until only the running config's servers
// listen on the admin address and the addresses of the running config's
// servers. Caddy counts the users of each address, and drops an old
// server's count just before it closes the socket; on Linux the kernel's
// own table of listening sockets (one per server on a shared address)
// says when the socket is closed.
func (c *Caddy) waitOldServersClosed(timeout time.Duration) error {
	addrs := []string{c.Admin}
	app, err := caddy.ActiveContext().App("http")
	if err != nil {
		return fmt.Errorf("no http app: %v", err)
	}
	for _, srv := range app.(*caddyhttp.App).Servers {
		addrs = append(addrs, srv.Listen...)
	}
	deadline := time.Now().Add(timeout)
	for _, addr := range addrs {
		na, err := caddy.ParseNetworkAddress(addr)
		if err != nil {
			return err
		}
		for _, a := range na.Expand() {
			for caddy.ListenerUsage(a.Network, a.JoinHostPort(0)) > 1 || listeningSockets(a.StartPort) > 1 {
				if time.Now().After(deadline) {
					return fmt.Errorf("an old server still listens on %s after %v", a, timeout)
				}
				time.Sleep(2 * time.Millisecond)
			}
		}
	}
	return nil
}

// listeningSockets counts the TCP sockets listening on port, from Linux's
// /proc/net/tcp and tcp6; elsewhere it is 0.
func listeningSockets(port uint) int {
	n := 0
	for _, name := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		raw, err := os.ReadFile(name)
		if err != nil {
			continue
		}
		// "sl local_address rem_address st ...": an address is HEXIP:HEXPORT,
		// and state 0A is LISTEN.
		for _, line := range strings.Split(string(raw), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 4 || f[3] != "0A" {
				continue
			}
			_, hexPort, ok := strings.Cut(f[1], ":")
			if p, err := strconv.ParseUint(hexPort, 16, 16); ok && err == nil && uint(p) == port {
				n++
			}
		}
	}
	return n
}

// FreeLoopbackAddr returns a loopback address with a port that was free a
// moment ago, for configs that must keep their address across a reload.
func FreeLoopbackAddr(t testing.TB) string {
	t.Helper()
	return freeLoopbackAddr(t)
}

// Backend runs the reference legacy backend on loopback for one test.
func Backend(t testing.TB, cfg reference.Config) (*reference.Backend, *httptest.Server) {
	t.Helper()
	b := reference.New(cfg)
	b.Start()
	srv := httptest.NewServer(b)
	t.Cleanup(func() {
		srv.Close()
		b.Close()
	})
	return b, srv
}

// Client is an HTTP client for tests: no proxy from the environment, and a
// timeout so a hung server fails the test instead of stalling it. Every
// exchange with a gateway the harness runs is checked against the
// gateway's OpenAPI document (see package contract): an answer that
// strays from it, or a request the document calls invalid that does not
// get the documented 400, comes back as an error of the request.
var Client = &http.Client{
	Timeout:   30 * time.Second,
	Transport: checker,
}

func freeLoopbackAddr(t testing.TB) string {
	t.Helper()
	addr, err := loopbackAddr()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// LoopbackAddr returns a loopback address with a port that was free a
// moment ago and that no earlier call in this process has returned. The
// kernel may hand the same ephemeral port to two binds in a row once the
// first is closed, so two addresses asked for one config (a gateway and
// its backend) could otherwise collide: "ambiguous site definition".
func LoopbackAddr() (string, error) {
	handedOut.Lock()
	defer handedOut.Unlock()
	for range 100 {
		ln, err := listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", err
		}
		addr := ln.Addr().String()
		ln.Close()
		if !handedOut.addrs[addr] {
			handedOut.addrs[addr] = true
			return addr, nil
		}
	}
	return "", errors.New("gatewaytest: no fresh loopback port in 100 tries")
}

// handedOut is every address LoopbackAddr has returned in this process.
var handedOut = struct {
	sync.Mutex
	addrs map[string]bool
}{addrs: map[string]bool{}}

// listen is net.Listen; a test replaces it with a kernel that repeats ports.
var listen = net.Listen

func loopbackAddr() (string, error) { return LoopbackAddr() }
