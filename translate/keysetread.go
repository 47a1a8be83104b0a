package translate

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/helpdesk-gateway/gateway/liststore"
	"github.com/helpdesk-gateway/gateway/locate"
)

// Keyset pages: a backend that filters by id ("id_gt=X") is asked for the
// records above the cursor, in id order, instead of for an offset: one
// call for a page at any depth, and for the window read ahead with it
// when a walk continues (a window with no offset: "ids above X, up to
// its size"), no search, no index. The answer is anchored at the cursor
// by the backend's own condition, so a page cut from it is the records
// after the cursor as the backend held them, as the guarantee asks.
//
// The condition is the backend's, so answers are not trusted: each is
// checked where a misread can show (keysetRead.read), and a page whose
// answers cannot tell (keysetRead.doubt) is read by offset too
// (keysetRead.confirm). A page that disagrees is a misread: the offset
// page is served, and the list identity is read by offset from then on.

// keysetFor reports whether a cursor page of the list is asked by keyset.
func (e *Engine) keysetFor(ls *listState, after string) bool {
	return e.Keyset != nil && e.Keyset(after) == nil && !ls.keyed.isMisread()
}

// keysetRead is one keyset page in the making: what its steps share.
type keysetRead struct {
	e     *Engine
	f     Fetcher
	rel   Releaser // nil when f cannot free answers early
	ls    *listState
	req   Request
	ahead int    // records more in each call when a walk continues
	h     head   // a window's records after the cursor, which start the page
	prev  string // the record before the cursor that a read ahead of the walker knows (see read)

	want   int                     // the page and one record more, to know if more exist
	pg     *Page                   // the page, not cut until served
	run    *liststore.StoredWindow // the last answer, kept as a window when the page reads ahead
	anchor string                  // the answers' records are above it: the cursor, or the head's last
	// An answer held more records than asked (long), the answers showed
	// the list's end (ended), ids a backend comparing them as text could
	// have left records before (crossed, textMayDiffer).
	long, ended, crossed bool

	// What doubt found, for confirm and mark.
	keyed   []string // the page's records above anchor
	above   int      // how many records the answers held above anchor, the window's too
	last    string   // the last of them
	at      int      // anchor's offset, or -1
	counted bool     // at is a mark's, counted through keyset answers: not the index's
}

// keysetPage reads a cursor page by keyset, with ahead records more in
// each call when a walk continues, in keysetRead's steps: start; read,
// the call loop, with each answer's checks; doubt; confirm, by an offset
// read, a page doubted; or mark where a page served ended. It returns no
// page and no error when an answer showed the backend does not keep the
// condition, or an anchor cannot be written into its query: the caller
// reads the page by offset, after the calls made (the fetcher's first).
func (e *Engine) keysetPage(ctx context.Context, f Fetcher, ls *listState, req Request, ahead int, h head, prev string) (*Page, *liststore.StoredWindow, int, error) {
	var r keysetRead
	r.start(e, f, ls, req, ahead, h, prev)
	if ok, err := r.read(ctx); !ok || err != nil {
		return nil, nil, r.pg.Calls, err
	}
	if r.doubt(ctx) {
		return r.confirm(ctx)
	}
	r.mark()
	cut(r.pg, r.req.Size)
	return r.pg, r.run, r.pg.Calls, nil
}

// start sets the page up: a window's head, when there is one, starts it.
func (r *keysetRead) start(e *Engine, f Fetcher, ls *listState, req Request, ahead int, h head, prev string) {
	*r = keysetRead{e: e, f: f, ls: ls, req: req, ahead: ahead, h: h, prev: prev,
		want: req.Size + 1, pg: &Page{Source: -1, Keyset: true}, anchor: req.After}
	r.rel, _ = f.(Releaser)
	if ids := h.ids(); len(ids) > 0 {
		h.start(r.pg)
		r.anchor = ids[len(ids)-1]
	}
}

