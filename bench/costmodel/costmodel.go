// Package costmodel walks a list through the gateway's paging engine in
// process, with no server and no socket, so that what a whole walk costs
// the backend can be counted: the reference backend's counters (calls,
// records sent, records stepped over by offsets) in the tests of this
// package, and a SQL engine's time in the SQLite benchmark of
// bench/sqlbench, a module of its own.
//
// The engine is set up as the gateway sets up a cursor endpoint by
// default (backend_max_per_page 1000, index_size 100000, readahead_memory
// 64 MiB), with a fetcher that calls the backend's handler directly in
// place of Caddy's sub-request. Reads ahead of the walker run in the
// background as in the gateway, and the walk waits for them after each
// page, so that what a walk costs does not hang on goroutines' timing.
package costmodel

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/helpdesk-gateway/gateway/legacy"
	"github.com/helpdesk-gateway/gateway/translate"
)

// The gateway's defaults that bound a walk's windows (caddymodule's
// options.go).
const (
	MaxPageSize = 1000     // backend_max_per_page
	IndexSize   = 100_000  // index_size
	Memory      = 64 << 20 // readahead_memory
)

// ReadaheadTTL is the windows' lifetime in these walks: longer than the
// gateway's default of 2 s, so that a walk slowed by the race detector
// or a busy machine still reads its windows at full size (liststore's
// Walk.Ahead bounds them by the walker's pace within the TTL). The
// figures are those of a walker that keeps up.
const ReadaheadTTL = time.Minute

// DefaultSort is the gateway's backend_sort: the list in id order.
const DefaultSort = "_sortField=id&_sortDir=ASC"

// NewEngine returns an engine for a backend of dialect d, as the gateway
// makes one per cursor endpoint, with read-ahead windows living ttl (0:
// read-ahead off).
func NewEngine(d legacy.Dialect, ttl time.Duration) *translate.Engine {
	store := translate.NewMemoryStore(cursor.Numeric, ttl, Memory)
	e := &translate.Engine{
		Order:       cursor.Numeric,
		MaxPageSize: MaxPageSize,
		Index:       store.Index(IndexSize),
		Offsets:     d.Offsets(),
		Lists:       store,
	}
	if d.Keysets() {
		e.Keyset = d.KeysetCheck
		e.KeysetInclusive = d.KeysetInclusive()
	}
	return e
}

// Fetcher makes the engine's backend calls to an http.Handler in process:
// the query the gateway would send (legacy.Dialect.AppendQuery), served
// by Backend's ServeHTTP, the answer parsed as the gateway parses it. It
// holds nothing between calls, so one Fetcher serves concurrent pages and
// the reads ahead of the walker (it is its own Detacher).
type Fetcher struct {
	Backend http.Handler
	Path    string // the list's path, e.g. /calls
	Dialect legacy.Dialect
	Sort    string // backend_sort; DefaultSort when empty
	// RecordsPath and IDField are records_path and id_field: where the
	// records and each one's id are; the bare array and "id" when empty.
	RecordsPath, IDField string
}

// Fetch implements translate.Fetcher.
func (f *Fetcher) Fetch(ctx context.Context, w translate.Window) (translate.Batch, error) {
	if !w.Keyset() && !w.Aligned() && !f.Dialect.Offsets() {
		return translate.Batch{}, fmt.Errorf("window at offset %d of size %d is not a page the backend can be asked for", w.Start, w.Size)
	}
	sort := f.Sort
	if sort == "" {
		sort = DefaultSort
	}
	uri := string(f.Dialect.AppendQuery([]byte(f.Path+"?"), "", sort, w))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, uri, nil)
	if err != nil {
		return translate.Batch{}, err
	}
	req.RequestURI = uri
	var rec recorder
	f.Backend.ServeHTTP(&rec, req)
	if rec.status != 0 && rec.status != http.StatusOK {
		return translate.Batch{}, &translate.BackendError{Window: w, Reason: fmt.Sprintf("status %d: %.200s", rec.status, rec.body)}
	}
	id := f.IDField
	if id == "" {
		id = "id"
	}
	b, err := legacy.ParseBody(rec.body, f.RecordsPath, id)
	if err != nil {
		return translate.Batch{}, err
	}
	return translate.Batch{IDs: b.IDs, Records: b.Records}, nil
}

// Detach implements translate.Detacher: the reads ahead of the walker go
// to the same backend, in a context of their own.
func (f *Fetcher) Detach() (translate.Fetcher, context.Context, func(error), bool) {
	return f, context.Background(), func(error) {}, true
}

// recorder is the smallest ResponseWriter: the status and the body.
type recorder struct {
	h      http.Header
	status int
	body   []byte
}

func (r *recorder) Header() http.Header {
	if r.h == nil {
		r.h = http.Header{}
	}
	return r.h
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	r.body = append(r.body, p...)
	return len(p), nil
}

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

// Walk is what a whole walk was served.
type Walk struct {
	Pages   int // pages served, the last (short or empty) one included
	Records int // records served
	Last    string
}

// WalkList walks list from its first page to its end by next-page
// cursors, size records a page, as one client following
// next_page_cursor: list is the list identity (one caller's). It fails
// when a page fails or the walk's ids do not ascend by the id order, as a
// walk that skipped or repeated records would show.
func WalkList(ctx context.Context, e *translate.Engine, f translate.Fetcher, list string, size int) (Walk, error) {
	var w Walk
	var last int64
	for {
		pg, err := e.Page(ctx, f, translate.Request{List: list, After: w.Last, Size: size})
		e.WaitAhead() // the read ahead the page started, if any, is counted with it
		if err != nil {
			return w, fmt.Errorf("page %d (after %q): %w", w.Pages+1, w.Last, err)
		}
		w.Pages++
		for _, id := range pg.IDs {
			n, err := strconv.ParseInt(id, 10, 64)
			if err != nil || n <= last {
				return w, fmt.Errorf("page %d: id %q after %d: the walk's ids do not ascend", w.Pages, id, last)
			}
			last = n
		}
		w.Records += len(pg.IDs)
		if !pg.More || len(pg.IDs) == 0 {
			return w, nil
		}
		if len(pg.IDs) != size {
			return w, fmt.Errorf("page %d: %d records of %d with more after", w.Pages, len(pg.IDs), size)
		}
		w.Last = strings.Clone(pg.IDs[len(pg.IDs)-1])
	}
}
