package caddymodule

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"unicode/utf8"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/helpdesk-gateway/gateway/caller"
	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/helpdesk-gateway/gateway/internal/redact"
	"github.com/helpdesk-gateway/gateway/legacy"
	"github.com/helpdesk-gateway/gateway/pageheader"
	"github.com/helpdesk-gateway/gateway/pagequery"
	"github.com/helpdesk-gateway/gateway/ticketfilter"
	"github.com/helpdesk-gateway/gateway/translate"
)

// filterParams is the parameter a filter endpoint checks.
var filterParams = []string{"_filters"}

// nextPageCursor is the response header that carries the next cursor.
const nextPageCursor = "next_page_cursor"

// ServeHTTP serves the owned endpoints and passes everything else on.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if r.URL.Path == g.OpenAPIPath && g.OpenAPIPath != "" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		g.serveOpenAPI(w, r)
		return nil
	}
	// HEAD is owned as GET is: it must answer with GET's headers, and on a
	// filter endpoint it must not carry unchecked _filters to the backend.
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return next.ServeHTTP(w, r)
	}
	ep, misspelt := g.route(r)
	if misspelt != "" {
		g.refuseSpelling(w, r, misspelt)
		return nil
	}
	if ep == nil {
		return next.ServeHTTP(w, r)
	}
	if ep.cursor {
		return g.serveCursor(w, r, next, ep)
	}
	return g.serveFilters(w, r, next, ep)
}

// serveFilters lets a ticket list through only when its _filters are valid;
// valid filters reach the backend byte for byte.
func (g *Gateway) serveFilters(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler, ep *endpoint) error {
	outcome, rejection := outcomeOK, ""
	defer func() {
		if ce := g.logger.Check(zap.DebugLevel, "filter request"); ce != nil {
			ce.Write(zap.String("endpoint", ep.name), zap.String("outcome", outcome), zap.String("rejection", rejection))
		}
	}()
	reject := func(reason, message string) error {
		outcome, rejection = outcomeClientError, reason
		metrics.filterRejections.WithLabelValues(reason).Inc()
		ep.m.clientError.Inc()
		writeError(w, http.StatusBadRequest, message)
		return nil
	}
	if len(r.URL.RawQuery) > g.MaxQueryLength {
		return reject("query", fmt.Sprintf("the query is longer than %d bytes", g.MaxQueryLength))
	}
	if err := pagequery.CheckEncoding(r.URL.RawQuery); err != nil {
		return reject("query", err.Error())
	}
	values, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return reject("query", "the query is not valid: "+err.Error())
	}
	for key := range values {
		if err := pagequery.ShadowError(key, key, filterParams); err != nil {
			return reject("query", err.Error())
		}
	}
	raw, ok := values["_filters"]
	switch {
	case !ok:
		return next.ServeHTTP(w, r)
	case len(raw) > 1:
		return reject("repeated", "_filters is repeated: send it once")
	}
	if _, err := g.filters.Parse(raw[0]); err != nil {
		reason := "syntax"
		var fe *ticketfilter.FilterError
		if errors.As(err, &fe) {
			reason = fe.Reason
		}
		return reject(reason, "invalid _filters: "+err.Error())
	}
	ep.m.ok.Inc()
	return next.ServeHTTP(w, r)
}

// serveCursor serves one page of a cursor endpoint.
func (g *Gateway) serveCursor(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler, ep *endpoint) error {
	// One debug line per request, whatever its outcome, filled in as the
	// request goes.
	var (
		outcome = outcomeClientError
		req     translate.Request
		f       *fetcher
		pg      *translate.Page
	)
	defer func() {
		g.logCursorRequest(ep, outcome, req, f, pg)
		f.free()
	}()

	q, err := g.parsePageQuery(r.URL.RawQuery)
	if err != nil {
		ep.m.clientError.Inc()
		writeError(w, http.StatusBadRequest, err.Error())
		return nil
	}
	req = translate.Request{List: g.listIdentity(r, q.Forward), Size: q.PerPage, Fresh: caller.WantsFresh(r.Header)}
	if q.Cursor != "" {
		req.After, err = cursor.Decode(q.Cursor)
		if err == nil {
			if bad := g.order.Check(req.After); bad != nil {
				err = &cursor.Error{Reason: bad.Error()}
			}
		}
		if err != nil {
			ep.m.clientError.Inc()
			writeError(w, http.StatusBadRequest, err.Error())
			return nil
		}
	} else if q.Page > 0 {
		req.Offset = (q.Page - 1) * q.PerPage
	}

	f = newFetcher(g, r, next, q.Forward)
	f.ep = ep
	defer f.release()
	pg, err = ep.engine.Page(r.Context(), f, req)
	ep.m.subrequests.Observe(float64(len(f.queries)))
	if err != nil {
		outcome = g.pageFailed(w, ep, f, err)
		metrics.requests.WithLabelValues(ep.name, outcome).Inc()
		return nil
	}
	outcome = outcomeOK
	ep.m.ok.Inc()
	ep.counts.Add(pg)
	if req.After != "" && pg.Stored == nil && !pg.Keyset { // the index was asked
		if pg.IndexHit {
			ep.m.hit.Inc()
		} else {
			ep.m.miss.Inc()
		}
	}
	if pg.Relocations > 0 {
		metrics.index.WithLabelValues(ep.name, "relocation").Add(float64(pg.Relocations))
		g.logger.Warn("relocated a stale position",
			zap.String("endpoint", ep.name), zap.String("cursor_id", req.After), zap.Int("relocations", pg.Relocations))
	}

	a := g.pageSource(f, pg)
	if pg.Stored != nil {
		ep.m.readahead.Inc()
	}
	var nextCursor string
	if pg.More {
		nextCursor = cursor.Encode(pg.IDs[len(pg.IDs)-1])
	}
	h := w.Header()
	g.pageHeaders(h, r, a.backendHeader(), q, nextCursor)
	// Most pages are a run of one bare-array answer's records, written
	// from the answer's own bytes; others are composed in a buffer.
	out, buf := a.page(pg.Records)
	if buf != nil {
		defer putPageBuffer(buf)
	}
	h.Set("Content-Length", strconv.Itoa(len(out)))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return nil // GET's headers, Content-Length included; no body
	}
	_, err = w.Write(out)
	return err
}

