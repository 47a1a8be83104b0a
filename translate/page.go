package translate

import (
	"context"
	"sort"

	"github.com/helpdesk-gateway/gateway/liststore"
	"github.com/helpdesk-gateway/gateway/locate"
)

// The steps of Engine.Page. A page is read in calls; each call is planned
// (plan), read and checked against what the backend is known to serve
// (read), used to settle where the cursor's records are (settle), and
// then its records after the cursor are taken (take); when the answer
// ended before the page did, the next call is stitched on (stitch).

// pageRead is one page in the making: what the steps share.
type pageRead struct {
	e        *Engine
	f        Fetcher
	rel      Releaser // nil when f cannot free answers early
	req      Request
	want     int // the page and one record more, to know if more exist
	pg       *Page
	takenOff []int // the offset of each record taken
	p        planner
	s        locate.Search // where the cursor's records are, once searching
	offset   int           // offset mode: where the page starts; -1 once searching

	// ahead is how many records past the page each call reads, when a
	// walk continues (read-ahead); last is the last answer the page took
	// records from, lastBelow its records at or below the record the page
	// went on after, and lastTook the records it gave the page.
	ahead     int
	last      answer
	lastBelow int
	lastTook  int

	// unlearned is the last answer read, not yet given to the index: it
	// is learned before the next call, or in finish together with the
	// next page's cursor, so that a page read in one call takes the
	// index's lock once.
	unlearned    answer
	hasUnlearned bool

	// cursorAt is the cursor's own record where a wide answer holds it
	// inside, not at an edge, to be learned with that answer (see take).
	cursorAt    locate.Sample
	hasCursorAt bool
}

// answer is one backend answer as the page reads it: its span, and what
// it says of the backend's page sizes. The span ended the list when the
// verdict says so.
type answer struct {
	liststore.Span
	v verdict
}

// start checks the request and sets the page up. A pageRead lives on
// Page's stack, with the search it holds.
func (r *pageRead) start(e *Engine, f Fetcher, ls *listState, req Request) error {
	*r = pageRead{e: e, f: f, req: req, want: req.Size + 1,
		pg: &Page{Source: -1}, p: e.newPlanner(&ls.sizes, req.List), offset: req.Offset}
	r.rel, _ = f.(Releaser)
	if req.After != "" {
		if err := e.Order.Check(req.After); err != nil {
			return err
		}
		r.offset = -1
		h := e.Index.lookup(req.List, req.After)
		r.s.Init(e.Order, req.After, &h)
		r.pg.IndexHit = r.s.Exact()
	}
	return nil
}

// plan plans the next call: in offset mode from the offset, else where the
// search expects the cursor's records, within the page sizes the backend
// was seen to serve. A walk that continues reads ahead in every call: a
// call that completes a page read in several (a page as large as the
// backend's limit, or larger) then holds the next page's first records,
// kept as a window whose head the next page starts from.
func (r *pageRead) plan() Window {
	var s *locate.Search
	if r.offset < 0 {
		s = &r.s
	}
	return r.p.next(s, r.offset, r.want-len(r.pg.IDs), r.ahead)
}

// startFrom starts the page with a head: the page goes on as a page read
// in several calls does, with a call stitched on the head's last record,
// whose place that call must confirm. A keyset window, which has no
// offsets to stitch by, or one whose last record no page the backend
// serves can overlap, is not used: the page is read as any page is.
func (r *pageRead) startFrom(h head) {
	w, ids := h.w, h.ids()
	n := len(ids)
	if w == nil || w.Start < 0 || n == 0 || !r.p.canOverlap(w.Start+len(w.IDs)-1) {
		return
	}
	lastOff := w.Start + len(w.IDs) - 1
	h.start(r.pg)
	r.takenOff = make([]int, 0, r.want)
	for k := range n {
		r.takenOff = append(r.takenOff, lastOff-n+1+k)
	}
	last := ids[n-1]
	r.s.Init(r.e.Order, last, &locate.Hint{Lo: locate.Sample{Off: lastOff, ID: last}, HasLo: true, End: r.s.End()})
	r.offset = -1
}

