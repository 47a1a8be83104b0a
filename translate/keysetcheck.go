package translate

import (
	"context"
	"fmt"
	"sort"

	"github.com/helpdesk-gateway/gateway/liststore"
	"github.com/helpdesk-gateway/gateway/locate"
)

// The checks of keyset answers (see keyset.go): where a misread can
// show, and, where they cannot tell, how a keyset page is compared with an
// offset read of the same cursor and a misread told from records that
// changed between the two.

// keysetChecked reads a cursor page by keyset (keysetPage), with the
// window read ahead in its answer, and checks them before any of it is
// served. keysetPage held every answer above its anchor, in id order, and
// its first record against the one seen after the anchor. The page is
// read by offset too (keysetCheck), and the offset page and its window
// are served, when the list identity had no answer checked yet, when the
// backend sent more than asked, when the ids grow a digit (textMayDiffer),
// when the answers end the list where neither the index nor one offset
// call there (keysetEnd) shows that end, or when they leave out a record
// known above the anchor (an index sample, or the record that followed a
// page ending there). A window's records past the page are served
// unseen: these checks hold for all of them, and a walk's offset reads
// are its list's first check and the call at its end, at any length
// (more only for a backend that misreads, or under churn). The index
// learns nothing from keyset answers (keysetEnd's is an offset call): a
// backend that misreads the condition misreads it the same way in every
// answer, so what it taught would only ever agree with it.
func (e *Engine) keysetChecked(ctx context.Context, f Fetcher, ls *listState, req Request, ahead int, hd head, prev string) (*Page, *liststore.StoredWindow, int, error) {
	k, calls, err := e.keysetPage(ctx, f, ls, req, ahead, hd, prev)
	if k.pg == nil || err != nil {
		return nil, nil, calls, err
	}
	pg, run, anchor := k.pg, k.run, k.anchor
	keyed := pg.IDs[pg.Head:] // the page's records above anchor, as the backend sent them
	above, last := e.keysetRemaining(keyed, run, anchor)
	h := e.Index.lookup(req.List, anchor)
	at := -1 // the anchor's offset, when the index knows it
	if h.HasLo && e.Order.Compare(h.Lo.ID, anchor) == 0 {
		at = h.Lo.Off
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
	case !checked, k.long, k.crossed:
		doubt = true
	case m.next != 0 && (len(keyed) == 0 || markHash(keyed[0]) != m.next):
		// The record after the anchor when a page ended there is not the
		// answer's first: records changed there since, or a misread
		// skipped it.
		doubt = true
	case k.ended:
		// Confirmed where the index knows the list's end right after
		// these records, from the anchor's place, or where one offset
		// call there shows it (keysetEnd).
		doubt = at < 0 || h.End != at+1+above && !e.keysetEnd(ctx, f, ls, req.List, at+above, last, pg)
	case h.HasHi && above > 0 && e.Order.Compare(h.Hi.ID, last) <= 0:
		// A record the index knows above the anchor, inside the span
		// the records cover, must be one of them.
		doubt = !e.holds(keyed, h.Hi.ID) && (run == nil || !e.holds(run.IDs, h.Hi.ID))
	}
	if doubt {
		if counted {
			e.Index.learn(req.List, []locate.Sample{{Off: at, ID: anchor}}, at+1, -1) // where the offset read's search starts
		}
		if k.ended && run != nil {
			// Read by offset as far as the answers said the list goes,
			// and a record more: the index then knows its end, and the
			// window read is the one the walk goes on from.
			ahead = max(ahead, above+1)
		}
		return e.keysetCheck(ctx, f, ls, req, ahead, hd, pg)
	}
	e.keysetMarks(ls, req, pg, run, anchor, at)
	cut(pg, req.Size)
	return pg, run, pg.Calls, nil
}

