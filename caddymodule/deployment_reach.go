package caddymodule

// Where a gateway is in its config's routes, and what the handlers after
// it reach beyond their own config, for its deployment fingerprint
// (deployment.go): the named routes invoke
// runs, the placeholders they read at request time, the hosts their
// upstreams name, and the handler types whose config says all they do.
// What is not known here counts as unknown: an added Caddy handler or
// placeholder makes the fingerprint incomplete (and the store's keys
// private, unless the deployment option names the deployment) until it
// is added here with why it is safe.

import (
	"fmt"
	"net/netip"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"

	"github.com/helpdesk-gateway/gateway/frame"
)

// reachHandlers are the handler modules whose config, hashed into the
// fingerprint with the modules it holds, says all that decides what they
// do to a backend call: they read no file, no route but those their
// config holds, nothing but the request and that config. invoke's named
// route is described where it is invoked (backendDesc.invoke).
// file_server and templates read files, so they are not here.
var reachHandlers = map[string]bool{
	"http.handlers.authentication":        true,
	"http.handlers.copy_response":         true,
	"http.handlers.copy_response_headers": true,
	"http.handlers.encode":                true,
	"http.handlers.error":                 true,
	"http.handlers.headers":               true,
	"http.handlers.helpdesk_gateway":      true,
	"http.handlers.intercept":             true,
	"http.handlers.invoke":                true,
	"http.handlers.log_append":            true,
	"http.handlers.map":                   true,
	"http.handlers.metrics":               true,
	"http.handlers.push":                  true,
	"http.handlers.request_body":          true,
	"http.handlers.reverse_proxy":         true,
	"http.handlers.rewrite":               true,
	"http.handlers.static_response":       true,
	"http.handlers.subroute":              true,
	"http.handlers.tracing":               true,
	"http.handlers.vars":                  true,
}

func knownHandler(id string) bool { return reachHandlers[id] }

// readsOutside are the other modules (matchers) that decide by what is
// outside the request and the config: try_files and php_fastcgi route by
// the files they find.
var readsOutside = map[string]string{
	"http.matchers.file": "it matches by the files on this host's disk",
}

// route describes a route: its matchers, then its handlers.
func (bd *backendDesc) route(r caddyhttp.Route) {
	bd.out = append(bd.out, 'R')
	bd.modules(reflect.ValueOf(r.MatcherSets), 0)
	for _, h := range r.Handlers {
		bd.handler(h)
	}
}

// handler describes one handler after the gateway: its config, and what
// it reaches that its config only names (invoke's named route), or
// marks it unknown when it is not one whose config says all it does
// (reachHandlers).
func (bd *backendDesc) handler(h caddyhttp.MiddlewareHandler) {
	bd.handlers++
	switch h := h.(type) {
	case *reverseproxy.Handler:
		bd.proxy(h)
	case *caddyhttp.Invoke:
		bd.invoke(h.Name)
	}
	if id := moduleID(h); !knownHandler(id) {
		bd.unknown = append(bd.unknown, fmt.Sprintf("handler %s: what it reads besides its config (files, other routes) is not known", id))
		bd.opaque = true
	}
	bd.module(h, 0)
}

// proxy notes what of a reverse_proxy its config leaves to requests:
// dynamic upstreams, upstream addresses that are placeholders; and its
// trusted_proxies.
func (bd *backendDesc) proxy(rp *reverseproxy.Handler) {
	if rp.DynamicUpstreams != nil {
		bd.unknown = append(bd.unknown, fmt.Sprintf("reverse_proxy's dynamic upstreams (%s): the hosts they name are not known at load", moduleID(rp.DynamicUpstreams)))
	}
	for _, u := range rp.Upstreams {
		switch {
		case u == nil:
		case strings.Contains(envPlaceholder.ReplaceAllString(u.Dial, ""), "{"):
			bd.unknown = append(bd.unknown, fmt.Sprintf("reverse_proxy's upstream %q is a placeholder, decided per request", u.Dial))
		case !upstreamIsAddress(expandEnv([]byte(u.Dial))):
			bd.unknown = append(bd.unknown, fmt.Sprintf("reverse_proxy's upstream %q is a DNS name: each environment resolves it, so the config does not say which backend it is", u.Dial))
		}
	}
	for _, s := range rp.TrustedProxies {
		if p, err := netip.ParsePrefix(s); err == nil {
			bd.trust = append(bd.trust, p)
		} else if a, err := netip.ParseAddr(s); err == nil {
			bd.trust = append(bd.trust, netip.PrefixFrom(a, a.BitLen()))
		}
	}
}