// release frees the answer of a call that gave the page nothing, once
// the index has learned it: its ids die with it.
func (r *pageRead) release(call int) {
	if r.hasUnlearned && r.unlearned.Call == call {
		r.learnAnswer(nil)
	}
	if r.rel != nil {
		r.rel.Release(call)
	}
}

// read makes the call and judges its answer. It reports ok = false for an
// answer the page cannot use as it is: records from an offset a clamp may
// have moved, or a re-read that shows a held answer was not adjacent. When
// the call re-read the page before a held answer and found it unchanged,
// the answer returned is the held one.
func (r *pageRead) read(ctx context.Context, w Window) (a answer, ok bool, err error) {
	r.learnAnswer(nil)
	b, err := r.f.Fetch(ctx, w)
	r.pg.Calls++
	if err != nil {
		return a, false, err
	}
	w, v, err := r.p.judge(w, b)
	if err != nil {
		return a, false, err
	}
	a = answer{liststore.Span{IDs: b.IDs, Records: b.Records, Start: w.Start, Ended: v == ended || v == endedSomewhere, Call: r.pg.Calls - 1}, v}
	p := &r.p
	if h := p.held; h != nil {
		// This call re-read the page before a held answer: if it still
		// ends where it did, the held answer is adjacent.
		p.held = nil
		holds := p.edgeHolds(w, b) // before the re-read is released
		r.release(a.Call)
		if !holds {
			r.release(h.Call)
			p.belowEnd = -1
			return a, false, nil
		}
		p.edgeChecked = true
		return *h, true, nil
	}
	if v == unplaced || v == endedSomewhere && r.offset >= 0 {
		// Records from an offset the engine cannot know: ask again
		// within the sizes the backend was seen to serve.
		r.release(a.Call)
		return a, false, nil
	}
	r.pg.Fetched += len(b.IDs)
	// The index takes even an answer a clamp may have moved: its offsets
	// are hints that answers verify, and a clamp moves records lower,
	// never past the end it gives.
	r.unlearned, r.hasUnlearned = a, true
	return a, true, nil
}

// learnAnswer gives the index the answer not yet learned, if any, with
// extra samples of it (ascending, inside the answer) beside its ends.
func (r *pageRead) learnAnswer(extra []locate.Sample) {
	if !r.hasUnlearned {
		return
	}
	r.hasUnlearned = false
	a := &r.unlearned
	r.e.learn(r.req.List, a.IDs, a.Start, a.Ended, extra)
}

// settle finds where the records after the cursor start in the answer:
// below is how many of its records are at or below the cursor. It reports
// ok = false when the answer does not prove that place (it holds no record
// at or below the cursor and does not start the list, or holds none after
// it and does not end the list); the search then narrows with it.
func (r *pageRead) settle(a answer) (below int, ok bool) {
	start, ids := a.Start, a.IDs
	if r.offset >= 0 {
		return min(r.offset-start, len(ids)), true
	}
	below = sort.Search(len(ids), func(i int) bool {
		return r.e.Order.Compare(ids[i], r.s.After()) > 0
	})
	edge := below == 0 && start > 0 && r.p.adjacent(start)
	settled := (below > 0 || start == 0 || edge) && (below < len(ids) || a.Ended)
	if settled && edge && !r.p.edgeChecked {
		// Adjacent only by offsets: hold it, re-read the page before.
		held := a
		r.p.held = &held
		return 0, false
	}
	r.p.edgeChecked = false
	if a.v == endedSomewhere && (!settled || below == 0 && start > 0) {
		// Only ids place these records; these ids do not.
		r.release(a.Call)
		return 0, false
	}
	if !settled {
		if below == len(ids) {
			r.p.endedBelow(start, ids)
		}
		if r.s.Observe(start, ids, below) {
			r.pg.Relocations++
		}
		r.release(a.Call) // observe kept copies of what it needs
		return 0, false
	}
	return below, true
}

