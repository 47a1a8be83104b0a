package caddymodule

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// The gateway owns its endpoints under one spelling each: the path as
// configured (base_path included), byte for byte. Caddy's path matcher
// takes a path without case, with repeated slashes merged and dot
// segments resolved, and a lenient backend (Express, Laravel) also takes
// a trailing slash or an escaped letter or slash; so /TICKETS, //tickets,
// /tickets/, /tickets/. and /tickets%2F may all reach the same list at
// the backend. A GET or HEAD for an owned endpoint under another spelling
// is refused with a 400 that names the endpoint, before the backend sees
// it: the gateway cannot know how the backend routes an odd spelling, so
// serving it (unchecked _filters, or pages cut from another path's
// answers) could not be made safe, and rewriting it would serve a path
// the client did not ask for. Other methods pass on as they do under the
// endpoint's own spelling.

// spelling is how a path reads once the differences Caddy's path matcher
// and lenient backends ignore are taken out: lower case, repeated slashes
// merged, dot segments resolved (caddyhttp.CleanPath), no trailing slash.
// Its argument is the unescaped path, so that %2F is a slash and %73 an s.
func spelling(p string) string {
	p = caddyhttp.CleanPath(strings.ToLower(p), true)
	if len(p) > 1 {
		p = strings.TrimSuffix(p, "/")
	}
	return p
}

// plainSpelling reports whether p is its own spelling, which most paths
// are: then it is looked up as it is, at no cost of cleaning.
func plainSpelling(p string) bool {
	if len(p) > 1 && p[len(p)-1] == '/' {
		return false
	}
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case 'A' <= c && c <= 'Z':
			return false
		case c == '/' && i+1 < len(p) && (p[i+1] == '/' || p[i+1] == '.'):
			return false
		}
	}
	return true
}

// endpointSpellings maps the spelling of each owned path to its endpoint.
func endpointSpellings(endpoints map[string]*endpoint) map[string]string {
	m := make(map[string]string, len(endpoints))
	for p := range endpoints {
		m[spelling(p)] = p
	}
	return m
}

// checkSpellings refuses two endpoints that Caddy's path matcher could not
// tell apart (/calls and /Calls): a request could not say which it asks.
func checkSpellings(basePath string, paths []string) error {
	seen := make(map[string]string, len(paths))
	for _, p := range paths {
		s := spelling(basePath + p)
		if other, ok := seen[s]; ok {
			return fmt.Errorf("endpoints %q and %q are one path to Caddy's path matcher (case, slashes and dot segments aside): list it once", other, p)
		}
		seen[s] = p
	}
	return nil
}

// route returns the endpoint r asks for, and when r asks for one under
// another spelling (see above), the endpoint's own path instead.
func (g *Gateway) route(r *http.Request) (ep *endpoint, misspelt string) {
	p := r.URL.Path
	if ep = g.endpoints[p]; ep != nil {
		if r.URL.RawPath != "" { // escaped otherwise than Go would: /ticket%73
			return nil, p
		}
		return ep, ""
	}
	if plainSpelling(p) {
		return nil, g.spellings[p] // an endpoint configured as /Calls, asked as /calls
	}
	return nil, g.spellings[spelling(p)]
}

// refuseSpelling answers a request for the endpoint path under another
// spelling.
func (g *Gateway) refuseSpelling(w http.ResponseWriter, r *http.Request, path string) {
	if ep := g.endpoints[path]; ep != nil {
		ep.m.clientError.Inc()
	}
	writeError(w, http.StatusBadRequest, fmt.Sprintf(
		"%q is not how this gateway spells the endpoint %s: ask for %s exactly (its case, no repeated or trailing slash, no dot segment, nothing escaped)",
		clip(r.URL.EscapedPath(), 128), path, path))
}
