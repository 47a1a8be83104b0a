// Package caller tells callers apart: what of a request makes its
// caller, as far as the backend may see it (the Host, the client address,
// the scheme, a trusted proxy's forwarding headers, the client
// certificate, caller_key values, every header but the per-request ones),
// and the list identity built from it. Everything the gateway keeps per
// list is keyed by that identity, so that no caller's records, cost or
// learned limits reach another. It is plain net/http: the facts only
// Caddy knows come in as Facts.
package caller

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"

	"github.com/helpdesk-gateway/gateway/frame"
)

// Facts are what makes a caller beyond its request's own bytes, as the
// server that runs the gateway knows them: they come from Caddy (its
// resolved client address, its placeholders), so the gateway reads them
// and this package stays free of Caddy.
type Facts struct {
	// Client is the client address as the server resolved it (Caddy's
	// trusted_proxies and client_ip_headers: {http.vars.client_ip}).
	Client string
	// Forwarded reports that the handlers after the gateway pass the
	// client's X-Forwarded-For, -Proto and -Host on to the backend: the
	// request came from a trusted proxy. Then they make the caller.
	Forwarded bool
	// Keys are the caller_key values, placeholders as written; Replace,
	// when not nil, gives each its value for the request.
	Keys    []string
	Replace func(key string) string
}

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
// X-Forwarded-* headers of the forwarding chain are named one by one
// (from a trusted proxy, of the server's trusted_proxies or of those of
// a reverse_proxy after the gateway, appendFacts reads those
// reverse_proxy passes on):
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

// perRequestSet is perRequestHeaders as a set: a header name is looked
// up in it for every header of every cursor request.
var perRequestSet = func() map[string]bool {
	m := make(map[string]bool, len(perRequestHeaders))
	for _, name := range perRequestHeaders {
		m[name] = true
	}
	return m
}()

