package translate

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// Keyset pages: a backend that filters by id ("id_gt=X") is asked for the
// records above the cursor, in id order, instead of for an offset: one
// call a page at any depth, no search, no index. The answer is anchored at
// the cursor by the backend's own condition, so a page cut from it is the
// records after the cursor as the backend held them, as the guarantee
// asks; a page that needs a second call asks for the records above the
// last one taken, anchored the same way.
//
// The condition is the backend's, so answers are checked, not trusted.
// Every answer must be in id order and above the cursor, but for the
// cursor's own record first (an inclusive condition, id_gte, which
// Engine.KeysetInclusive expects or answers teach): an answer that breaks
// that shows the backend ignored the condition, or read it on records at
// or below the cursor. Many misreads pass that, though: a backend that
// compares ids as text sends 90, 91, ... after 9 and nothing after 999; a
// condition on another field skips records above the cursor. Only an
// offset read of the same records can tell, so a keyset page is compared
// with one (keysetCheck) when it is the first of its list identity, when
// it would end the list (an empty or short answer ends a walk only once
// confirmed), when the backend sent more than asked, and when it leaves
// out a record the position index knows above the cursor. A page that
// disagrees is a misread: the offset page is served, and the list
// identity is read by offset from then on.

// keyset is what a list identity learned of its backend's keyset answers.
type keyset struct {
	inclusive bool // answers hold the cursor's own record first
	misread   bool // an answer broke the condition: read by offset
	checked   bool // an answer agreed with an offset read at its cursor

	// marks are the records the last pages served by keyset ended at
	// (and the last of the windows read with them).
	marks  [keysetMarks]keysetMark
	markAt int
}

// keysetMark is a record a page served by keyset ended at: the record
// after it, which the next page's answer must hold first unless it was
// deleted since (an offset read tells), or ""; and its offset, counted
// from an offset read through the keyset answers since, or -1. The offset
// is a hint: it starts the search of the offset read that checks the
// page ending the walk, and tells, with the end the index knows, whether
// the walk counted as many records as the list holds.
type keysetMark struct {
	id, next string
	off      int
}

// keysetMarks is how many marks a list identity keeps: a few walks' at
// once.
const keysetMarks = 4

// mark returns the mark of id, if any. Callers hold the list's mutex.
func (k *keyset) mark(id string) (keysetMark, bool) {
	for _, m := range k.marks {
		if m.id == id && id != "" {
			return m, true
		}
	}
	return keysetMark{}, false
}

// remember keeps m, with copies of its ids. Callers hold the list's mutex.
func (k *keyset) remember(m keysetMark) {
	m.id, m.next = strings.Clone(m.id), strings.Clone(m.next)
	k.marks[k.markAt] = m
	k.markAt = (k.markAt + 1) % keysetMarks
}

