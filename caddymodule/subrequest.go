package caddymodule

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strconv"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// clientValidators are the request headers that make an answer
// conditional or partial: the client's validators and ranges. They
// describe the client's page (which the gateway composes), not the
// gateway's windows, so a window call never carries them: a backend that
// honours them would answer 304 (no body to cut a page from) or 206 (a
// piece of its JSON), and the client would get a 304 for a page the
// gateway composed, or a 502. Requests the gateway does not own keep
// them, as every other header. Canonical names, as in http.Header.
var clientValidators = []string{"If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since", "If-Range", "Range"}

// capture is the writer of one sub-request. It has a header map of its own:
// caddyhttp.NewResponseRecorder would write the backend's headers into the
// client's map, once per call, and leak them into the client's response.
//
// Once the status is written, Header returns a map of its own, trailer:
// what a handler adds to the header map after that is the answer's
// trailers (reverse_proxy copies the backend's trailers so), and must not
// become headers of a page.
type capture struct {
	header  http.Header
	trailer http.Header // made when a trailer comes
	status  int
	body    []byte
	limit   int64
	over    bool // the body went past limit
}

// newCapture returns a capture that appends the body to buf.
func newCapture(limit int64, buf []byte) *capture {
	return &capture{header: make(http.Header), limit: limit, body: buf}
}

func (c *capture) Header() http.Header {
	if c.status == 0 {
		return c.header
	}
	if c.trailer == nil {
		c.trailer = make(http.Header)
	}
	return c.trailer
}

func (c *capture) WriteHeader(status int) {
	if c.status == 0 && status >= 200 {
		c.status = status
		// Room for the whole body at once, when its length is known and
		// allowed: no growing by copies as the proxy writes it in pieces.
		// Up to maxPooledBuffer only: the header is the backend's word, and
		// a false one must not make us hold max_body_size before a byte
		// has come; a larger body grows by append as it arrives.
		if n, err := strconv.ParseInt(c.header.Get("Content-Length"), 10, 64); err == nil && n > int64(cap(c.body)) && n <= c.limit {
			c.body = make([]byte, 0, min(n, maxPooledBuffer))
		}
	}
}

func (c *capture) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	if int64(len(c.body)+len(p)) > c.limit {
		c.over = true
		return 0, errBodyTooLarge
	}
	c.body = append(c.body, p...)
	return len(p), nil
}

// Flush is a no-op: the answer is used only once complete.
func (c *capture) Flush() {}

var errBodyTooLarge = errors.New("backend answer larger than max_body_size")

// statusError carries a backend answer that was not 2xx; it goes back to
// the client as it came: a 401 from the backend is the client's business.
type statusError struct{ answer *capture }

func (e *statusError) Error() string { return fmt.Sprintf("backend answered %d", e.answer.status) }

// upstreamError is a failure to get an answer at all: the backend is down
// or slower than the proxy's timeouts.
type upstreamError struct {
	status int
	err    error
}

func (e *upstreamError) Error() string { return e.err.Error() }
func (e *upstreamError) Unwrap() error { return e.err }

// callContext is a backend call's context: the request's, with the call's
// own copies of the two maps that Caddy's handlers write per request, in
// one context where two WithValue layers were an allocation each.
//   - The vars: reverse_proxy writes its dial details there, and a dial
//     it started may read them after the call returned, while the next
//     call writes them.
//   - The route groups done: Caddy marks a group (every rewrite of a
//     Caddyfile, every handle block) done in a map, so with one map a
//     call's rewrite would be done for the next calls (they would reach
//     the backend at the client's path), and a read ahead would write it
//     beside a page's call. Each call starts from the groups done before
//     the gateway.
type callContext struct {
	context.Context
	vars   map[string]any
	groups map[string]struct{}
}

// newCallContext returns ctx with the call's own copies of its maps, or
// ctx when it has neither.
func newCallContext(ctx context.Context) context.Context {
	vars, _ := ctx.Value(caddyhttp.VarsCtxKey).(map[string]any)
	groups, _ := ctx.Value(routeGroupKey).(map[string]struct{})
	if vars == nil && groups == nil {
		return ctx
	}
	return &callContext{Context: ctx, vars: maps.Clone(vars), groups: maps.Clone(groups)}
}

func (c *callContext) Value(key any) any {
	switch {
	case key == caddyhttp.VarsCtxKey && c.vars != nil:
		return c.vars
	case key == routeGroupKey && c.groups != nil:
		return c.groups
	}
	return c.Context.Value(key)
}

// routeGroupKey is the context key under which Caddy keeps a request's
// route groups done (caddyhttp's routeGroupCtxKey, unexported): a context
// key of type caddy.CtxKey is its name. A constant, as caddyhttp.VarsCtxKey
// is: a variable would cost an allocation each time it is asked for
// (TestFetchAllocations).
const routeGroupKey caddy.CtxKey = "route_group"

// errNoAnswer is a backend call that no handler after the gateway
// answered.
var errNoAnswer = errors.New("no handler after helpdesk_gateway answered the backend call; check the routes after it")

// errBrokenOff is a backend answer that ended before its body did.
var errBrokenOff = errors.New("the backend's answer broke off")

// serveSubrequest calls next for one sub-request. Once it has written an
// answer's headers, reverse_proxy panics with http.ErrAbortHandler when the
// body cannot be copied: the backend broke off, or the capture refused
// bytes past max_body_size. For a sub-request that is an answer we did not
// get, not a reason to drop the client's connection: the client gets a 502.
func serveSubrequest(next caddyhttp.Handler, w http.ResponseWriter, r *http.Request) (err error) {
	defer func() {
		if v := recover(); v != nil {
			if v != http.ErrAbortHandler {
				panic(v)
			}
			err = caddyhttp.Error(http.StatusBadGateway, errBrokenOff)
		}
	}()
	return next.ServeHTTP(w, r)
}

// Interface guards
var (
	_ http.ResponseWriter = (*capture)(nil)
	_ http.Flusher        = (*capture)(nil)
)
