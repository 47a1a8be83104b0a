package caddymodule

import (
	"crypto/sha256"
	"net/http"
	"slices"
	"strings"
)

// perRequestHeaders are the request headers that do not make a caller's
// view of a list: they change from one request to the next of the same
// caller (trace and request ids, the forwarding chain), or they describe
// the client's page rather than the backend's answer (validators, ranges,
// cache directives: the gateway's backend calls carry none of them), or
// the connection (hop-by-hop headers, the encoding the gateway sets
// itself). Every other header counts: two requests that differ in any of
// them (an API key, a cookie, a language) are two callers.
//
// X-B3-* and X-Amzn-Trace-* are families: perRequestPrefixes. The
// X-Forwarded-* headers of the forwarding chain are named one by one:
// others of that prefix name the caller (oauth2-proxy's X-Forwarded-User,
// -Email, -Groups and -Access-Token; Envoy's X-Forwarded-Client-Cert) and
// count, as every header not listed here does.
var perRequestHeaders = []string{
	// Trace and request ids.
	"Traceparent", "Tracestate", "Baggage", "B3", "Uber-Trace-Id", "Sentry-Trace",
	"X-Request-Id", "Request-Id", "X-Correlation-Id", "X-Cloud-Trace-Context",
	// The forwarding chain.
	"Forwarded", "Via", "X-Real-Ip",
	"X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "X-Forwarded-Port",
	"X-Forwarded-Prefix", "X-Forwarded-Server", "X-Forwarded-Ssl", "X-Forwarded-Scheme",
	"X-Forwarded-Protocol",
	// What describes the client's page, not the backend's answer.
	"If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since", "If-Range", "Range",
	"Cache-Control", "Pragma",
	// The connection, and the encoding the gateway asks for itself.
	"Connection", "Keep-Alive", "Proxy-Connection", "Te", "Trailer", "Transfer-Encoding",
	"Upgrade", "Content-Length", "Accept-Encoding",
}

// perRequestPrefixes are the header families perRequestHeaders names.
var perRequestPrefixes = []string{"X-B3-", "X-Amzn-Trace-"}

// perRequest reports whether a canonical header name is per request.
func perRequest(name string) bool {
	if slices.Contains(perRequestHeaders, name) {
		return true
	}
	for _, p := range perRequestPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// listIdentity names the list a request reads as its caller sees it: the
// path, the client's own (non-paging) parameters as forwarded, the host,
// and the values of every request header but the per-request ones. It is
// the one key of everything the gateway keeps per list: the position
// index, the page sizes learned from the backend, the walk's read-ahead
// pace and its windows. Two API keys walking one list are two lists here,
// so neither's records, cost or learned limits reach the other.
//
// The headers go in as a SHA-256 of their names and values, sorted: the
// identity stays short whatever the headers, holds no credential in the
// clear, and two callers cannot be made to share one (windows, which are
// content, are keyed by the identity in full).
func listIdentity(r *http.Request, forward string) string {
	var room [32]string
	names := room[:0]
	for name := range r.Header {
		if !perRequest(name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	h := sha256.New()
	var sep = []byte{0}
	h.Write([]byte(r.Host))
	for _, name := range names {
		h.Write(sep)
		h.Write([]byte(name))
		for _, v := range r.Header[name] {
			h.Write(sep)
			h.Write([]byte(v))
		}
	}
	var sum [sha256.Size]byte
	var b strings.Builder
	b.Grow(len(r.URL.Path) + 1 + len(forward) + 1 + sha256.Size)
	b.WriteString(r.URL.Path)
	b.WriteByte('?')
	b.WriteString(forward)
	b.WriteByte(0)
	b.Write(h.Sum(sum[:0]))
	return b.String()
}

// wantsFresh reports whether the request asks for the backend's own
// answer rather than a stored one, as RFC 9111 asks of a cache: a
// Cache-Control of no-cache or max-age=0, or, without Cache-Control, the
// HTTP/1.0 Pragma: no-cache (section 5.4). Such a request is never
// served from a read-ahead window.
func wantsFresh(h http.Header) bool {
	cc, ok := h["Cache-Control"]
	if !ok {
		for _, v := range h["Pragma"] {
			if hasDirective(v, "no-cache") {
				return true
			}
		}
		return false
	}
	for _, v := range cc {
		if hasDirective(v, "no-cache") || hasDirective(v, "no-store") || maxAgeZero(v) {
			return true
		}
	}
	return false
}

// maxAgeZero reports whether a Cache-Control list holds a max-age of
// zero seconds, however written: max-age=0, max-age=00, or the quoted
// max-age="0" that RFC 9111 (section 5.2) asks recipients to accept.
func maxAgeZero(list string) bool {
	for part := range strings.SplitSeq(list, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || !strings.EqualFold(name, "max-age") {
			continue
		}
		if len(value) >= 2 && value[0] == '"' && value[len(value)-1] == '"' {
			value = value[1 : len(value)-1]
		}
		if value != "" && strings.Trim(value, "0") == "" {
			return true
		}
	}
	return false
}

// hasDirective reports whether a comma-separated directive list holds d,
// compared without case. A no-cache with a field list (no-cache="x")
// counts as no-cache.
func hasDirective(list, d string) bool {
	for part := range strings.SplitSeq(list, ",") {
		part = strings.TrimSpace(part)
		if strings.EqualFold(part, d) {
			return true
		}
		if name, _, ok := strings.Cut(part, "="); ok && d == "no-cache" && strings.EqualFold(strings.TrimSpace(name), d) {
			return true
		}
	}
	return false
}
