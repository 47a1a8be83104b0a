package translate

import (
	"fmt"
	"strings"
	"sync"

	"github.com/helpdesk-gateway/gateway/locate"
)

// pageSizes is what a list knows of the page sizes its backend really
// serves. A backend may clamp _perPage below the configured maximum without
// saying so, or ignore it and always send its own page size; both make a
// short answer look like the list's end and move every page after the
// first to an offset the gateway did not ask for. The engine reasons from
// what it has seen:
//
//   - seen is the largest answer so far: the backend serves at least that
//     many records per page, so a window no larger is never clamped. It
//     only grows, and only with records the backend really sent.
//   - limit is the largest window the engine plans: the configured maximum
//     until an answer proves a clamp, then the clamp. It only shrinks, and
//     never below seen, so no answer (a client's filter that leaves three
//     records, say) can lower it past what the backend was seen to serve.
//   - fixed says the backend ignores _perPage: an answer longer than asked
//     proved it, and every window then has size limit.
//
// The state is a few integers per list identity (see listState).
type pageSizes struct {
	mu    sync.Mutex
	seen  int
	limit int // 0 until first used: the configured maximum
	fixed bool
}

// sizeView is one page's copy of a list's page sizes.
type sizeView struct {
	seen, limit int
	fixed       bool
}

func (p *pageSizes) view(max int) sizeView {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.limit == 0 {
		p.limit = max
	}
	return sizeView{seen: p.seen, limit: p.limit, fixed: p.fixed}
}

// saw records an answer of n records.
func (p *pageSizes) saw(n int) {
	p.mu.Lock()
	p.seen = max(p.seen, n)
	p.mu.Unlock()
}

// clamp records proof that the backend serves at most n records per page.
// It reports whether that changed the limit.
func (p *pageSizes) clamp(n int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fixed || n >= p.limit || n < p.seen {
		return false // nothing new, or contradicted by a larger answer
	}
	p.limit = n
	return true
}

// ignore records proof that the backend ignores _perPage and sends pages
// of at least n records. It reports whether that changed the limit.
func (p *pageSizes) ignore(n int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen = max(p.seen, n)
	if p.fixed && n <= p.limit {
		return false
	}
	p.fixed, p.limit = true, n
	return true
}

// pageSizeLimit returns the backend page limit the engine last learned
// for any of its lists: MaxPageSize until an answer proved a smaller
// limit, or a fixed page size the backend sends whatever is asked;
// learned says which. Limits are learned and used per list identity (see
// listState), and this is only the most recent of them, one caller's: it
// is not the endpoint's limit, and is never shown as one (OnLearn tells
// each list's). Safe for concurrent use. Only tests read it: it is
// unexported, so that no caller takes one list's limit for the
// endpoint's.
func (e *Engine) pageSizeLimit() (limit int, learned bool) {
	e.reportMu.Lock()
	defer e.reportMu.Unlock()
	if e.reported == 0 {
		return e.MaxPageSize, false
	}
	return e.reported, true
}

// trusted is the largest window whose answer the engine can take at face
// value: the backend was seen to serve that many, and serves at least
// MinBackendPageSize by contract.
func (v sizeView) trusted() int {
	if v.fixed {
		return v.limit
	}
	return min(v.limit, max(v.seen, MinBackendPageSize))
}

// plan returns the call for offsets [from, to) within what the backend
// serves: the one place a window becomes a backend call. A window may
// cover less than asked; the engine stitches the rest on. With offsets
// the window starts at from, whatever its size: no alignment, so no
// record before from is fetched.
func (v sizeView) plan(from, to, cap int, offsets bool) Window {
	switch {
	case v.fixed && offsets:
		return Window{Start: max(from, 0), Size: v.limit}
	case v.fixed:
		return Window{Start: max(from, 0) / v.limit * v.limit, Size: v.limit}
	case offsets:
		return PlanOffsetWindow(from, to, min(cap, v.limit))
	}
	return PlanWindow(from, to, min(cap, v.limit))
}

// planAhead is plan for a read-ahead window of a walk: it covers
// [from, to) and reaches toward far as far as the backend's pages allow
// with little waste (PlanReadahead). A backend with fixed pages is asked
// as always.
func (v sizeView) planAhead(from, to, far, cap int, offsets bool) Window {
	if v.fixed {
		return v.plan(from, to, cap, offsets)
	}
	return PlanReadahead(from, to, far, min(cap, v.limit), offsets)
}

