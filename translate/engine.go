package translate

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/helpdesk-gateway/gateway/liststore"
	"github.com/helpdesk-gateway/gateway/locate"
)

// Fetcher makes one backend list call: the records at offsets
// [w.Start, w.Start+w.Size), sorted ascending by id. Windows are Aligned
// unless Engine.Offsets is set.
type Fetcher interface {
	Fetch(ctx context.Context, w Window) (Batch, error)
}

// Releaser is a Fetcher that can free an answer before the page is done.
// The engine calls Release with the number of a call (0-based, in the order
// of the calls, as Page.Source counts them) whose answer gave the page
// nothing: a probe of the search that did not settle the cursor's place.
// Once called, the engine holds no reference into that answer's ids or
// records, so a page in flight keeps only the answers its records and
// envelope come from, whatever the search cost.
type Releaser interface {
	Release(call int)
}

// Keeper is a Fetcher whose answers can outlive the request that read
// them. The engine calls Keep with the number of a call whose answer
// becomes a read-ahead window: the fetcher must then never reuse that
// answer's memory, and returns what its caller needs to compose pages
// from the answer later (opaque to the engine; see
// liststore.StoredWindow.Source) and the answer's size in bytes, which
// the ListStore's bound counts.
type Keeper interface {
	Keep(call int) (source any, bytes int)
}

// Lender is a Fetcher that can lend an answer's source, what Keep would
// return, to a liststore.WindowCopier, which copies the window in Walked: the
// answer stays the fetcher's, and goes back to its pool with the request.
type Lender interface {
	Lend(call int) (source any)
}

// Batch is one backend answer.
type Batch struct {
	IDs     []string // record ids, in the order the backend sent them
	Records [][]byte // raw bytes of each record, parallel to IDs; may be nil
}

// Request asks for one page of a list.
type Request struct {
	// List names the list for the position index: the endpoint and
	// whatever in the query selects its records.
	List string
	// After is the cursor id: the page holds the records after it. When
	// After is empty the page starts at offset Offset (0: the first page).
	After  string
	Offset int
	// Size is the number of records per page.
	Size int
	// Fresh says the caller asked for the backend's own answer
	// (Cache-Control: no-cache or max-age=0): no stored window serves it.
	Fresh bool
}

// Page is the answer to a Request.
type Page struct {
	IDs     []string
	Records [][]byte // nil when the fetcher gave no records
	More    bool     // a record followed the page when it was read
	Source  int      // the call (0-based) whose answer the page starts in

	Calls       int  // backend calls made
	Fetched     int  // records fetched
	IndexHit    bool // the index knew the cursor record's place
	Relocations int  // times a hint or an answer proved stale

	// Stored is the read-ahead window the page was cut from, with no
	// backend call; nil when the page was read from the backend. Source
	// is then -1, and the window's Source is what the fetcher kept.
	Stored *liststore.StoredWindow
	// Keyset says the page was read by keyset (records above the cursor).
	Keyset bool
	// Head is how many of the page's first records were cut from a
	// read-ahead window that did not hold the whole page; the rest were
	// read from the backend, stitched on the last of them.
	Head int
}