// read is the call loop. The first call asks for the records above the
// cursor, or above the head's last but one, or above prev (the record
// before the cursor in the window a read ahead of the walker continues):
// its answer must then hold the record seen after that anchor first, as
// a condition that skips records shows. Each answer is checked before
// its records are taken: ids in order and above the anchor (id_gte sends
// the anchor first: Engine.KeysetInclusive expects it or an answer shows
// it), and ids that grow a digit (textMayDiffer). Each call is anchored
// at an id the page holds, one the template can carry safely. It reports
// false, with the calls made freed, for a page read by offset.
func (r *keysetRead) read(ctx context.Context) (bool, error) {
	e, pg := r.e, r.pg
	inclusive := r.isInclusive()
	after, overlap := r.req.After, "" // overlap: a record the next answer must hold first
	if ids := r.h.ids(); len(ids) > 0 {
		overlap = ids[len(ids)-1]
		if len(ids) > 1 {
			after = ids[len(ids)-2]
		}
	} else if r.prev != "" {
		after, overlap = r.prev, r.req.After
	}
	short := -1 // a short answer's length not yet explained: a clamp, or the end
	for {
		if err := e.budget(ctx, pg.Calls); err != nil {
			return false, err
		}
		if after != r.req.After && e.Keyset(after) != nil {
			return r.fallBack() // an anchor the template cannot carry
		}
		v := r.ls.sizes.view(e.MaxPageSize)
		ask := r.want - len(pg.IDs) + r.ahead
		if inclusive {
			ask++
		}
		if overlap != "" {
			ask++
		}
		ask = max(min(ask, v.limit), 2)
		if v.fixed {
			ask = v.limit // the backend sends its own page size: ask for it, as offset calls do
		}
		w := Window{Start: -1, Size: ask, After: after}
		b, err := r.f.Fetch(ctx, w)
		pg.Calls++
		if err != nil {
			return false, err
		}
		n := len(b.IDs)
		if n > ask {
			// The backend ignores the page size asked: found as for an
			// offset answer, refused past backend_max_per_page, doubted.
			if _, _, err := e.longAnswer(&r.ls.sizes, r.req.List, w, n, true); err != nil {
				return false, err
			}
			w.Size, r.long = n, true
		}
		if err := e.check(b, w); err != nil {
			return false, err
		}
		if short >= 0 && n > 0 && r.ls.sizes.clamp(short) {
			e.reportLimit(r.req.List, short, false) // a short answer that was not the list's end
		}
		short = -1
		r.ls.sizes.saw(n)
		ids, recs := b.IDs, b.Records
		if n > 0 && e.Order.Compare(ids[0], after) == 0 {
			ids = ids[1:] // an inclusive condition: the cursor's own record
			if recs != nil {
				recs = recs[1:]
			}
			if !inclusive {
				inclusive = true
				r.ls.keyed.setInclusive()
			}
		}
		if len(ids) > 0 && e.Order.Compare(ids[0], after) <= 0 {
			r.misread(fmt.Sprintf("asked for records above id %.40q, the backend answered with id %.40q first", after, ids[0]))
			return r.fallBack()
		}
		sent := after
		if overlap != "" {
			i, found := r.find(ids, overlap)
			if !found {
				// The record seen after the anchor is not above it: gone
				// since, or skipped by a misread. This page is read by
				// offset, and the list's next keyset page confirmed.
				r.ls.keyed.setConfirmed(false)
				return r.fallBack()
			}
			ids, after, overlap = ids[i+1:], overlap, ""
			if recs != nil {
				recs = recs[i+1:]
			}
		}
		pg.Fetched += n
		// An answer short of what was asked ends the list unless a clamp
		// cut it; an answer no longer than the backend was seen to serve,
		// or short of any clamp, cannot have been cut.
		cutShort := n < w.Size
		r.ended = cutShort && (w.Size <= v.trusted() || n < max(v.seen, MinBackendPageSize))
		if cutShort && !r.ended {
			short = n
		}
		take := min(len(ids), r.want-len(pg.IDs))
		if r.ahead > 0 && (len(ids)-take >= 1 || r.ended) {
			// Anchored at after by the backend's condition: a run of the
			// list above it. after may live in an earlier answer's memory,
			// which the fetcher reuses once the page is done: a copy.
			r.run = &liststore.StoredWindow{Span: liststore.Span{IDs: ids, Records: recs, Floor: strings.Clone(after), Ended: r.ended, Start: -1, Call: pg.Calls - 1}}
			r.crossed = r.crossed || e.textMayDiffer(sent, ids)
		} else {
			r.crossed = r.crossed || e.textMayDiffer(sent, ids[:take])
		}
		if take > 0 {
			if pg.Source < 0 {
				pg.Source = pg.Calls - 1
			}
			pg.add(ids, recs, 0, take)
		}
		if len(pg.IDs) == r.want || r.ended {
			break
		}
		if take > 0 {
			after = pg.IDs[len(pg.IDs)-1]
		}
	}
	if pg.Source < 0 {
		pg.Source = pg.Calls - 1 // no record: the page is the answer that showed the end
	}
	return true, nil
}