// verdict is what one answer says, judged against the page sizes seen.
type verdict int

const (
	// full: as many records as asked, at the offsets asked.
	full verdict = iota
	// ended: fewer records than asked, at the offsets asked, and the list
	// ends after them.
	ended
	// open: fewer records than asked from offset 0: the list's end, or a
	// clamp at exactly this many. The records are right; whether more
	// follow is for the next call, planned within them, to tell.
	open
	// endedSomewhere: the list ends after these records, but a clamp may
	// have moved them to a lower offset than asked. Usable only where ids
	// alone place them (the cursor record among them).
	endedSomewhere
	// unplaced: the records may come from an offset other than the one
	// asked, or not reach the end: ask again within the sizes seen.
	unplaced
)

// judge classifies an answer of n records to window w. Long answers are
// handled before: n <= w.Size here. An anchored answer starts where it was
// asked to whatever the backend clamps: from offset 0, or from any offset
// on a backend asked by offset, where a clamp cuts the window short but
// never moves it.
func (v sizeView) judge(w Window, n int, anchored bool) verdict {
	switch {
	case n == w.Size:
		return full
	case n == 0 || w.Size <= v.trusted():
		// An empty answer bounds the list whatever the backend clamps:
		// any clamp moves a page to a lower offset, never a higher one.
		return ended
	case anchored && n < max(v.seen, MinBackendPageSize):
		// A clamp serves at least the largest answer seen, so an answer
		// short of that is short of any clamp: the list's end.
		return ended
	case anchored:
		return open
	case n < max(v.seen, MinBackendPageSize):
		return endedSomewhere
	}
	return unplaced
}

// longAnswer handles an answer with more records than asked: the backend
// ignores _perPage. When anchored (see judge) the records are right and
// the answer is taken as the window of its own size; elsewhere it came
// from an offset the engine cannot know and is asked again at the learned
// size.
func (e *Engine) longAnswer(sz *pageSizes, list string, w Window, n int, anchored bool) (Window, bool, error) {
	if n > e.MaxPageSize {
		return w, false, &BackendError{Window: w, Setting: "backend_max_per_page", Reason: fmt.Sprintf(
			"%d records for a page of %d, more than backend_max_per_page (%d): the backend ignores _perPage; set backend_max_per_page %d or more",
			n, w.Size, e.MaxPageSize, n)}
	}
	if sz.ignore(n) {
		e.reportLimit(list, n, true)
	}
	if anchored {
		return Window{Start: w.Start, Size: n}, true, nil
	}
	return w, false, nil
}

// reportLimit reports a new limit of list to pageSizeLimit and the engine's
// observer.
func (e *Engine) reportLimit(list string, limit int, fixed bool) {
	e.reportMu.Lock()
	e.reported = limit
	e.reportMu.Unlock()
	if e.OnLearn != nil {
		e.OnLearn(list, limit, fixed)
	}
}

// suspect is a clamp the page has not yet proved or ruled out: an answer
// of n records from window w, short of w.Size. If the list holds a record
// at or past w.Start+n, the answer was not its end: a clamp at n.
type suspect struct {
	n, end int
}

// resolve checks a trusted answer from offset start with n records
// against a suspected clamp, and learns the clamp when the answer proves
// it. It reports whether the suspicion is resolved: proved, or ruled out
// by an answer that shows the list's end.
func (e *Engine) resolve(sz *pageSizes, list string, s *suspect, start, n int, v verdict) bool {
	if start+n > s.end {
		if sz.clamp(s.n) {
			e.reportLimit(list, s.n, false)
		}
		return true
	}
	return v == ended
}

// planner plans one page's calls within the backend's page sizes and
// judges their answers; it keeps the clamp reasoning out of Engine.Page.
type planner struct {
	e    *Engine
	sz   *pageSizes // the list's; see listState
	list string     // the list identity, for OnLearn
	v    sizeView
	cap  int      // the largest window this page plans
	sus  *suspect // a short answer not yet explained

	// belowEnd is the offset just past a fresh answer whose records were
	// all at or below the cursor, or -1, and belowID (fixed pages only)
	// the id there. A backend with fixed pages cannot serve a record and
	// its successor in one answer when the record ends its page: the next
	// page is read, held, and taken as adjacent once a re-read of the page
	// before shows it still ending with the same record at the same place.
	belowEnd    int
	belowID     string
	held        *answer
	edgeChecked bool // the answer being settled passed that re-read
}