// keysetEnd reports whether the list ends at offset end with the record
// last, as keyset answers say: one offset call of a few records there
// (a text comparison that left out every longer id, or a condition on
// another field, ends the answers early: another record is there, or
// follows). Its answer teaches the index, and is freed; the call is
// counted in pg.
func (e *Engine) keysetEnd(ctx context.Context, f Fetcher, ls *listState, list string, end int, last string, pg *Page) bool {
	if e.callLimit(pg.Calls) != nil {
		return false
	}
	v := ls.sizes.view(e.MaxPageSize)
	w := v.plan(end, end+2, v.limit, e.Offsets)
	b, err := f.Fetch(ctx, w)
	pg.Calls++
	if r, ok := f.(Releaser); ok {
		defer r.Release(pg.Calls - 1)
	}
	if err != nil {
		return false
	}
	pg.Fetched += len(b.IDs)
	i := end - w.Start
	if len(b.IDs) > w.Size || e.check(b, w) != nil || len(b.IDs) != i+1 || b.IDs[i] != last {
		return false
	}
	e.learn(list, b.IDs, w.Start, true, nil)
	return true
}

// holds reports whether the ascending ids hold id.
func (e *Engine) holds(ids []string, id string) bool {
	_, found := sort.Find(len(ids), func(i int) int { return e.Order.Compare(id, ids[i]) })
	return found
}

// keysetRemaining returns how many records the answers of a keyset page
// held above anchor, the page's (keyed) and those past it in the window
// read with it, and the last of them.
func (e *Engine) keysetRemaining(keyed []string, run *liststore.StoredWindow, anchor string) (int, string) {
	if run == nil || len(run.IDs) == 0 {
		if len(keyed) == 0 {
			return 0, anchor
		}
		return len(keyed), keyed[len(keyed)-1]
	}
	last := run.IDs[len(run.IDs)-1]
	if e.Order.Compare(run.Floor, anchor) == 0 {
		return len(run.IDs), last
	}
	i, _ := sort.Find(len(keyed), func(i int) int { return e.Order.Compare(run.Floor, keyed[i]) })
	return i + 1 + len(run.IDs), last
}

// keysetMarks remembers where a page served by keyset ended, and the
// last record of the window read with it, for the checks of the pages
// that go on from there: the record that follows, and their offsets
// when the anchor's (at) is known. Called before the page is cut.
func (e *Engine) keysetMarks(ls *listState, req Request, pg *Page, run *liststore.StoredWindow, anchor string, at int) {
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
		ls.keyed.remember(keysetMark{id: markHash(last), next: markHash(pg.IDs[req.Size]), off: offOf(last)})
	}
	if run != nil && len(run.IDs) > 0 {
		off := offOf(run.Floor)
		if off >= 0 {
			off += len(run.IDs)
		}
		ls.keyed.remember(keysetMark{id: markHash(run.IDs[len(run.IDs)-1]), off: off})
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
func (e *Engine) keysetCheck(ctx context.Context, f Fetcher, ls *listState, req Request, ahead int, h head, pg *Page) (*Page, *liststore.StoredWindow, int, error) {
	calls := pg.Calls
	cut(pg, req.Size)
	opg, run, err := e.offsetPage(ctx, f, ls, req, ahead, calls, h)
	if err != nil {
		return nil, nil, 0, err
	}
	reason := disagreement(pg, opg)
	checked := reason == ""
	if !checked && e.callLimit(opg.Calls) == nil {
		// With no call left the offset page is served as it is, right,
		// and the next page is checked again.
		again, err := e.keysetAgain(ctx, f, ls, req, h, opg.Calls)
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
func (e *Engine) keysetAgain(ctx context.Context, f Fetcher, ls *listState, req Request, h head, call int) (*Page, error) {
	pg := &Page{}
	after := req.After
	if ids := h.ids(); len(ids) > 0 {
		pg.IDs = append(pg.IDs, ids...)
		after = ids[len(ids)-1]
	}
	ls.mu.Lock()
	inclusive := ls.keyed.inclusive || e.KeysetInclusive
	ls.mu.Unlock()
	ask := req.Size + 1 - len(pg.IDs)
	if inclusive {
		ask++
	}
	w := Window{Start: -1, Size: max(min(ask, ls.sizes.view(e.MaxPageSize).limit), 2), After: after}
	if err := e.callLimit(call); err != nil {
		return nil, err
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
