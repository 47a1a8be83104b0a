package caddymodule

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/helpdesk-gateway/gateway/pagequery"
)

// pageHeaders sets the headers of a page the gateway composed (a cursor or
// _page answer) on h, the client's header map, which may already hold
// headers set by handlers before the gateway (Caddy's `header`).
//
// The headers come from the backend answer the page starts in, once, less
// those that describe that answer rather than our page: its length and
// encoding, validators and digests, and the configured paging metadata (its Link,
// X-Page, Content-Range, ...), which would point a generic client at the
// backend's address and at an offset page that is not the next one. They
// join the site's as reverse_proxy's would (addBackendHeaders). Then
// next_page_cursor when more records exist (and, opted in, a Link to the
// next page), listed for browsers in Access-Control-Expose-Headers.
func (g *Gateway) pageHeaders(h http.Header, r *http.Request, backend http.Header, q pagequery.Query, cursor string) {
	addBackendHeaders(h, backend, g.dropHeaders)
	for _, k := range answerHeaders {
		h.Del(k) // the page's own, whoever set them
	}
	if cursor != "" {
		// Spelled as the spec spells it; header names are case-insensitive.
		h[nextPageCursor] = []string{cursor}
		if g.LinkHeader {
			h.Add("Link", pagequery.NextLink(requestedURL(r), q, cursor))
		}
	}
	exposeToBrowsers(h, r, g.exposed)
}

// answerHeaders describe the backend answer a page starts in, not the
// page, and never reach a composed page, whatever drop_backend_headers
// says, nor whoever set them: its length and encoding; its trailers'
// announcement (the capture keeps the trailers themselves apart, and they
// are not the page's); its Accept-Ranges (the gateway serves no ranges of
// a page); and its validators, ETag and Last-Modified, which name the
// backend's window. A composed page carries no validator, so the gateway
// never has to answer a conditional request (If-None-Match,
// If-Modified-Since, ...) for it: such a request gets the page, 200, as
// from a server without validators. Were a page ever to carry one, the
// gateway would have to evaluate the client's conditionals against it
// itself, since the window calls never carry them (clientValidators).
// Its digests (RFC 9530's Content-Digest and Repr-Digest, RFC 3230's
// Digest, Content-MD5) are of the window's bytes: a client that checks
// one would refuse every page.
var answerHeaders = []string{
	"Content-Length", "Content-Encoding", "Transfer-Encoding", "Trailer", "Accept-Ranges", "Etag", "Last-Modified",
	"Content-Digest", "Repr-Digest", "Digest", "Content-Md5",
}

// addBackendHeaders puts the headers of one backend answer on h, the
// client's header map, as Caddy's reverse_proxy does with an upstream's
// (finalizeResponse, copyHeader): h's Server goes, and every backend value
// is added to what handlers before the gateway set there (`header
// Cache-Control ...`, `header Vary ...`), never replacing it. The answer
// is a sub-request's, captured in a map of its own, so it comes once
// whatever the number of calls, with the Via reverse_proxy gave it. Names
// in drop (canonical) are left out, and so are trailers announced in the
// header map (http.TrailerPrefix): they are the answer's, not the page's.
func addBackendHeaders(h, backend http.Header, drop map[string]bool) {
	delete(h, "Server")
	for k, v := range backend {
		if !drop[http.CanonicalHeaderKey(k)] && !strings.HasPrefix(k, http.TrailerPrefix) {
			h[k] = append(h[k], v...)
		}
	}
}

// exposeToBrowsers lists names in Access-Control-Expose-Headers when a
// browser's script may read the answer cross-origin: without that, fetch
// hides every header but a few, and a dashboard's walk stops after its
// first page without an error.
//
// A CORS answer is known by its Access-Control-Allow-Origin, set by the
// backend or by handlers before the gateway. Caddy's `header` directive
// sets its fields before the gateway runs, unless it is deferred (`>`,
// `?`, `defer`, or a deletion in the same directive), when it sets them
// only as the answer is written, after us. So a request that carries an
// Origin, which browsers send on every cross-origin fetch, gets the names
// listed too, with Vary: Origin, since that answer then differs from one
// to a request without Origin. The list is harmless on an answer that ends
// up without Access-Control-Allow-Origin: browsers then read nothing.
func exposeToBrowsers(h http.Header, r *http.Request, names []string) {
	if h.Get("Access-Control-Allow-Origin") == "" {
		if r.Header.Get("Origin") == "" {
			return
		}
		mergeTokens(h, "Vary", []string{"Origin"})
	}
	mergeTokens(h, "Access-Control-Expose-Headers", names)
}

// mergeTokens adds each of tokens to the comma-separated list of header
// name in h that does not hold it already, regardless of case. The field
// is rewritten as one line only when something was added.
func mergeTokens(h http.Header, name string, tokens []string) {
	var list []string
	for _, v := range h.Values(name) {
		for t := range strings.SplitSeq(v, ",") {
			if t = strings.TrimSpace(t); t != "" && !containsFold(list, t) {
				list = append(list, t)
			}
		}
	}
	added := false
	for _, t := range tokens {
		if !containsFold(list, t) {
			list, added = append(list, t), true
		}
	}
	if added {
		h.Set(name, strings.Join(list, ", "))
	}
}

func containsFold(list []string, s string) bool {
	for _, t := range list {
		if strings.EqualFold(t, s) {
			return true
		}
	}
	return false
}

// requestedURL is the URL the client asked for, before any rewrite in
// Caddy: the one the next page's Link names.
func requestedURL(r *http.Request) *url.URL {
	if orig, ok := r.Context().Value(caddyhttp.OriginalRequestCtxKey).(http.Request); ok && orig.URL != nil {
		return orig.URL
	}
	return r.URL
}

// validHeaderName reports whether name is an HTTP field name (RFC 9110
// token).
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}
