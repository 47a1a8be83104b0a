package caddymodule

// A deployment's fingerprint: what decides the records of the lists a
// gateway keeps, hashed, so that the shared store (readahead_store) keeps
// the entries of two deployments apart whatever secret they share, and
// instances of one deployment (one config) share theirs. It goes into
// every store key beside the list identity (redisstore.Config.Deployment).
//
// It is the SHA-256 of
//
//   - the gateway's own options, in its JSON, but those whose row of the
//     option table (options.go) says why they never change what a list's
//     records are nor how a page is composed from a stored window
//     (sameDeployment): an option added later counts unless its row
//     says so;
//   - the deployment option, an operator's name for the deployment;
//   - the backend that the handlers after the gateway reach, as the
//     config describes it: every handler after the gateway in its route,
//     in the routes after that one in the same list (but the other
//     routes of a group that ran), and up through the subroutes that
//     hold it (a Caddyfile site, a handle block), up to a terminal route;
//     the named routes invoke runs; each as its module ID and its
//     provisioned JSON, and the modules its JSON leaves out
//     (reverse_proxy's transport and dynamic upstream source, route
//     matchers and handlers), the same way. {env.*} placeholders are
//     replaced first, so that one config file run with another
//     environment is another deployment.
//
// When it is known: Caddy hands a handler nothing of the handlers after
// it, and those are provisioned after it. The http app of the gateway's
// own config is known at Provision (caddy.Context.App hands an app to its
// modules while it is being provisioned) and is complete once every app
// of the config is provisioned, before any server of it starts; so the
// fingerprint is read on the config's first request (listIdentity), or
// when the config becomes the running one (a watcher polls
// caddy.ActiveContext a few times a second until then), whichever comes
// first, and once. Until then the gateway keeps its store entries under
// a random name of its own, which no other instance reads: the store
// answers as one that holds nothing, costing calls, never a wrong page.
// A gateway provisioned outside a Caddy config (a program embedding the
// handler) has no routes to read: its fingerprint covers its options.
//
// Where the backend cannot be known from the config (deployment_reach.go:
// a handler whose config does not say all it reads, a placeholder read
// at request time from outside the request, an upstream that is a DNS
// name, dynamic upstreams, an upstream address that is a request
// placeholder, no handler after the gateway, or the gateway not found in
// its config's routes), the fingerprint cannot tell two deployments
// apart, so unless the deployment option names the deployment the
// store's keys stay private to the instance (a random value of its own,
// as before the fingerprint is read): it shares nothing, which costs
// calls, never a page of another deployment's backend. A warning says
// so once, when a store is configured, and recommends the option.

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/helpdesk-gateway/gateway/frame"
)

// deployment is a gateway's fingerprint, once known.
type deployment struct {
	sum [sha256.Size]byte
	// key is what the store's keys name: sum, or, when private, a random
	// value of this instance's own (no other instance reads its entries).
	key [sha256.Size]byte
	// private: the config leaves part of the backend unknown and no
	// deployment name vouches for it, so the store's entries stay this
	// instance's (see the file's comment).
	private bool
	// unknown says what of the backend the config does not describe;
	// empty when it does.
	unknown []string
	// trust is the union of the trusted_proxies of the reverse_proxy
	// handlers after the gateway: from a peer in it, reverse_proxy passes
	// the client's X-Forwarded-For, -Proto and -Host on to the backend,
	// so they make the caller (appendCaller). trustUnknown: the handlers
	// after the gateway are not all known, so these headers count
	// whenever a client sends them.
	trust        []netip.Prefix
	trustUnknown bool
}

// short is the fingerprint as the admin endpoint and the logs show it:
// the key's, so that two instances show the same one exactly when they
// share entries.
func (d *deployment) short() string { return hex.EncodeToString(d.key[:6]) }

// deploymentState is a gateway's way to its fingerprint.
type deploymentState struct {
	app   *caddyhttp.App // the http app of the gateway's config; nil outside one
	once  sync.Once
	known atomic.Pointer[deployment]
}

