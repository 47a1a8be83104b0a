package caddymodule

import (
	"net"
	"net/http"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/helpdesk-gateway/gateway/caller"
)

// listIdentity names the list r reads as its caller sees it
// (caller.List), with the facts of the caller only Caddy knows: the
// client address it resolved, whether a trusted proxy's forwarding
// headers reach the backend, and the caller_key placeholders' values.
func (g *Gateway) listIdentity(r *http.Request, forward string) string {
	trusted, client := clientAddress(r)
	if g.passesForwarded(r) { // always asked: it reads the deployment on the first request (deployment.go)
		trusted = true
	}
	f := caller.Facts{Client: client, Forwarded: trusted, Keys: g.CallerKey}
	if len(g.CallerKey) > 0 {
		if repl, _ := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer); repl != nil {
			f.Replace = func(key string) string { return repl.ReplaceAll(key, "") }
		}
	}
	return caller.List(r, forward, f)
}

// passesForwarded reports whether the handlers after the gateway pass
// the client's X-Forwarded-For, -Proto and -Host on to the backend for r,
// beyond the server's trusted_proxies (which clientAddress reads): r's
// peer is in the trusted_proxies of a reverse_proxy after the gateway,
// as reverse_proxy checks them, or those handlers are not all known and
// r carries one of these headers.
func (g *Gateway) passesForwarded(r *http.Request) bool {
	d := g.deployment()
	if d.trustUnknown {
		return r.Header["X-Forwarded-For"] != nil || r.Header["X-Forwarded-Proto"] != nil || r.Header["X-Forwarded-Host"] != nil
	}
	return caller.PeerIn(r, d.trust)
}

// clientAddress returns the client address as Caddy resolved it for r,
// and whether r came from one of the server's trusted_proxies: the
// values reverse_proxy reads to set X-Forwarded-For. Outside a Caddy
// server (a handler provisioned by a program) it is r.RemoteAddr's host.
func clientAddress(r *http.Request) (trusted bool, client string) {
	if vars, ok := r.Context().Value(caddyhttp.VarsCtxKey).(map[string]any); ok {
		trusted, _ = vars[caddyhttp.TrustedProxyVarKey].(bool)
		if client, ok = vars[caddyhttp.ClientIPVarKey].(string); ok {
			return trusted, client
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return trusted, r.RemoteAddr
	}
	return trusted, host
}
