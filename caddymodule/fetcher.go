package caddymodule

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/helpdesk-gateway/gateway/legacy"
	"github.com/helpdesk-gateway/gateway/translate"
)

// fetcher makes the backend calls of one client request through the next
// handler, so upstream selection, health checks, TLS, timeouts and header
// rules stay reverse_proxy's own. Its life, in this file: newFetcher takes
// it from a pool; Fetch makes each call (subrequest.go captures it);
// Release, Keep and Lend hand each answer back, to a read-ahead window or
// to the shared store; Detach makes the fetcher of a read ahead; free
// gives it back.
type fetcher struct {
	g       *Gateway
	r       *http.Request
	next    caddyhttp.Handler
	forward string    // the client's own parameters
	ep      *endpoint // whose counters a read ahead adds its calls to
	fetched int       // records the backend sent, over the calls

	read    []*answerBuf // per call, the answer parsed; nil once released
	queries []string     // backend queries, for logs
	answers []*answerBuf // per call, the buffer to give back; nil once given

	// held and peak are the bytes of the answers held now and at most:
	// what a page in flight keeps of its backend answers.
	held, peak int

	// room backs the slices above for the first calls: a sequential walk
	// makes one call a page, and slices grown from nil were an allocation
	// each on every page (see useRoom).
	room struct {
		read    [2]*answerBuf
		queries [2]string
		answers [2]*answerBuf
	}
}

var fetcherPool = sync.Pool{New: func() any { return new(fetcher) }}

// newFetcher returns a fetcher for one client request, from the pool: it
// is a few hundred bytes with its room, made for every page.
func newFetcher(g *Gateway, r *http.Request, next caddyhttp.Handler, forward string) *fetcher {
	f := fetcherPool.Get().(*fetcher)
	f.g, f.r, f.next, f.forward = g, r, next, forward
	return f
}

// useRoom points the fetcher's empty slices at its own room, once.
func (f *fetcher) useRoom() {
	if f.read == nil {
		f.read = f.room.read[:0]
	}
	if f.queries == nil {
		f.queries = f.room.queries[:0]
	}
	if f.answers == nil {
		f.answers = f.room.answers[:0]
	}
}

func (f *fetcher) Fetch(ctx context.Context, w translate.Window) (translate.Batch, error) {
	if !w.Keyset() && !w.Aligned() && !f.g.dialect.Offsets() {
		// The engine plans such windows for offset backends only; a
		// keyset window (records above an id) has no offset.
		return translate.Batch{}, fmt.Errorf("window at offset %d of size %d is not a page the backend can be asked for", w.Start, w.Size)
	}
	f.useRoom()
	// One string holds the request URI and, after its '?', the query:
	// one allocation where building each apart took three. (The URI is
	// what URL.RequestURI gives for a server request's path and query.)
	var room [256]byte
	path := f.r.URL.EscapedPath()
	uri := append(room[:0], path...)
	uri = append(uri, '?')
	requestURI := string(f.g.dialect.AppendQuery(uri, f.forward, f.g.BackendSort, w))
	query := requestURI[len(path)+1:]
	f.queries = append(f.queries, query)
	// Each call gets a fresh clone with its own query: the client's request
	// must stay as it came for the calls after this one (callContext).
	req := f.r.Clone(newCallContext(ctx))
	req.Method = http.MethodGet // a client's HEAD too: the page is cut from the body
	req.URL.RawQuery = query
	req.RequestURI = requestURI
	req.Body = http.NoBody
	req.ContentLength = 0
	for _, name := range clientValidators {
		delete(req.Header, name)
	}
	// The body is parsed here; Caddy's encode compresses the client's answer.
	// The clone's values are its own copies, so a client's one value is
	// overwritten in place, without a new slice.
	if v := req.Header["Accept-Encoding"]; len(v) == 1 {
		v[0] = "identity"
	} else {
		req.Header.Set("Accept-Encoding", "identity")
	}

	buf := answerPool.Get().(*answerBuf)
	f.answers = append(f.answers, buf)
	answer := buf.newCapture(f.g.MaxBodySize)
	err := serveSubrequest(f.next, answer, req)
	buf.raw = answer.body
	f.held += len(buf.raw)
	f.peak = max(f.peak, f.held)
	switch {
	case answer.over:
		return translate.Batch{}, &legacy.BodyError{Reason: fmt.Sprintf("the answer is larger than max_body_size (%d bytes)", f.g.MaxBodySize)}
	case ctx.Err() != nil:
		return translate.Batch{}, ctx.Err() // the client went away: not the backend's fault
	case err != nil:
		status := http.StatusBadGateway
		var he caddyhttp.HandlerError
		if errors.As(err, &he) && he.StatusCode >= 500 {
			status = he.StatusCode
		}
		return translate.Batch{}, &upstreamError{status: status, err: err}
	case answer.status == 0:
		// No handler after the gateway answered: the routes after it
		// sent the call nowhere. Caddy would answer a client an empty
		// 200; a window needs an answer.
		return translate.Batch{}, &upstreamError{status: http.StatusBadGateway, err: errNoAnswer}
	case answer.status < 200 || answer.status > 299:
		return translate.Batch{}, &statusError{answer}
	}
	body := &buf.body
	drop := f.g.dropMembers
	if w.Keyset() {
		drop = f.g.dropKeyset
	}
	if err := body.ParseWithout(answer.body, f.g.RecordsPath, f.g.IDField, drop); err != nil {
		return translate.Batch{}, err
	}
	f.read = append(f.read, buf)
	f.fetched += len(body.IDs)
	return translate.Batch{IDs: body.IDs, Records: body.Records}, nil
}