// pageSource returns the backend answer a page is cut from: one this
// request read, or the read-ahead window the page came from (an answer an
// earlier request of the same caller read, on this instance or, through
// readahead_store, on another).
func (g *Gateway) pageSource(f *fetcher, pg *translate.Page) composer {
	if pg.Stored != nil {
		return pg.Stored.Source().(composer)
	}
	return f.read[pg.Source]
}

// logCursorRequest writes the debug line of one cursor request. The parts
// not reached are zero: a request refused for its query has no cursor id
// and made no sub-request. The cursor id is logged, cut to a readable
// length; the query (credentials) and bodies are not.
func (g *Gateway) logCursorRequest(ep *endpoint, outcome string, req translate.Request, f *fetcher, pg *translate.Page) {
	ce := g.logger.Check(zap.DebugLevel, "cursor page")
	if ce == nil {
		return
	}
	var calls, records, relocations int
	var hit bool
	if f != nil {
		calls = len(f.queries)
	}
	if pg != nil {
		records, hit, relocations = len(pg.IDs), pg.IndexHit, pg.Relocations
	}
	ce.Write(
		zap.String("endpoint", ep.name),
		zap.String("outcome", outcome),
		zap.String("cursor_id", clip(req.After, 128)),
		zap.Int("per_page", req.Size),
		zap.Int("subrequests", calls),
		zap.Int("records", records),
		zap.Bool("index_hit", hit),
		zap.Bool("readahead", pg != nil && pg.Stored != nil),
		zap.Int("relocations", relocations),
	)
}

// pageFailed answers for a page the engine could not serve, and returns
// the outcome for the metrics. Nothing of a partial page is ever written.
func (g *Gateway) pageFailed(w http.ResponseWriter, ep *endpoint, f *fetcher, err error) string {
	var (
		se *statusError
		ue *upstreamError
		be *translate.BackendError
		bo *legacy.BodyError
		ce *translate.CallLimitError
	)
	switch {
	case errors.As(err, &se):
		h := w.Header()
		pageheader.AddBackend(h, se.answer.header, nil)
		if len(se.answer.trailer) == 0 {
			h.Set("Content-Length", strconv.Itoa(len(se.answer.body)))
		} else {
			h.Del("Content-Length") // chunked, so that the trailers go too
		}
		w.WriteHeader(se.answer.status)
		_, _ = w.Write(se.answer.body)
		for k, v := range se.answer.trailer {
			h[k] = v // sent as trailers: declared in Trailer, or prefixed
		}
		return outcomeBackend
	case errors.As(err, &ue):
		g.logger.Warn("backend unreachable",
			zap.String("endpoint", ep.name), zap.String("backend_query", lastQuery(f)), zap.Error(ue.err))
		msg := "the backend did not answer"
		switch {
		case ue.status == http.StatusGatewayTimeout:
			msg = "the backend did not answer in time"
		case errors.Is(ue.err, errBrokenOff):
			msg = errBrokenOff.Error()
		case errors.Is(ue.err, errNoAnswer):
			writeError(w, ue.status, "the gateway's route to the backend answered nothing: its operator must check the handlers after helpdesk_gateway")
			return outcomeUnavailable
		}
		writeError(w, ue.status, msg+"; try again later")
		return outcomeUnavailable
	case errors.As(err, &be), errors.As(err, &bo):
		metrics.unusable.WithLabelValues(ep.name).Inc()
		setting := ""
		if be != nil {
			setting = be.Setting
		}
		g.logger.Warn("unusable backend answer",
			zap.String("endpoint", ep.name), zap.String("backend_query", lastQuery(f)),
			zap.String("setting", setting), zap.Error(err))
		writeError(w, http.StatusBadGateway, err.Error())
		return outcomeUnusable
	case errors.As(err, &ce):
		g.logger.Warn("sub-request limit reached",
			zap.String("endpoint", ep.name), zap.Int("max_subrequests", g.MaxSubrequests))
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, fmt.Sprintf(
			"this page needed more than max_subrequests (%d) backend calls to find its place, as when records change quickly; retry the same request", g.MaxSubrequests))
		return outcomeLimit
	case errors.Is(err, context.Canceled):
		return outcomeError // the client went away; nothing to write
	default:
		g.logger.Error("cursor page failed", zap.String("endpoint", ep.name), zap.Error(err))
		writeError(w, http.StatusInternalServerError, "the gateway could not serve this page: "+err.Error())
		return outcomeError
	}
}

// lastQuery is the last backend query, fit for a log.
func lastQuery(f *fetcher) string {
	if len(f.queries) == 0 {
		return ""
	}
	return redact.Query(f.queries[len(f.queries)-1])
}

// clip cuts s to at most n bytes for a log line, on a character boundary,
// marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