// Engine serves keyset pages (records after an id) from a backend that
// pages only by offset. The zero value is not usable; set Order and
// MaxPageSize at least.
type Engine struct {
	Order       cursor.Order
	MaxPageSize int    // the largest page size the backend serves
	MaxCalls    int    // backend calls allowed per page; 0 means 64
	Index       *Index // shared position index; nil for none
	// Offsets says the backend takes windows at any offset (an offset and
	// a limit, not a page number): a window then starts where the page
	// starts, with no alignment to page boundaries, and a clamp cuts an
	// answer short without moving it.
	Offsets bool

	// OnLearn, when set, is called each time the backend's answers prove
	// a page-size limit below MaxPageSize for one list identity (fixed:
	// the backend ignores _perPage and always sends pages of limit). The
	// limit is that list's, one caller's view: a parameter or credential
	// of its own may be what made the backend clamp. It may be called
	// from concurrent pages; set it before the first.
	OnLearn func(list string, limit int, fixed bool)

	// Keyset, when set, says the backend can be asked for the records
	// with id above a cursor (a Window with After), and checks that a
	// cursor id can be written into such a query safely: a cursor page
	// whose id it refuses is read by offset, as without it.
	Keyset func(id string) error
	// KeysetInclusive says the keyset condition is expected to send the
	// cursor's own record too (id_gte): every keyset call asks one record
	// more from a list's first page on. Where it is false, an answer that
	// sends the cursor's record teaches the list identity the same, at
	// the cost of one more call for that page.
	KeysetInclusive bool
	// OnKeysetMisread, when set, is called when an answer shows that the
	// backend ignored or misread the keyset condition; that list is read
	// by offset from then on. It may be called from concurrent pages.
	OnKeysetMisread func(reason string)

	// Lists, when set, keeps what the engine learns of each list identity
	// and, when its TTL is not 0, the walks it serves and their read-ahead
	// windows: a walk that continues is read in larger answers, and its
	// next pages are cut from them without a backend call (see package
	// liststore). Unset, the engine keeps its lists
	// in its Index's store, or a MemoryStore of its own, with read-ahead
	// off. Set it before the first page; an Index made by Lists.Index
	// keeps its samples in the same objects.
	Lists ListStore
	// Walks, when set, keeps the walks and their windows in place of
	// Lists: a store shared by several instances (redisstore), so that a
	// walk whose pages a balancer sends to any of them is followed whole.
	// Lists still keeps the learned state and the position samples.
	Walks liststore.WalkStore
	// MaxAhead bounds the reads ahead of walkers in the background at
	// once (see Detacher); 0 means DefaultMaxAhead.
	MaxAhead int

	own      sync.Once
	ownLists ListStore
	clock    func() time.Time // time.Now unless a test sets it
	reportMu sync.Mutex
	reported int // the last limit learned, for pageSizeLimit; 0: none

	ahead   sync.Map       // aheadKey: chan closed when the read ahead is over
	aheadN  atomic.Int32   // reads ahead in flight
	aheadWG sync.WaitGroup // the same, for tests to wait on
	spawn   func(func())   // runs a read ahead: a goroutine unless a test sets it
}

// DefaultMaxCalls is the call budget of a page when Engine.MaxCalls is 0.
const DefaultMaxCalls = 64

// budget stops a page whose client left, or that made the calls allowed.
func (e *Engine) budget(ctx context.Context, calls int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return e.callLimit(calls)
}

// callLimit stops a page that made the calls allowed: MaxCalls, or
// DefaultMaxCalls when it is 0.
func (e *Engine) callLimit(calls int) error {
	n := e.MaxCalls
	if n < 1 {
		n = DefaultMaxCalls
	}
	if calls >= n {
		return &CallLimitError{Calls: calls}
	}
	return nil
}

// CallLimitError is returned when a page needed more backend calls than
// allowed, which happens only when records move faster than the search.
type CallLimitError struct{ Calls int }

func (e *CallLimitError) Error() string {
	return fmt.Sprintf("page not settled after %d backend calls; records are changing faster than they can be located", e.Calls)
}

// MinBackendPageSize is the smallest backend page limit the engine accepts.
// A stitched call must hold the last record taken and the one after it;
// with a limit of n, the offsets where every page size up to n divides the
// next offset are multiples of lcm(1..n), which past 25 is beyond any list.
const MinBackendPageSize = 25

// ErrPageSizeTooSmall is returned when no backend page can hold a record
// and its successor, which only a limit below MinBackendPageSize allows.
var ErrPageSizeTooSmall = errors.New("backend page limit too small to stitch pages with a verified overlap")

// BackendError says why a backend answer could not be used.
type BackendError struct {
	Window Window
	Reason string
	// Setting names the configuration the backend most likely disagrees
	// with (id_order, backend_sort, backend_max_per_page, id_field), or "".
	Setting string
}

func (e *BackendError) Error() string {
	if e.Window.Keyset() {
		return fmt.Sprintf("backend_keyset window after id %.40q of size %d: %s", e.Window.After, e.Window.Size, e.Reason)
	}
	if !e.Window.Aligned() {
		return fmt.Sprintf("backend window at offset %d of size %d: %s", e.Window.Start, e.Window.Size, e.Reason)
	}
	return fmt.Sprintf("backend page %d of size %d: %s", e.Window.Page(), e.Window.Size, e.Reason)
}