// isInclusive reports whether answers are expected to hold their anchor.
func (r *keysetRead) isInclusive() bool {
	return r.ls.keyed.isInclusive() || r.e.KeysetInclusive
}

// fallBack frees the answers of the calls made: the page is read by offset.
func (r *keysetRead) fallBack() (bool, error) {
	r.free(0, r.pg.Calls)
	return false, nil
}

// free frees the answers of the page's calls [from, to).
func (r *keysetRead) free(from, to int) {
	if r.rel != nil {
		for c := from; c < to; c++ {
			r.rel.Release(c)
		}
	}
}

// misread stops keyset reads of the list and tells the observer.
func (r *keysetRead) misread(reason string) {
	if r.ls.keyed.setMisread() && r.e.OnKeysetMisread != nil {
		r.e.OnKeysetMisread(reason)
	}
}

// find returns where id is, or would be, in the ascending ids.
func (r *keysetRead) find(ids []string, id string) (int, bool) {
	return sort.Find(len(ids), func(i int) int { return r.e.Order.Compare(id, ids[i]) })
}

// textMayDiffer reports whether ids, a numeric list's answer above x,
// may lack records that a backend comparing ids as text left out. Text
// and numeric comparison agree on whole numbers of one length, so a
// backend that compares as text reads "above x" right on ids of x's
// number of digits, and on longer ids leaves out a run at the start of
// each length (after 95: 100 to 949, as text below "95"). Only an answer
// that goes on to longer ids can show that, and it does not where x or
// the first id of the new length is a power of ten (nothing of that
// length lies below it), nor where that id is below x as text (100
// after 95: the backend compares numbers). Such a page is doubted: a
// walk's answers cross a length once.
func (e *Engine) textMayDiffer(x string, ids []string) bool {
	if e.Order != cursor.Numeric || plainNumber(x) && tenPower(x) {
		return false
	}
	d := len(x)
	for _, id := range ids {
		switch {
		case id < x:
			return false // a text comparison leaves it out: the backend compares numbers
		case len(id) == d && digits(id) && digits(x):
			// one length, no sign: text and numbers agree
		case len(id) > d && plainNumber(x) && plainNumber(id) && tenPower(id):
			d = len(id) // the first of its length: nothing of it below
		default:
			return true
		}
	}
	return false
}

// digits reports whether id is digits only: no sign.
func digits(id string) bool { return strings.Trim(id, "0123456789") == "" }

// plainNumber reports whether id is a positive whole number written with
// no sign and no leading zero.
func plainNumber(id string) bool { return id != "" && id[0] >= '1' && id[0] <= '9' }

// tenPower reports whether a plain number is a power of ten: 1, 10, 100.
func tenPower(id string) bool { return strings.TrimRight(id[1:], "0") == "" && id[0] == '1' }

// doubt reports whether the page read must be confirmed by an offset read
// before any of it is served: when the list identity had no answer
// confirmed yet, the backend sent more than asked, the ids grow a digit
// (textMayDiffer), the answers end the list where neither the index nor
// one offset call there (endsThere) shows that end, or they leave out a
// record known above the anchor (an index sample, or the record that
// followed a page ending there). A window's records past the page are
// served unseen: these hold for them too, and a walk's offset reads are
// its list's first confirmation and the call at its end, at any length
// (more only for a backend that misreads, or under churn). The index
// learns nothing from keyset answers (endsThere's is an offset call): a
// backend that misreads the condition misreads it alike in every answer.
func (r *keysetRead) doubt(ctx context.Context) bool {
	e, pg, run := r.e, r.pg, r.run
	r.keyed = pg.IDs[pg.Head:] // the page's records above anchor, as the backend sent them
	r.above, r.last = r.extent()
	h := e.Index.lookup(r.req.List, r.anchor)
	r.at = -1 // the anchor's offset, when the index knows it
	if h.HasLo && e.Order.Compare(h.Lo.ID, r.anchor) == 0 {
		r.at = h.Lo.Off
	}
	confirmed, m, marked := r.ls.keyed.recall(r.anchor)
	r.counted = r.at < 0 && marked && m.off >= 0
	if r.counted {
		r.at = m.off
	}
	switch {
	case !confirmed, r.long, r.crossed:
		return true
	case m.next != 0 && (len(r.keyed) == 0 || markHash(r.keyed[0]) != m.next):
		// The record after the anchor when a page ended there is not the
		// answer's first: records changed there since, or a misread
		// skipped it.
		return true
	case r.ended:
		// Shown where the index knows the list's end right after these
		// records, from the anchor's place, or where one offset call
		// there shows it (endsThere).
		return r.at < 0 || h.End != r.at+1+r.above && !r.endsThere(ctx)
	case h.HasHi && r.above > 0 && e.Order.Compare(h.Hi.ID, r.last) <= 0:
		// A record the index knows above the anchor, inside the span
		// the records cover, must be one of them.
		return !r.holds(r.keyed, h.Hi.ID) && (run == nil || !r.holds(run.IDs, h.Hi.ID))
	}
	return false
}