// take adds the answer's records after the cursor to the page, and reports
// whether the page is done: full with its lookahead, or at the list's end.
func (r *pageRead) take(a answer, below int) (done bool) {
	pg, ids, start := r.pg, a.IDs, a.Start
	if pg.Source < 0 {
		pg.Source = a.Call
		if r.offset < 0 && below > 1 && !pg.IndexHit {
			// Remember the cursor's own record, which a wide window holds
			// inside, not at an edge: a client repeating the request
			// then costs one call. It is learned with the answer, under
			// the same lock (finish).
			r.cursorAt, r.hasCursorAt = locate.Sample{Off: start + below - 1, ID: ids[below-1]}, true
		}
	}
	take := min(len(ids)-below, r.want-len(pg.IDs))
	r.last, r.lastBelow, r.lastTook = a, below, take
	if len(pg.IDs) == 0 && take > 0 {
		r.takenOff = make([]int, 0, r.want)
	}
	pg.add(ids, a.Records, below, below+take)
	for k := range take {
		r.takenOff = append(r.takenOff, start+below+k)
	}
	return len(pg.IDs) == r.want || below+take == len(ids) && a.Ended
}

// stitch plans the page's next answer after one that ended before the
// page did: a search from the last record taken, whose place the next
// answer must confirm, so that the two overlap on it.
func (r *pageRead) stitch(a answer) error {
	start := a.Start
	r.p.endedBelow(start, a.IDs)
	last := len(r.pg.IDs) - 1
	if last < 0 {
		// Offset mode met an answer that ended before the offset without
		// being short; read on from where it ended.
		r.offset = start + len(a.IDs)
		return nil
	}
	if !r.p.canOverlap(r.takenOff[last]) {
		return ErrPageSizeTooSmall
	}
	end := -1
	if r.offset < 0 {
		end = r.s.End()
	}
	r.s.Init(r.e.Order, r.pg.IDs[last], &locate.Hint{
		Lo: locate.Sample{Off: r.takenOff[last], ID: r.pg.IDs[last]}, HasLo: true, End: end,
	})
	r.offset = -1
	return nil
}

// window returns the last answer of a page read ahead as a window to
// keep, or nil: when the page was not read ahead, or that answer holds no
// record at or below the one the page went on after and does not start
// the list (the guarantee's condition), or holds no record past the
// page's lookahead that a next page could start from. Called before
// finish cuts the page.
func (r *pageRead) window() *liststore.StoredWindow {
	a, below := &r.last, r.lastBelow
	if r.ahead == 0 || r.req.After == "" || a.IDs == nil || below == 0 && a.Start != 0 {
		return nil
	}
	if len(a.IDs)-below-r.lastTook < 1 && !a.Ended {
		return nil // nothing past the page's lookahead
	}
	w := &liststore.StoredWindow{Span: a.Span}
	if a.Start == 0 {
		w.FromStart = true
	} else {
		w.Floor = a.IDs[0]
	}
	return w
}

// finish cuts the lookahead off the page, and remembers the last record
// served and the one after it: the next page's cursor then costs one call.
// The index learns the page's last answer, those two records and the
// cursor's own record (see take) under one lock when they lie in that
// answer, as they do for a page read in one call.
func (r *pageRead) finish() *Page {
	pg := r.pg
	var room [3]locate.Sample
	extra := room[:0]
	if r.hasCursorAt {
		extra = append(extra, r.cursorAt)
	}
	if n := r.req.Size; len(pg.IDs) > n {
		extra = append(extra, locate.Sample{Off: r.takenOff[n-1], ID: pg.IDs[n-1]}, locate.Sample{Off: r.takenOff[n], ID: pg.IDs[n]})
	}
	cut(pg, r.req.Size)
	if len(extra) == 0 {
		r.learnAnswer(nil)
		return pg
	}
	if a := &r.unlearned; r.hasUnlearned && a.Call == pg.Source &&
		extra[0].Off >= a.Start && extra[len(extra)-1].Off < a.Start+len(a.IDs) {
		r.learnAnswer(extra)
		return pg
	}
	r.learnAnswer(nil)
	last := extra[len(extra)-1]
	r.e.Index.learn(r.req.List, extra, last.Off+1, -1)
	return pg
}