// perRequest reports whether a canonical header name is per request.
func perRequest(name string) bool {
	if perRequestSet[name] {
		return true
	}
	for _, p := range perRequestPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// List names the list a request reads as its caller sees it: the
// path, the client's own (non-paging) parameters as forwarded, and the
// caller, which is everything the backend may see of the request (see
// appendFacts). It is the one key of everything the gateway keeps per
// list: the position index, the page sizes learned from the backend, the
// walk's read-ahead pace and its windows. Two API keys walking one list
// are two lists here, so neither's records, cost or learned limits reach
// the other.
//
// The caller goes in as a SHA-256 of its facts, each framed by its length
// (so that no two sets of facts frame to the same bytes): the identity
// stays short whatever the headers, holds no credential in the clear, and
// two callers cannot be made to share one (windows, which are content,
// are keyed by the identity in full). The caller's hash is always the
// last sha256.Size bytes (see Of).
func List(r *http.Request, forward string, f Facts) string {
	var room [1024]byte
	sum := sha256.Sum256(appendFacts(room[:0], r, f))
	var b strings.Builder
	b.Grow(len(r.URL.Path) + 1 + len(forward) + 1 + sha256.Size)
	b.WriteString(r.URL.Path)
	b.WriteByte('?')
	b.WriteString(forward)
	b.WriteByte(0)
	b.Write(sum[:])
	return b.String()
}

// Of returns the caller part of a list identity: the hash of what
// the backend may see of the caller, the same for every list it reads.
func Of(list string) string {
	return list[max(len(list)-sha256.Size, 0):]
}

// Params returns the list part of a list identity: its path, '?' and
// the client's own parameters, the same for every caller of that list.
func Params(list string) string {
	return list[:max(len(list)-sha256.Size-1, 0)]
}

// appendFacts appends to b the facts that make r's caller, each framed
// by its length, in a fixed order:
//
//   - the Host;
//   - the client address as Caddy resolves it (Facts.Client), which
//     reverse_proxy sends as X-Forwarded-For;
//   - the connection's scheme, which reverse_proxy sends as
//     X-Forwarded-Proto, and from a trusted proxy its own address and the
//     X-Forwarded-For chain (reverse_proxy sends both, the address last),
//     X-Forwarded-Proto and X-Forwarded-Host it passes on (from
//     anyone else reverse_proxy replaces them with the client address,
//     the scheme and the Host, already in). A proxy is trusted by the
//     server's trusted_proxies, or by the handler-level trusted_proxies
//     of a reverse_proxy after the gateway: Facts.Forwarded;
//   - the SHA-256 fingerprint of the TLS client certificate, if any;
//   - the values of the caller_key placeholders;
//   - every request header but the per-request ones and those the client
//     names in Connection (reverse_proxy drops them: the backend never
//     sees them), by sorted name, each value framed.
func appendFacts(b []byte, r *http.Request, f Facts) []byte {
	b = frame.AppendField(b, r.Host)
	b = frame.AppendField(b, f.Client)
	if r.TLS != nil {
		b = append(b, 1) // https; reverse_proxy's X-Forwarded-Proto unless a trusted proxy sent one
	} else {
		b = append(b, 0)
	}
	if f.Forwarded {
		// reverse_proxy appends the trusted proxy's own address (the
		// connection's peer) to the chain it passes on.
		b = append(b, 1)
		b = frame.AppendField(b, peerHost(r))
		b = frame.AppendValues(b, r.Header["X-Forwarded-For"])
		b = frame.AppendField(b, lastValue(r.Header, "X-Forwarded-Proto"))
		b = frame.AppendField(b, lastValue(r.Header, "X-Forwarded-Host"))
	} else {
		b = append(b, 0)
	}
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		fp := sha256.Sum256(r.TLS.PeerCertificates[0].Raw)
		b = append(b, 1)
		b = append(b, fp[:]...)
	} else {
		b = append(b, 0)
	}
	for _, key := range f.Keys {
		v := key
		if f.Replace != nil {
			v = f.Replace(key)
		}
		b = frame.AppendField(b, v)
	}

	var room [32]string
	names := room[:0]
	dropped := r.Header["Connection"]
	for name := range r.Header {
		if !perRequest(name) && !namedIn(dropped, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	b = binary.AppendUvarint(b, uint64(len(names)))
	for _, name := range names {
		b = frame.AppendField(b, name)
		b = frame.AppendValues(b, r.Header[name])
	}
	return b
}

// PeerIn reports whether r's peer, the connection's address and not a
// header's, is in one of prefixes: as reverse_proxy checks its
// trusted_proxies before it passes a client's X-Forwarded-* on.
func PeerIn(r *http.Request, prefixes []netip.Prefix) bool {
	if len(prefixes) == 0 {
		return false
	}
	host, _, _ := strings.Cut(peerHost(r), "%")
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(prefixes, func(p netip.Prefix) bool { return p.Contains(addr) })
}

// peerHost returns the host of the connection's peer address.
func peerHost(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// namedIn reports whether the Connection header values list name, as
// tokens compared without case (RFC 9110, section 7.6.1).
func namedIn(connection []string, name string) bool {
	for _, v := range connection {
		for tok := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(tok), name) {
				return true
			}
		}
	}
	return false
}

// lastValue is the last value of a header, as reverse_proxy reads
// X-Forwarded-Proto and -Host.
func lastValue(h http.Header, name string) string {
	if v := h[name]; len(v) > 0 {
		return v[len(v)-1]
	}
	return ""
}

// WantsFresh reports whether the request asks for the backend's own
// answer rather than a stored one, as RFC 9111 asks of a cache: a
// Cache-Control of no-cache or max-age=0, or, without Cache-Control, the
// HTTP/1.0 Pragma: no-cache (section 5.4). Such a request is never
// served from a read-ahead window.
func WantsFresh(h http.Header) bool {
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

// CheckKeys refuses a caller_key value with no placeholder: a
// constant is the same for every caller, so it would tell none apart,
// and is most likely a placeholder mistyped.
func CheckKeys(keys []string) error {
	for _, k := range keys {
		open := strings.IndexByte(k, '{')
		if open < 0 || !strings.Contains(k[open:], "}") {
			return fmt.Errorf("caller_key: %q holds no placeholder such as {http.auth.user.id} or {http.vars.tenant}; a constant is the same for every caller", k)
		}
	}
	return nil
}