// invoke describes the named route an invoke handler runs, once per
// way down (a route that invokes itself is described once).
func (bd *backendDesc) invoke(name string) {
	bd.out = frame.AppendField(bd.out, "invoke:"+name)
	var r *caddyhttp.Route
	if bd.srv != nil {
		r = bd.srv.NamedRoutes[name]
	}
	switch {
	case r == nil:
		bd.unknown = append(bd.unknown, fmt.Sprintf("invoke %q: no such named route in the gateway's server", name))
	case slices.Contains(bd.invoking, name) || len(bd.invoking) >= maxDescribeDepth:
	default:
		bd.invoking = append(bd.invoking, name)
		bd.route(*r)
		bd.invoking = bd.invoking[:len(bd.invoking)-1]
	}
}

// placeholder is a Caddy placeholder as it stands in a config's JSON:
// a name that starts with a letter (a regexp's {2,3} is none), in braces.
var placeholder = regexp.MustCompile(`\{([A-Za-z][^{}\s"]*)\}`)

// placeholders notes the placeholders of a module's JSON (its {env.*}
// already replaced) whose value a request reads from outside the request
// and the config: a file, the host, what handlers before the gateway
// made. Those of requestPlaceholder are the client's request's, the same
// whichever deployment serves it, and the list identity makes the caller
// of the request's facts.
func (bd *backendDesc) placeholders(id, js string) {
	for _, m := range placeholder.FindAllStringSubmatch(js, -1) {
		if requestPlaceholder(m[1]) {
			continue
		}
		u := fmt.Sprintf("%s reads {%s} at request time: its value is not in the config", id, m[1])
		if !slices.Contains(bd.unknown, u) {
			bd.unknown = append(bd.unknown, u)
		}
	}
}

// requestPlaceholder reports whether a placeholder's value is made of
// the client's request (and the time) alone, or of what the handlers
// after the gateway, described whole, make of it, or names the instance:
// the request's own ({http.request.*}), the client address Caddy's
// server works out, what reverse_proxy sets of the upstream it picked
// from its config, the answer's, the time's; and the instance's name
// ({system.*}, {http.request.local*}), which instances of one deployment
// send to tell themselves apart and which names no backend. Every other
// one is read from outside: {file.*}, {http.vars.*} and the outputs of
// map, regexp matchers and authentication before the gateway, and any
// placeholder not listed.
func requestPlaceholder(name string) bool {
	switch name {
	case "http.vars.client_ip", "http.vars.trusted_proxy", "http.shutting_down", "http.time_until_shutdown":
		return true
	}
	for _, prefix := range []string{"http.request.", "http.reverse_proxy.", "http.response.", "http.error.", "time.", "system."} {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}

// upstreamIsAddress reports whether an upstream's dial address names
// its host by an IP address (or a unix socket): one the fingerprint
// takes for the same backend wherever the config runs. A DNS name
// (localhost too) is resolved by each environment.
func upstreamIsAddress(dial string) bool {
	addr, err := caddy.ParseNetworkAddress(dial)
	if err != nil {
		return false
	}
	if addr.IsUnixNetwork() {
		return true
	}
	_, err = netip.ParseAddr(strings.Trim(addr.Host, "[]"))
	return err == nil
}

// step is one level of the way from a server's routes to the gateway:
// the list, the route in it, the handler in that route.
type step struct {
	list        caddyhttp.RouteList
	route, hand int
}

// findGateway returns the way to g in app's servers (by name), each
// server's routes, then its error routes and named routes, descending
// into subroutes; the innermost step last; the server; and the named
// route's name when g is in one. nil: not found.
func findGateway(g *Gateway, app *caddyhttp.App) (path []step, srv *caddyhttp.Server, named string) {
	names := make([]string, 0, len(app.Servers))
	for name := range app.Servers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		srv := app.Servers[name]
		lists := []caddyhttp.RouteList{srv.Routes}
		if srv.Errors != nil {
			lists = append(lists, srv.Errors.Routes)
		}
		for _, list := range lists {
			if path := findIn(g, list, 0); path != nil {
				return path, srv, ""
			}
		}
		named := make([]string, 0, len(srv.NamedRoutes))
		for n := range srv.NamedRoutes {
			named = append(named, n)
		}
		sort.Strings(named)
		for _, n := range named {
			if r := srv.NamedRoutes[n]; r != nil {
				if path := findIn(g, caddyhttp.RouteList{*r}, 0); path != nil {
					return path, srv, n
				}
			}
		}
	}
	return nil, nil, ""
}

func findIn(g *Gateway, list caddyhttp.RouteList, depth int) []step {
	if depth > 32 {
		return nil
	}
	for ri, route := range list {
		for hi, h := range route.Handlers {
			switch h := h.(type) {
			case *Gateway:
				if h == g {
					return []step{{list, ri, hi}}
				}
			case *caddyhttp.Subroute:
				if inner := findIn(g, h.Routes, depth+1); inner != nil {
					return append([]step{{list, ri, hi}}, inner...)
				}
			}
		}
	}
	return nil
}