// Page reads one page, in three steps: what the page wants (Size
// records after the cursor, or from an offset, and whether more follow);
// whether a window holds it (the store's Cut finds the read-ahead window
// the walk rule admits: see fromWindow); and how to ask the backend for
// what no window holds (ask: by keyset or by offset, reading ahead when
// a walk continues, the answer read ahead kept as the walk's next
// window). Every record of the page comes from an answer that also holds
// a record at or below the cursor, starts the list, or was anchored above
// the cursor by the backend: the page is exactly the records after the
// cursor as the backend held them.
func (e *Engine) Page(ctx context.Context, f Fetcher, req Request) (*Page, error) {
	if req.Size < 1 {
		return nil, fmt.Errorf("page size %d: must be at least 1", req.Size)
	}
	ls := e.store().stateOf(req.List)
	walks := e.walks()
	now, ttl := e.now(), walks.TTL()
	c := walks.Cut(ctx, req.List, liststore.CutQuery{After: req.After, Size: req.Size, Fresh: req.Fresh, Now: now, Ahead: e.canAhead(f)})
	walk := c.Walk
	if c.Continues {
		walk.Pace(req.Size, c.Made, now)
	}
	if pg := e.fromWindow(ctx, f, ls, req, c, walk, now); pg != nil {
		return pg, nil
	}
	h := head{c.Window, c.From} // a window's records after the cursor, short of the page
	pg, run, err := e.ask(ctx, f, ls, req, walk.Readahead(req.Size, c.Continues, ttl), h, "")
	if err != nil {
		return nil, err
	}
	if ttl <= 0 {
		return pg, nil
	}
	if run != nil {
		e.keepBytes(f, run)
	}
	walks.Walked(ctx, req.List, e.walked(pg, req.Size, c.At, now, walk, h.w, run))
	return pg, nil
}

// fromWindow serves the page from windows, with no backend call, when
// they hold it: the window the store's Cut found (c), whole, starting the
// walk's next window in the background when the page is its marker; or
// that window's last records (a head) and the window read ahead after
// them (headAhead). nil when the backend is to be asked.
func (e *Engine) fromWindow(ctx context.Context, f Fetcher, ls *listState, req Request, c liststore.CutResult, walk liststore.Walk, now time.Time) *Page {
	walks := e.walks()
	if c.Holds(req.Size) {
		w := c.Window
		pg := e.cutPage(req, w, c.From)
		walks.Walked(ctx, req.List, e.walked(pg, req.Size, w.At, now, walk, w, nil))
		if c.Ahead != "" {
			e.readAhead(f, req.List, c, req.Size, walk)
		}
		return pg
	}
	if c.Ahead != "" {
		e.dropAhead(req.List, c.Ahead) // no page cut whole: no marker
	}
	pg, w, walk := e.headAhead(ctx, ls, req, head{c.Window, c.From}, walk, now)
	if pg != nil {
		walks.Walked(ctx, req.List, e.walked(pg, req.Size, w.At, now, walk, w, nil))
	}
	return pg
}

// ask reads a page from the backend, with ahead records more in each
// call when a walk continues, starting from a window's head when there is
// one: by keyset ("the records above X", keysetPage, which doubts its
// answers itself) where the backend takes that and the cursor is safe to
// write into its query, else by page or offset (offsetPage). prev, when
// set, is the record before the cursor that a read ahead of the walker
// knows (see keysetRead.read). It returns the answer to keep as a read-ahead
// window, if any, and feeds the list's read time (readTime).
func (e *Engine) ask(ctx context.Context, f Fetcher, ls *listState, req Request, ahead int, h head, prev string) (*Page, *liststore.StoredWindow, error) {
	began := time.Now()
	defer func() { ls.readTime.observe(time.Since(began)) }()
	if req.After != "" && e.keysetFor(ls, req.After) {
		pg, run, calls, err := e.keysetPage(ctx, f, ls, req, ahead, h, prev)
		if pg != nil || err != nil {
			return pg, run, err
		}
		return e.offsetPage(ctx, f, ls, req, ahead, calls, h)
	}
	return e.offsetPage(ctx, f, ls, req, ahead, 0, h)
}