// holds reports whether the ascending ids hold id.
func (r *keysetRead) holds(ids []string, id string) bool {
	_, found := r.find(ids, id)
	return found
}

// extent returns how many records the answers held above anchor, the
// page's (keyed) and those past it in the window read with it, and the
// last of them.
func (r *keysetRead) extent() (int, string) {
	keyed, run := r.keyed, r.run
	if run == nil || len(run.IDs) == 0 {
		if len(keyed) == 0 {
			return 0, r.anchor
		}
		return len(keyed), keyed[len(keyed)-1]
	}
	last := run.IDs[len(run.IDs)-1]
	if r.e.Order.Compare(run.Floor, r.anchor) == 0 {
		return len(run.IDs), last
	}
	i, _ := r.find(keyed, run.Floor)
	return i + 1 + len(run.IDs), last
}

// endsThere reports whether the list ends with the record last at offset
// at+above, as the answers say, by one offset call of a few records there
// (a text comparison that left out every longer id, or a condition on
// another field, ends the answers early). Its answer teaches the index.
func (r *keysetRead) endsThere(ctx context.Context) bool {
	e, pg := r.e, r.pg
	if e.callLimit(pg.Calls) != nil {
		return false
	}
	end := r.at + r.above
	v := r.ls.sizes.view(e.MaxPageSize)
	w := v.plan(end, end+2, v.limit, e.Offsets)
	b, err := r.f.Fetch(ctx, w)
	pg.Calls++
	defer r.free(pg.Calls-1, pg.Calls)
	if err != nil {
		return false
	}
	pg.Fetched += len(b.IDs)
	i := end - w.Start
	if len(b.IDs) > w.Size || e.check(b, w) != nil || len(b.IDs) != i+1 || b.IDs[i] != r.last {
		return false
	}
	e.learn(r.req.List, b.IDs, w.Start, true, nil)
	return true
}