// keysetFor reports whether a cursor page of the list is asked by keyset.
func (e *Engine) keysetFor(ls *listState, after string) bool {
	if e.Keyset == nil || e.Keyset(after) != nil {
		return false
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return !ls.keyed.misread
}

// keysetChecked reads a cursor page by keyset (keysetPage) and checks it
// before any of it is served: when the list identity has not had an
// answer checked yet, when the answers end the list and the index does
// not know that end, when the backend sent more than asked, or when the
// page leaves out a record the index knows above the cursor, the page is
// read by offset too (offsetPage, after the keyset calls), and the offset
// page is served. A disagreement between the two is a misread. It
// returns a nil page and no error when the page is to be read by offset.
//
// The index learns nothing from keyset answers: a backend that misreads
// the condition misreads it the same way in every answer, so records it
// taught would only ever agree with it. What the index knows comes from
// offset reads: the walk's first page, the checks, other walks.
func (e *Engine) keysetChecked(ctx context.Context, f Fetcher, ls *listState, req Request, ahead int, head *Page) (*Page, *StoredWindow, int, error) {
	pg, run, calls, long, ended, err := e.keysetPage(ctx, f, ls, req, ahead, head)
	if pg == nil || err != nil {
		return pg, run, calls, err
	}
	anchor := req.After
	if head != nil {
		anchor = head.IDs[len(head.IDs)-1]
	}
	keyed := pg.IDs[pg.Head:] // the records above anchor, as the backend sent them
	h := e.Index.lookup(req.List, anchor)
	at := -1 // the anchor's offset, when the index knows it
	if h.hasLo && e.Order.Compare(h.lo.id, anchor) == 0 {
		at = h.lo.off
	}
	ls.mu.Lock()
	checked := ls.keyed.checked
	m, marked := ls.keyed.mark(anchor)
	ls.mu.Unlock()
	counted := at < 0 && marked && m.off >= 0
	if counted {
		at = m.off
	}
	var doubt bool
	switch {
	case !checked, long:
		doubt = true
	case m.next != "" && (len(keyed) == 0 || e.Order.Compare(keyed[0], m.next) > 0):
		// The record after the anchor when a page ended there is not in
		// the answer: deleted since, or skipped by a misread.
		doubt = true
	case ended:
		// Confirmed by the index only where it knows the list's end
		// right after these records, from the anchor's place.
		doubt = at < 0 || h.end != at+1+e.keysetRemaining(pg, run, anchor)
	case h.hasHi && len(keyed) > 0:
		// A record the index knows above the anchor, inside the span
		// the records cover, must be one of them.
		last := keyed[len(keyed)-1]
		if e.Order.Compare(h.hi.id, last) <= 0 {
			_, found := sort.Find(len(keyed), func(i int) int { return e.Order.Compare(h.hi.id, keyed[i]) })
			doubt = !found
		}
	}
	if doubt {
		if counted {
			e.Index.learn(req.List, []sample{{at, anchor}}, at+1, -1) // where the offset read's search starts
		}
		if ended && run != nil {
			// Read by offset as far as the answer said the list goes,
			// and a record more: the index then knows its end, and the
			// window read is the one the walk goes on from.
			ahead = max(ahead, e.keysetRemaining(pg, run, anchor)+1)
		}
		return e.keysetCheck(ctx, f, ls, req, ahead, head, pg)
	}
	e.keysetMarks(ls, req, pg, run, anchor, at)
	cut(pg, req.Size)
	return pg, run, calls, nil
}

// keysetRemaining returns how many records the answers of a keyset page
// held above anchor: the page's, and those past it in the window read
// with it.
func (e *Engine) keysetRemaining(pg *Page, run *StoredWindow, anchor string) int {
	keyed := pg.IDs[pg.Head:]
	if run == nil {
		return len(keyed)
	}
	if e.Order.Compare(run.floor, anchor) == 0 {
		return len(run.ids)
	}
	i, _ := sort.Find(len(keyed), func(i int) int { return e.Order.Compare(run.floor, keyed[i]) })
	return i + 1 + len(run.ids)
}

// keysetMarks remembers where a page served by keyset ended, and the
// last record of the window read with it, for the checks of the pages
// that go on from there: the records that follow, and their offsets
// when the anchor's (at) is known. Called before the page is cut.
func (e *Engine) keysetMarks(ls *listState, req Request, pg *Page, run *StoredWindow, anchor string, at int) {
	keyed := pg.IDs[pg.Head:]
	offOf := func(id string) int { // the offset of anchor or a record of keyed
		if at < 0 {
			return -1
		}
		if e.Order.Compare(id, anchor) == 0 {
			return at
		}
		if i, found := sort.Find(len(keyed), func(i int) int { return e.Order.Compare(id, keyed[i]) }); found {
			return at + 1 + i
		}
		return -1
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if len(pg.IDs) > req.Size {
		last := pg.IDs[req.Size-1]
		ls.keyed.remember(keysetMark{id: last, next: pg.IDs[req.Size], off: offOf(last)})
	}
	if run != nil && len(run.ids) > 0 {
		off := offOf(run.floor)
		if off >= 0 {
			off += len(run.ids)
		}
		ls.keyed.remember(keysetMark{id: run.ids[len(run.ids)-1], off: off})
	}
}

// keysetCheck reads by offset the page that pg, read by keyset in the
// page's first calls, claims to be, and serves the offset page. When the
// two differ, records may have come or gone between the calls: the
// backend is asked by keyset once more. A misread repeats itself: a
// second answer that agrees with the first, not with the offset read, is
// a misread, and the list identity is read by offset from then on. A
// second answer that agrees with the offset read shows the backend reads
// the condition right; one that agrees with neither shows only that the
// list changed, and the next page is checked again.
func (e *Engine) keysetCheck(ctx context.Context, f Fetcher, ls *listState, req Request, ahead int, head, pg *Page) (*Page, *StoredWindow, int, error) {
	calls := pg.Calls
	cut(pg, req.Size)
	opg, run, err := e.offsetPage(ctx, f, ls, req, ahead, calls, head)
	if err != nil {
		return nil, nil, 0, err
	}
	reason := disagreement(pg, opg)
	checked := reason == ""
	if !checked {
		again, err := e.keysetAgain(ctx, f, ls, req, head, opg.Calls)
		opg.Calls++
		if err != nil {
			return nil, nil, 0, err
		}
		switch {
		case disagreement(again, opg) == "":
			checked = true
		case disagreement(again, pg) == "":
			e.keysetMisread(ls, fmt.Sprintf("asked for records above id %.40q, %s", req.After, reason))
		}
		if r, ok := f.(Releaser); ok {
			r.Release(opg.Calls - 1)
		}
	}
	if checked {
		ls.mu.Lock()
		ls.keyed.checked = true
		ls.mu.Unlock()
	}
	e.releaseAll(f, calls) // the keyset answers: the page is the offset read's
	return opg, run, opg.Calls, nil
}

// keysetAgain asks the backend once more, in one call (number call of
// the page), for the keyset page after req's cursor, or after head's last
// record when the page starts from a window's head, and returns it cut
// as a page. It is for comparing only: its ids may live in the answer's
// memory, which the caller releases.
func (e *Engine) keysetAgain(ctx context.Context, f Fetcher, ls *listState, req Request, head *Page, call int) (*Page, error) {
	pg := &Page{}
	after := req.After
	if head != nil {
		pg.IDs = append(pg.IDs, head.IDs...)
		after = head.IDs[len(head.IDs)-1]
	}
	ls.mu.Lock()
	inclusive := ls.keyed.inclusive || e.KeysetInclusive
	ls.mu.Unlock()
	ask := req.Size + 1 - len(pg.IDs)
	if inclusive {
		ask++
	}
	w := Window{Start: -1, Size: max(min(ask, ls.sizes.view(e.MaxPageSize).limit), 2), After: after}
	maxCalls := e.MaxCalls
	if maxCalls < 1 {
		maxCalls = DefaultMaxCalls
	}
	if call >= maxCalls {
		return nil, &CallLimitError{Calls: call}
	}
	b, err := f.Fetch(ctx, w)
	if err != nil {
		return nil, err
	}
	if len(b.IDs) > w.Size {
		w.Size = len(b.IDs) // compared, not served: its length is checked by the page it is compared with
	}
	if err := e.check(b, w); err != nil {
		return nil, err
	}
	ids := b.IDs
	if len(ids) > 0 && e.Order.Compare(ids[0], after) == 0 {
		ids = ids[1:]
	}
	pg.IDs = append(pg.IDs, ids...)
	cut(pg, req.Size)
	return pg, nil
}

// disagreement says where a keyset page k differs from the offset page o
// of the same cursor, or "" when they hold the same records.
func disagreement(k, o *Page) string {
	for i := range max(len(k.IDs), len(o.IDs)) {
		switch {
		case i == len(k.IDs):
			return fmt.Sprintf("the backend's keyset answer ended before id %.40q, which reading by offset found", o.IDs[i])
		case i == len(o.IDs):
			return fmt.Sprintf("the backend's keyset answer held id %.40q past where reading by offset found the list's end", k.IDs[i])
		case k.IDs[i] != o.IDs[i]:
			return fmt.Sprintf("the backend answered id %.40q where reading by offset found id %.40q", k.IDs[i], o.IDs[i])
		}
	}
	if k.More != o.More {
		if k.More {
			return "the backend's keyset answer held records past where reading by offset found the list's end"
		}
		return "the backend's keyset answer ended the list where reading by offset found more records"
	}
	return ""
}

// cut cuts the lookahead record off a page read by keyset.
func cut(pg *Page, size int) {
	if len(pg.IDs) > size {
		pg.More = true
		pg.IDs = pg.IDs[:size]
		if pg.Records != nil {
			pg.Records = pg.Records[:size]
		}
	}
}

// keysetPage reads a cursor page by keyset, with ahead records more in
// each call when a walk continues; a window's head, when there is one,
// starts the page, and the first call asks for the records above its
// last. Each call is anchored at an id the page already holds, and only
// an id the template can carry safely is written into the backend's
// query: the cursor was checked (keysetFor), and the ids the backend sent
// are checked here, as any text written into a query is. It returns a nil
// page and no error when an answer showed the backend does not keep the
// condition, or an anchor cannot be written: the caller reads the page by
// offset, after the calls made (which it counts on from: they are the
// fetcher's first). The page is not cut: it holds the lookahead record
// when more follow. long says an answer held more records than asked, and
// ended that the answers showed the list's end.
func (e *Engine) keysetPage(ctx context.Context, f Fetcher, ls *listState, req Request, ahead int, head *Page) (_ *Page, _ *StoredWindow, calls int, long, ended bool, _ error) {
	ls.mu.Lock()
	inclusive := ls.keyed.inclusive || e.KeysetInclusive
	ls.mu.Unlock()
	maxCalls := e.MaxCalls
	if maxCalls < 1 {
		maxCalls = DefaultMaxCalls
	}
	want := req.Size + 1
	pg := &Page{Source: -1, Keyset: true}
	after := req.After
	var overlap string // a record the next answer must hold first: the head's last
	if head != nil {
		n := len(head.IDs)
		pg.IDs, pg.Records, pg.Head = head.IDs, head.Records, n // capped: the next take copies
		// Anchored one record before the head's last, which the answer
		// must then hold first: a backend whose condition skips records
		// above an anchor shows it on a record the window holds.
		overlap = head.IDs[n-1]
		if n > 1 {
			after = head.IDs[n-2]
		}
	}
	var (
		run     *StoredWindow // the last answer that holds records past the page, as a window to keep
		suspect = -1          // a short answer's length not yet explained: a clamp, or the end
	)
	for {
		if err := ctx.Err(); err != nil {
			return nil, nil, 0, false, false, err
		}
		if pg.Calls == maxCalls {
			return nil, nil, 0, false, false, &CallLimitError{Calls: pg.Calls}
		}
		if after != req.After && e.Keyset(after) != nil {
			e.releaseAll(f, pg.Calls) // an anchor the template cannot carry: read by offset
			return nil, nil, pg.Calls, false, false, nil
		}
		v := ls.sizes.view(e.MaxPageSize)
		ask := want - len(pg.IDs) + ahead
		if inclusive {
			ask++
		}
		if overlap != "" {
			ask++
		}
		ask = max(min(ask, v.limit), 2)
		w := Window{Start: -1, Size: ask, After: after}
		b, err := f.Fetch(ctx, w)
		pg.Calls++
		if err != nil {
			return nil, nil, 0, false, false, err
		}
		n := len(b.IDs)
		if n > ask {
			// The backend ignores the page size asked: learned as an
			// offset answer's is, refused past backend_max_per_page, and
			// the page is checked against an offset read (keysetCheck).
			if _, _, err := e.longAnswer(&ls.sizes, w, n, true); err != nil {
				return nil, nil, 0, false, false, err
			}
			w.Size, long = n, true
		}
		if err := e.check(b, w); err != nil {
			return nil, nil, 0, false, false, err
		}
		if suspect >= 0 && n > 0 && ls.sizes.clamp(suspect) {
			e.learned(suspect, false) // a short answer that was not the list's end
		}
		suspect = -1
		ls.sizes.saw(n)
		ids, recs := b.IDs, b.Records
		if n > 0 && e.Order.Compare(ids[0], after) == 0 {
			ids = ids[1:] // an inclusive condition: the cursor's own record
			if recs != nil {
				recs = recs[1:]
			}
			if !inclusive {
				inclusive = true
				ls.mu.Lock()
				ls.keyed.inclusive = true
				ls.mu.Unlock()
			}
		}
		if len(ids) > 0 && e.Order.Compare(ids[0], after) <= 0 {
			e.keysetMisread(ls, fmt.Sprintf("asked for records above id %.40q, the backend answered with id %.40q first", after, ids[0]))
			e.releaseAll(f, pg.Calls)
			return nil, nil, pg.Calls, false, false, nil
		}
		if overlap != "" {
			k, found := sort.Find(len(ids), func(i int) int { return e.Order.Compare(overlap, ids[i]) })
			if !found {
				// The window's record is not above its anchor: gone since
				// the window was read, or skipped by a misread. This page
				// is read by offset, and the list's next keyset page is
				// checked against an offset read.
				ls.mu.Lock()
				ls.keyed.checked = false
				ls.mu.Unlock()
				e.releaseAll(f, pg.Calls)
				return nil, nil, pg.Calls, false, false, nil
			}
			ids, after, overlap = ids[k+1:], overlap, ""
			if recs != nil {
				recs = recs[k+1:]
			}
		}
		pg.Fetched += n
		// An answer short of what was asked ends the list unless a clamp
		// cut it; an answer no longer than the backend was seen to serve,
		// or short of any clamp, cannot have been cut.
		short := n < w.Size
		ended = short && (w.Size <= v.trusted() || n < max(v.seen, MinBackendPageSize))
		if short && !ended {
			suspect = n
		}
		take := min(len(ids), want-len(pg.IDs))
		if ahead > 0 && (len(ids)-take >= 1 || ended) {
			// Anchored at after by the backend's condition: a run of the
			// list above it, whatever this page took of it. after may be
			// an id of an earlier answer of this page, whose memory the
			// fetcher reuses once the page is done: the window keeps a
			// copy.
			run = &StoredWindow{ids: ids, records: recs, floor: strings.Clone(after), ended: ended, start: -1, call: pg.Calls - 1}
		}
		if take > 0 {
			if pg.Source < 0 {
				pg.Source = pg.Calls - 1
			}
			if len(pg.IDs) == 0 {
				pg.IDs = ids[:take:take]
				if recs != nil {
					pg.Records = recs[:take:take]
				}
			} else {
				pg.IDs = append(pg.IDs, ids[:take]...)
				if recs != nil {
					pg.Records = append(pg.Records, recs[:take]...)
				}
			}
		}
		if len(pg.IDs) == want || ended {
			break
		}
		if take > 0 {
			after = pg.IDs[len(pg.IDs)-1]
		}
	}
	if pg.Source < 0 {
		pg.Source = pg.Calls - 1 // no record: the page is the answer that showed the end
	}
	return pg, run, pg.Calls, long, ended, nil
}

// releaseAll frees the answers of the first calls of a page given up.
func (e *Engine) releaseAll(f Fetcher, calls int) {
	if r, ok := f.(Releaser); ok {
		for c := range calls {
			r.Release(c)
		}
	}
}

// keysetMisread stops keyset reads of the list and tells the observer.
func (e *Engine) keysetMisread(ls *listState, reason string) {
	ls.mu.Lock()
	was := ls.keyed.misread
	ls.keyed.misread = true
	ls.mu.Unlock()
	if !was && e.OnKeysetMisread != nil {
		e.OnKeysetMisread(reason)
	}
}