// free gives the fetcher back once nothing reads it any more: after the
// page is written and logged, and its answers released. A nil fetcher (a
// request refused before it had one) is left alone.
func (f *fetcher) free() {
	if f == nil {
		return
	}
	f.release()
	*f = fetcher{} // drops the request, the answers and the room's pointers
	fetcherPool.Put(f)
}

// release gives the fetcher's answers back for reuse. Nothing read from
// them (ids, records, a backend's error body) may be used afterwards.
func (f *fetcher) release() {
	for i := range f.answers {
		f.Release(i)
	}
	f.answers = f.answers[:0]
}

// Release gives back the answer of one call as soon as the engine is done
// with it: a search probe that gave the page nothing. A cold cursor's
// search then holds one probe at a time, not every probe until the page
// is written.
func (f *fetcher) Release(call int) {
	if call < 0 || call >= len(f.answers) || f.answers[call] == nil {
		return
	}
	a := f.answers[call]
	f.answers[call] = nil
	f.held -= len(a.raw)
	if call < len(f.read) {
		f.read[call] = nil
	}
	if cap(a.raw) <= maxPooledBuffer {
		// Drop the ids and records of this answer, so that a buffer
		// replaced by a larger one is not kept alive through them.
		clear(a.body.IDs)
		clear(a.body.Records)
		answerPool.Put(a)
	}
}

// Keep hands the answer of one call over to a read-ahead window: it
// leaves the fetcher's pool for good (the window's ids and records point
// into it, and live as long as the window or a page cut from it), and
// the window composes its pages from it as the page read now is composed.
// It returns the answer and the bytes it holds.
func (f *fetcher) Keep(call int) (source any, bytes int) {
	if call < 0 || call >= len(f.answers) || f.answers[call] == nil {
		return nil, 0
	}
	a := f.answers[call]
	f.answers[call] = nil
	f.held -= len(a.raw)
	a.kept = true
	return a, a.size()
}

// Lend returns the answer of one call for a shared store to copy a
// window from (liststore.WindowCopier): the answer stays the fetcher's,
// and goes back to the pool with the request's other answers.
func (f *fetcher) Lend(call int) (source any) {
	if call < 0 || call >= len(f.answers) || f.answers[call] == nil {
		return nil
	}
	return f.answers[call]
}

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
			ep.counts.AddAhead(len(d.queries), d.fetched)
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

// Interface guards
var (
	_ translate.Fetcher  = (*fetcher)(nil)
	_ translate.Releaser = (*fetcher)(nil)
	_ translate.Keeper   = (*fetcher)(nil)
	_ translate.Lender   = (*fetcher)(nil)
	_ translate.Detacher = (*fetcher)(nil)
)
