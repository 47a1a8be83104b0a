// Package pageheader decides the headers of a page the gateway composes
// from backend answers: which of an answer's headers describe the answer
// rather than the page (AnswerOnly, Keeps), how the rest join the headers
// the site set, as reverse_proxy joins an upstream's (AddBackend), and
// how a browser's script gets to read the next page's cursor
// (ExposeToBrowsers). It is plain net/http, so a page composed on
// another instance, from a shared window, gets the same headers.
package pageheader

import (
	"net/http"
	"strings"
)

// AnswerOnly are the headers that describe the backend answer a page starts in, not the
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
var AnswerOnly = []string{
	"Content-Length", "Content-Encoding", "Transfer-Encoding", "Trailer", "Accept-Ranges", "Etag", "Last-Modified",
	"Content-Digest", "Repr-Digest", "Digest", "Content-Md5",
}

// AddBackend puts the headers of one backend answer on h, the
// client's header map, as Caddy's reverse_proxy does with an upstream's
// (finalizeResponse, copyHeader): h's Server goes, and every backend value
// is added to what handlers before the gateway set there (`header
// Cache-Control ...`, `header Vary ...`), never replacing it. The answer
// is a sub-request's, captured in a map of its own, so it comes once
// whatever the number of calls, with the Via reverse_proxy gave it. Names
// in drop (canonical) are left out, and so are trailers announced in the
// header map (http.TrailerPrefix): they are the answer's, not the page's.
func AddBackend(h, backend http.Header, drop map[string]bool) {
	delete(h, "Server")
	for k, v := range backend {
		if !drop[http.CanonicalHeaderKey(k)] && !strings.HasPrefix(k, http.TrailerPrefix) {
			h[k] = append(h[k], v...)
		}
	}
}

// ExposeToBrowsers lists names in Access-Control-Expose-Headers when a
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
func ExposeToBrowsers(h http.Header, r *http.Request, names []string) {
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

// ValidName reports whether name is an HTTP field name (RFC 9110
// token).
func ValidName(name string) bool {
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

// Keeps reports whether a page passes on the backend header k, drop
// holding the canonical names of drop_backend_headers.
func Keeps(k string, drop map[string]bool) bool {
	if strings.HasPrefix(k, http.TrailerPrefix) || drop[http.CanonicalHeaderKey(k)] {
		return false
	}
	for _, h := range AnswerOnly {
		if strings.EqualFold(h, k) {
			return false
		}
	}
	return true
}