// confirm reads by offset the page that the keyset answers, the page's
// first calls, claim it is, and serves the offset page. When the two
// differ, records may have come or gone between the calls: the backend is
// asked by keyset once more (again). A misread repeats itself: a second
// answer that agrees with the first, not with the offset read, is a
// misread, and the list identity is read by offset from then on. A
// second answer that agrees with the offset read shows the backend reads
// the condition right; one that agrees with neither shows only that the
// list changed, and the next page is confirmed again.
func (r *keysetRead) confirm(ctx context.Context) (*Page, *liststore.StoredWindow, int, error) {
	e, pg, req := r.e, r.pg, r.req
	if r.counted {
		e.Index.learn(req.List, []locate.Sample{{Off: r.at, ID: r.anchor}}, r.at+1, -1) // where the offset read's search starts
	}
	ahead := r.ahead
	if r.ended && r.run != nil {
		// Read by offset as far as the answers said the list goes, and a
		// record more: the index then knows its end, and the window read
		// is the one the walk goes on from.
		ahead = max(ahead, r.above+1)
	}
	calls := pg.Calls
	cut(pg, req.Size)
	opg, run, err := e.offsetPage(ctx, r.f, r.ls, req, ahead, calls, r.h)
	if err != nil {
		return nil, nil, 0, err
	}
	if run != nil && run.Ended && len(run.IDs) > 0 && e.Order.Compare(r.last, run.IDs[len(run.IDs)-1]) > 0 {
		run = nil // it ends the list before records the keyset answers hold (see below): not kept
	}
	reason := disagreement(pg, opg)
	confirmed := reason == ""
	if !confirmed && r.endContradicted(opg) {
		// The offset read ended the list before a record the keyset
		// answers hold: whatever misread the condition, that record is
		// the backend's, above the cursor, so the list goes on (or it
		// was deleted since: either way the end is not the list's). An
		// offset answer cut short (once in CI, not explained) would
		// otherwise end a walk with a 200. The keyset page is served,
		// with no window, and the next page is confirmed again.
		r.free(calls, opg.Calls)
		pg.Calls, pg.Fetched = opg.Calls, pg.Fetched+opg.Fetched
		return pg, nil, pg.Calls, nil
	}
	if !confirmed && e.callLimit(opg.Calls) == nil {
		// With no call left the offset page is served as it is, right,
		// and the next page is confirmed again.
		again, err := r.again(ctx, opg.Calls)
		opg.Calls++
		if err != nil {
			return nil, nil, 0, err
		}
		switch {
		case disagreement(again, opg) == "":
			confirmed = true
		case disagreement(again, pg) == "":
			r.misread(fmt.Sprintf("asked for records above id %.40q, %s", req.After, reason))
		}
		r.free(opg.Calls-1, opg.Calls)
	}
	if confirmed {
		r.ls.keyed.setConfirmed(true)
	}
	r.free(0, calls) // the keyset answers: the page is the offset read's
	return opg, run, opg.Calls, nil
}

// endContradicted reports whether the offset page o ends the list
// before the last record the keyset answers held above the anchor.
func (r *keysetRead) endContradicted(o *Page) bool {
	if o.More || r.above == 0 {
		return false
	}
	last := r.anchor
	if n := len(o.IDs); n > o.Head {
		last = o.IDs[n-1]
	}
	return r.e.Order.Compare(r.last, last) > 0
}

// again asks the backend once more, in one call (number call of the
// page), for the keyset page after the cursor, or after the head's last
// record when the page starts from a window's head, and returns it cut as
// a page. It is for comparing only: its ids may live in the answer's
// memory, which confirm frees.
func (r *keysetRead) again(ctx context.Context, call int) (*Page, error) {
	e, req := r.e, r.req
	pg := &Page{}
	after := req.After
	if ids := r.h.ids(); len(ids) > 0 {
		pg.IDs = append(pg.IDs, ids...)
		after = ids[len(ids)-1]
	}
	ask := req.Size + 1 - len(pg.IDs)
	if r.isInclusive() {
		ask++
	}
	w := Window{Start: -1, Size: max(min(ask, r.ls.sizes.view(e.MaxPageSize).limit), 2), After: after}
	if err := e.callLimit(call); err != nil {
		return nil, err
	}
	b, err := r.f.Fetch(ctx, w)
	if err != nil {
		return nil, err
	}
	if len(b.IDs) > w.Size {
		w.Size = len(b.IDs) // compared, not served: its length is judged by the page it is compared with
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

// mark remembers where a page served by keyset ended, and the last record
// of the window read with it, for the pages that go on from there: the
// record that follows, and their offsets when the anchor's (at) is known.
// Called before the page is cut.
func (r *keysetRead) mark() {
	pg, run, size := r.pg, r.run, r.req.Size
	var room [2]keysetMark
	ms := room[:0]
	if len(pg.IDs) > size {
		last := pg.IDs[size-1]
		ms = append(ms, keysetMark{id: markHash(last), next: markHash(pg.IDs[size]), off: r.offsetOf(last)})
	}
	if run != nil && len(run.IDs) > 0 {
		off := r.offsetOf(run.Floor)
		if off >= 0 {
			off += len(run.IDs)
		}
		ms = append(ms, keysetMark{id: markHash(run.IDs[len(run.IDs)-1]), off: off})
	}
	r.ls.keyed.remember(ms)
}

// offsetOf returns the offset of the anchor or of a record of keyed, when
// the anchor's is known, else -1.
func (r *keysetRead) offsetOf(id string) int {
	if r.at < 0 {
		return -1
	}
	if r.e.Order.Compare(id, r.anchor) == 0 {
		return r.at
	}
	if i, found := r.find(r.keyed, id); found {
		return r.at + 1 + i
	}
	return -1
}