// startDeployment notes the gateway's config's http app and arranges
// for the fingerprint to be read when the config runs (see the file's
// comment). The store, if any, keys its entries under a random name
// until then.
func (g *Gateway) startDeployment(ctx caddy.Context) {
	g.deploy = new(deploymentState)
	if app, err := ctx.AppIfConfigured("http"); err == nil {
		g.deploy.app, _ = app.(*caddyhttp.App)
	}
	if g.store != nil {
		var private [16]byte
		_, _ = rand.Read(private[:])
		g.store.SetDeployment(append([]byte("unresolved:"), private[:]...))
	}
	if g.deploy.app == nil {
		g.deployment()
		return
	}
	go func() {
		tick := time.NewTicker(25 * time.Millisecond)
		defer tick.Stop()
		for g.deploy.known.Load() == nil {
			if g.configRunning() {
				g.deployment()
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
}

// unprovisioned is the deployment of a gateway not provisioned (tests of
// its parts): it has no store, and no handlers after it are known.
var unprovisioned deployment

// configRunning reports whether the gateway's config is the running one.
func (g *Gateway) configRunning() bool {
	app, err := caddy.ActiveContext().AppIfConfigured("http")
	return err == nil && app == any(g.deploy.app)
}

// deployment returns the gateway's fingerprint, reading it on the first
// call. Call it only once the gateway's config is provisioned whole: from
// a request, or once configRunning.
func (g *Gateway) deployment() *deployment {
	if g.deploy == nil {
		return &unprovisioned
	}
	if d := g.deploy.known.Load(); d != nil {
		return d
	}
	g.deploy.once.Do(func() {
		d := g.fingerprint()
		d.key = d.sum
		if d.private = len(d.unknown) > 0 && g.deploymentName() == ""; d.private {
			_, _ = rand.Read(d.key[:])
		}
		if g.store != nil {
			g.store.SetDeployment(d.key[:])
		}
		g.deploy.known.Store(d)
		g.logDeployment(d)
	})
	return g.deploy.known.Load()
}

// logDeployment says the fingerprint, and warns once where it does not
// cover the backend and the store could then be shared by deployments.
func (g *Gateway) logDeployment(d *deployment) {
	if g.logger == nil {
		return
	}
	fields := []zap.Field{zap.String("fingerprint", d.short())}
	name := g.deploymentName()
	if name != "" {
		fields = append(fields, zap.String("deployment", name))
	}
	switch {
	case len(d.unknown) == 0 || g.store == nil:
		g.logger.Debug("deployment fingerprint", append(fields, zap.Strings("unknown", d.unknown))...)
	case name != "":
		g.logger.Info("the deployment fingerprint does not cover the whole backend; the deployment option names it",
			append(fields, zap.Strings("unknown", d.unknown))...)
	default:
		g.logger.Warn("readahead_store: the gateway cannot tell from the config which backend it reaches, so its store entries stay its own and no other instance shares them; "+
			"set `deployment <name>` in helpdesk_gateway, one name per deployment (staging, production), the same on all its instances, to share them",
			append(fields, zap.Strings("unknown", d.unknown))...)
	}
}

// deploymentName is the deployment option, its {env.*} placeholders
// replaced: `deployment {env.HELPDESK_DEPLOYMENT}` with the variable
// unset names no deployment.
func (g *Gateway) deploymentName() string {
	return strings.TrimSpace(envPlaceholder.ReplaceAllStringFunc(g.Deployment, func(p string) string {
		return os.Getenv(envPlaceholder.FindStringSubmatch(p)[1])
	}))
}

// fingerprint reads the gateway's fingerprint from its options and the
// handlers after it.
func (g *Gateway) fingerprint() *deployment {
	d := &deployment{}
	h := sha256.New()
	var b []byte
	b = frame.AppendField(b, "helpdesk_gateway deployment 1")
	opts, err := g.optionsJSON()
	if err != nil {
		d.unknown = append(d.unknown, "the gateway's own options: "+err.Error())
	}
	b = frame.AppendField(b, string(opts))
	bd := &backendDesc{}
	if g.deploy == nil || g.deploy.app == nil {
		d.unknown = append(d.unknown, "the gateway runs outside a Caddy config's http app")
	} else if path, srv, named := findGateway(g, g.deploy.app); path == nil {
		d.unknown = append(d.unknown, "the gateway was not found in its config's routes (routes, errors, named_routes)")
		d.trustUnknown = true
	} else {
		bd.srv = srv
		if !bd.after(path) && named != "" {
			bd.unknown = append(bd.unknown, fmt.Sprintf("the gateway is in named route %q: what runs after the invoke that reaches it is not described", named))
		}
		if bd.handlers == 0 {
			d.unknown = append(d.unknown, "no handler after the gateway")
		}
	}
	for _, u := range bd.unknown {
		if !slices.Contains(d.unknown, u) {
			d.unknown = append(d.unknown, u)
		}
	}
	d.trust = bd.trust
	d.trustUnknown = d.trustUnknown || bd.opaque
	b = frame.AppendField(b, string(bd.out))
	h.Write(b)
	h.Sum(d.sum[:0])
	return d
}

// optionsJSON is the gateway's JSON, less the options that leave the
// deployment as it is (sameDeployment), with its members sorted.
func (g *Gateway) optionsJSON() ([]byte, error) {
	raw, err := json.Marshal(g)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	for _, o := range options {
		if o.sameDeployment != "" {
			delete(m, o.name)
		}
	}
	out, err := json.Marshal(m) // sorted by name
	return []byte(expandEnv(out)), err
}

// envPlaceholder is an {env.NAME} placeholder, as Caddy replaces it.
var envPlaceholder = regexp.MustCompile(`\{env\.([^{}]+)\}`)

// expandEnv replaces the {env.*} placeholders of a config's JSON, the
// value JSON-quoted so that it cannot end the string it stands in.
func expandEnv(b []byte) string {
	return envPlaceholder.ReplaceAllStringFunc(string(b), func(p string) string {
		v, _ := json.Marshal(os.Getenv(envPlaceholder.FindStringSubmatch(p)[1]))
		return string(v[1 : len(v)-1])
	})
}

// backendDesc is the description of the handlers after a gateway, as
// bytes hashed into its fingerprint.
type backendDesc struct {
	out      []byte
	handlers int      // handlers described
	unknown  []string // what they leave unknown
	opaque   bool     // a handler could not be described
	trust    []netip.Prefix

	srv      *caddyhttp.Server // whose named routes invoke reaches
	invoking []string          // the named routes being described, against a loop
}

// after describes what runs after the gateway at the end of path: the
// handlers after it in its route, the routes after that one (but those
// of a group a route on the way belongs to: Caddy runs one route of a
// group), then the same outward for each subroute that holds it,
// stopping at a terminal route (nothing after it runs). It reports
// whether it reached one.
func (bd *backendDesc) after(path []step) bool {
	for i := len(path) - 1; i >= 0; i-- {
		st := path[i]
		route := st.list[st.route]
		for _, h := range route.Handlers[st.hand+1:] {
			bd.handler(h)
		}
		if route.Terminal {
			return true
		}
		for _, r := range st.list[st.route+1:] {
			if r.Group != "" && r.Group == route.Group {
				continue
			}
			bd.route(r)
			if r.Terminal {
				return true
			}
		}
	}
	return false
}

// module appends a module's ID and JSON, then the modules its JSON
// leaves out (fields tagged json:"-").
func (bd *backendDesc) module(v any, depth int) {
	id := moduleID(v)
	var raw []byte
	var err error
	if gw, ok := v.(*Gateway); ok {
		raw, err = gw.optionsJSON() // never its readahead_store_key
	} else {
		raw, err = json.Marshal(v)
	}
	if err != nil {
		bd.unknown = append(bd.unknown, fmt.Sprintf("%s: its config cannot be read (%v)", id, err))
		bd.opaque = true
	}
	expanded := expandEnv(raw)
	bd.out = frame.AppendField(bd.out, id)
	bd.out = frame.AppendField(bd.out, expanded)
	bd.placeholders(id, expanded)
	if why, ok := readsOutside[id]; ok {
		bd.unknown = append(bd.unknown, id+": "+why)
	}
	bd.hidden(reflect.ValueOf(v), depth+1)
}

// maxDescribeDepth bounds the descent into a handler's structs.
const maxDescribeDepth = 12

// hidden describes the modules in v's exported fields that its JSON
// leaves out, descending into the structs its JSON holds.
func (bd *backendDesc) hidden(v reflect.Value, depth int) {
	if depth > maxDescribeDepth {
		return
	}
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name == "-" {
				bd.out = frame.AppendField(bd.out, f.Name)
				bd.modules(v.Field(i), depth+1)
			} else {
				bd.hidden(v.Field(i), depth+1)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			bd.hidden(v.Index(i), depth+1)
		}
	}
}

// modules describes the modules a field the JSON leaves out holds: a
// module, or slices of them (matcher sets, a route's handlers).
func (bd *backendDesc) modules(v reflect.Value, depth int) {
	if depth > maxDescribeDepth || !v.IsValid() {
		return
	}
	if v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return
		}
	}
	if v.CanInterface() {
		if m, ok := v.Interface().(caddy.Module); ok {
			if h, ok := m.(caddyhttp.MiddlewareHandler); ok {
				bd.handler(h)
				return
			}
			bd.module(m, depth)
			return
		}
	}
	for v.Kind() == reflect.Interface {
		v = v.Elem()
	}
	if v.Kind() == reflect.Slice || v.Kind() == reflect.Array {
		bd.out = binary.AppendUvarint(bd.out, uint64(v.Len()))
		for i := range v.Len() {
			bd.modules(v.Index(i), depth+1)
		}
	}
}

// moduleID is a module's Caddy ID, or its Go type for a value that is
// not a module.
func moduleID(v any) string {
	if m, ok := v.(caddy.Module); ok {
		return string(m.CaddyModule().ID)
	}
	return fmt.Sprintf("%T", v)
}
