package caddymodule

import (
	"context"
	"maps"
	"net/http"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/helpdesk-gateway/gateway/translate"
)

// Detach implements translate.Detacher. A read ahead of a walker is the
// client's request again, as it came (its headers, address, certificate
// and host: the backend takes it for the same caller, and the list
// identity is the same), made after the client's request is over: a copy
// of it prepared as Caddy's server prepares a request (a replacer, vars
// and an original request of its own, so that reverse_proxy writes
// nothing the client's request still reads, and reads what it read),
// through the same next handler, in a context that ends with the config
// or after readAheadTimeout, whichever comes first.
//
// Every value Caddy keeps in a request's context for its placeholders is
// the client's (docs/operating.md, "What a read ahead sends"): the
// original request ({http.request.orig_*}), the vars (start time, uuid,
// client_ip, {http.vars.*}), the placeholders handlers set in the
// client's replacer (regexp captures, map outputs, the user id), the
// route groups done, and, through the client's context, the server, the
// connection and its local address; the request itself is a clone, with
// the client's URL, headers, remote address and TLS state
// (TestReadAheadResolvesPlaceholdersAsTheClient).
func (f *fetcher) Detach() (translate.Fetcher, context.Context, func(error), bool) {
	g := f.g
	srv, _ := f.r.Context().Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server)
	if srv == nil || g.life == nil {
		return nil, nil, nil, false // a handler called outside a server: no request to prepare again
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(f.r.Context()), g.readAheadTimeout())
	stop := context.AfterFunc(g.life, cancel)
	repl := caddy.NewReplacer()
	r := caddyhttp.PrepareRequest(f.r.Clone(ctx), repl, nil, srv)
	// PrepareRequest took the request as the gateway has it for the
	// original one ({http.request.orig_*}); the client's original is the
	// request as it came, before handle_path, uri or rewrite changed it
	// (TestReadAheadKeepsTheOriginalURI). The replacer reads the request
	// PrepareRequest returned, so its context is replaced in place.
	if orig, ok := f.r.Context().Value(caddyhttp.OriginalRequestCtxKey).(http.Request); ok {
		*r = *r.WithContext(context.WithValue(r.Context(), caddyhttp.OriginalRequestCtxKey, orig))
	}
	// What handlers before the gateway made of the client's request, which
	// reverse_proxy may tell the backend the caller by (header_up with
	// {http.vars.*}, {http.auth.user.id}, a map's outputs), is the
	// read's too (TestReadAheadCarriesTheCallersVars): the client's vars
	// go into the map PrepareRequest made, which the replacer reads
	// {http.vars.*} from, and a placeholder the read's own request does
	// not know is the client's replacer's. That replacer is only read:
	// the client's handlers after the gateway have run, and what runs for
	// the read writes to its own.
	own, _ := r.Context().Value(caddyhttp.VarsCtxKey).(map[string]any)
	if vars, ok := f.r.Context().Value(caddyhttp.VarsCtxKey).(map[string]any); ok && own != nil {
		maps.Copy(own, vars)
	}
	if client, ok := f.r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer); ok {
		repl.Map(client.Get)
	}
	// And the route groups done before the gateway, which decide whether
	// a rewrite after it applies (a Caddyfile's rewrites are one group):
	// the read's calls go where the page's calls go.
	if done, ok := r.Context().Value(routeGroupKey).(map[string]struct{}); ok {
		if groups, ok := f.r.Context().Value(routeGroupKey).(map[string]struct{}); ok {
			maps.Copy(done, groups)
		}
	}
	d := newFetcher(g, r, f.next, f.forward)
	d.ep = f.ep
	done := func(err error) {
		stop()
		cancel()
		if ep := d.ep; ep != nil { // the admin endpoint's cost of the pages counts it
			ep.counts.calls.Add(int64(len(d.queries)))
			ep.counts.fetched.Add(int64(d.fetched))
		}
		metrics.aheadCalls.Add(float64(len(d.queries)))
		if err != nil {
			metrics.aheadErrors.Inc()
			g.logger.Debug("read ahead of a walker failed", zap.Int("subrequests", len(d.queries)), zap.Error(err))
		}
		d.free()
	}
	return d, r.Context(), done, true
}

// readAheadTimeout bounds a read ahead of a walker: no longer than the
// window it reads would serve (readahead_ttl), and no longer than
// maxReadAhead.
func (g *Gateway) readAheadTimeout() time.Duration {
	return min(time.Duration(*g.ReadaheadTTL), maxReadAhead)
}

// maxReadAhead is the longest a read ahead of a walker may take.
const maxReadAhead = 30 * time.Second

// Interface guard
var _ translate.Detacher = (*fetcher)(nil)