// edgeHolds reports whether the re-read of the page before a held answer
// ends, as before, with the record at belowEnd-1.
func (p *planner) edgeHolds(w Window, b Batch) bool {
	n := len(b.IDs)
	return n > 0 && w.Start+n == p.belowEnd && b.IDs[n-1] == p.belowID
}

func (e *Engine) newPlanner(sz *pageSizes, list string) planner {
	v := sz.view(e.MaxPageSize)
	return planner{e: e, sz: sz, list: list, v: v, cap: v.limit, belowEnd: -1}
}

// refresh takes in what other pages (or this one) learned.
func (p *planner) refresh() {
	v := p.sz.view(p.e.MaxPageSize)
	v.seen = max(v.seen, p.v.seen)
	p.v = v
	if p.sus == nil {
		p.cap = v.limit
	} else {
		p.cap = v.trusted()
	}
}

// next plans the next call: from offset in offset mode, else by search.
// With ahead, a cursor whose place is known is read with up to ahead
// records more than the page needs (read-ahead).
func (p *planner) next(s *locate.Search, offset, need, ahead int) Window {
	plan := func(from, to int) Window { return p.v.plan(from, to, p.cap, p.e.Offsets) }
	if p.held != nil {
		// Re-read the fixed page that ends at belowEnd.
		return Window{Start: (p.belowEnd - 1) / p.v.limit * p.v.limit, Size: p.v.limit}
	}
	var w Window
	switch {
	case ahead > 0 && s != nil && s.Found():
		// The cursor's record is at lo, as when a walk continues: its
		// window, and as much of what follows as readahead asks.
		lo := s.Lo()
		w = p.v.planAhead(lo, lo+1+need, lo+1+need+ahead, p.cap, p.e.Offsets)
	case offset >= 0:
		w = plan(offset, offset+need)
	default:
		w = plan(s.Window(need))
	}
	if p.v.fixed && !p.e.Offsets && p.belowEnd >= 0 && w.Start+w.Size == p.belowEnd {
		w.Start += w.Size // that page was just read; the one after it holds what follows
	}
	return w
}

// endedBelow records a fresh answer of ids from offset start, all at or
// below the cursor.
func (p *planner) endedBelow(start int, ids []string) {
	if n := len(ids); n > 0 {
		p.belowEnd = start + n
		if p.v.fixed {
			p.belowID = strings.Clone(ids[n-1])
		}
	}
}

// adjacent reports whether an answer from offset start follows, on fixed
// pages, an answer that ended at or below the cursor. An offset backend
// never needs it: its windows start at the record they must hold.
func (p *planner) adjacent(start int) bool { return p.v.fixed && !p.e.Offsets && start == p.belowEnd }

// anchored reports whether an answer to w starts where it was asked
// whatever the backend clamps (see judge).
func (p *planner) anchored(w Window) bool { return w.Start == 0 || p.e.Offsets }

// canOverlap reports whether one call can hold the record at off and the
// one after it, as a stitched call must.
func (p *planner) canOverlap(off int) bool {
	return p.v.fixed || p.e.Offsets || PlanWindow(off, off+2, min(p.cap, p.v.limit)).Size >= 2
}

// judge checks an answer to w and says how far it can be trusted. An
// answer longer than asked from offset 0 comes back as the window of its
// own size.
func (p *planner) judge(w Window, b Batch) (Window, verdict, error) {
	n := len(b.IDs)
	if n > w.Size {
		nw, usable, err := p.e.longAnswer(p.sz, p.list, w, n, p.anchored(w))
		if err != nil {
			return w, full, err
		}
		p.refresh()
		if !usable {
			return w, unplaced, nil
		}
		w = nw
	}
	if err := p.e.check(b, w); err != nil {
		return w, full, err
	}
	v := p.v.judge(w, n, p.anchored(w))
	p.sz.saw(n)
	p.v.seen = max(p.v.seen, n)
	if p.sus != nil && (v == full || v == ended) && p.e.resolve(p.sz, p.list, p.sus, w.Start, n, v) {
		p.sus = nil
		p.refresh()
	}
	switch v {
	case open, unplaced:
		// judge says n is at least every answer seen before: a clamp at
		// n, unless the list ends here. Trusted calls will tell.
		p.sus = &suspect{n: n, end: w.Start + n}
		p.cap = p.v.trusted()
	case endedSomewhere:
		p.cap = p.v.trusted()
	}
	return w, v, nil
}
