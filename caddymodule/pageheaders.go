package caddymodule

import (
	"net/http"
	"net/url"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/helpdesk-gateway/gateway/pageheader"
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
// join the site's as reverse_proxy's would (pageheader.AddBackend). Then
// next_page_cursor when more records exist (and, opted in, a Link to the
// next page), listed for browsers in Access-Control-Expose-Headers.
func (g *Gateway) pageHeaders(h http.Header, r *http.Request, backend http.Header, q pagequery.Query, cursor string) {
	pageheader.AddBackend(h, backend, g.dropHeaders)
	for _, k := range pageheader.AnswerOnly {
		h.Del(k) // the page's own, whoever set them
	}
	if cursor != "" {
		// Spelled as the spec spells it; header names are case-insensitive.
		h[nextPageCursor] = []string{cursor}
		if g.LinkHeader {
			h.Add("Link", pagequery.NextLink(requestedURL(r), q, cursor))
		}
	}
	pageheader.ExposeToBrowsers(h, r, g.exposed)
}

// requestedURL is the URL the client asked for, before any rewrite in
// Caddy: the one the next page's Link names.
func requestedURL(r *http.Request) *url.URL {
	if orig, ok := r.Context().Value(caddyhttp.OriginalRequestCtxKey).(http.Request); ok && orig.URL != nil {
		return orig.URL
	}
	return r.URL
}