// walked is what the store records of a page served: see liststore.Walked.
func (e *Engine) walked(pg *Page, size int, at, now time.Time, walk liststore.Walk, from, window *liststore.StoredWindow) liststore.Walked {
	w := liststore.Walked{More: pg.More, Size: size, At: at, Now: now, Walk: walk, From: from, Window: window}
	if len(pg.IDs) > 0 {
		w.Last = pg.IDs[len(pg.IDs)-1]
	}
	return w
}

// store returns the engine's ListStore: Lists, or its own.
func (e *Engine) store() ListStore {
	if e.Lists != nil {
		return e.Lists
	}
	e.own.Do(func() {
		if e.Index != nil && e.Index.store != nil {
			e.ownLists = e.Index.store // one object per list: samples and learned state
		} else {
			e.ownLists = NewMemoryStore(e.Order, 0, defaultListMemory)
		}
	})
	return e.ownLists
}

// walks returns the engine's liststore.WalkStore: Walks, or its ListStore.
func (e *Engine) walks() liststore.WalkStore {
	if e.Walks != nil {
		return e.Walks
	}
	return e.store()
}

// defaultListMemory bounds the engine's own store, when Lists is unset:
// the learned state of some ten thousand list identities.
const defaultListMemory = 8 << 20

func (e *Engine) now() time.Time {
	if e.clock != nil {
		return e.clock()
	}
	return time.Now()
}

// offsetPage reads a page by page number or offset, searching for the
// cursor's place (or stitched on a window's head, when there is one), with
// ahead records more in each call when a walk continues, after calls
// already made for the page. It returns the answer to keep as a read-ahead
// window, if any.
//
// Consistency: every record of the page comes from an answer that also
// holds a record at or below the cursor (or starts at offset 0). When one
// answer ends before the page is complete, the next call overlaps it on
// its last taken record, and that overlap is checked the same way. Page
// sizes: an answer is taken at face value only when it cannot have been
// clamped (see pageSizes and judge); any other short answer is never the
// end of a walk nor read at an offset it may not come from: the next
// call, planned within the sizes the backend was seen to serve, tells.
// Each call is one turn of the loop below; its steps (plan a window, read
// and check the answer, settle the cursor's place, take the records,
// stitch the next call on) are pageRead's methods, in page.go.
func (e *Engine) offsetPage(ctx context.Context, f Fetcher, ls *listState, req Request, ahead, calls int, h head) (*Page, *liststore.StoredWindow, error) {
	var r pageRead
	if err := r.start(e, f, ls, req); err != nil {
		return nil, nil, err
	}
	r.ahead, r.pg.Calls = ahead, calls
	r.startFrom(h)
	defer r.learnAnswer(nil) // a page that fails still teaches the index

	for {
		if err := e.budget(ctx, r.pg.Calls); err != nil {
			return nil, nil, err
		}
		a, ok, err := r.read(ctx, r.plan())
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			continue // nothing the page can use; the planner knows more now
		}
		below, ok := r.settle(a)
		if !ok {
			continue // the cursor's place is narrower now, not found yet
		}
		if r.take(a, below) {
			run := r.window()
			return r.finish(), run, nil
		}
		if err := r.stitch(a); err != nil {
			return nil, nil, err
		}
	}
}

// learn gives the index the edges of an answer.
func (e *Engine) learn(list string, ids []string, start int, short bool, extra []locate.Sample) {
	if e.Index == nil {
		return
	}
	end := -1
	if short {
		end = start + len(ids)
	}
	var room [4]locate.Sample // on the stack: the index copies what it keeps
	run := room[:0]
	if n := len(ids); n > 0 {
		run = append(run, locate.Sample{Off: start, ID: ids[0]})
		for _, s := range extra {
			if s.Off > run[len(run)-1].Off && s.Off < start+n-1 {
				run = append(run, s)
			}
		}
		if n > 1 {
			run = append(run, locate.Sample{Off: start + n - 1, ID: ids[n-1]})
		}
	}
	e.Index.learnAnswer(list, run, start+len(ids), end, answerIDs{start, ids})
}
