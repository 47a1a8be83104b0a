package translate

import (
	"context"
	"fmt"
	"hash/maphash"
	"sort"
	"strings"

	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/helpdesk-gateway/gateway/liststore"
)

// Keyset pages: a backend that filters by id ("id_gt=X") is asked for the
// records above the cursor, in id order, instead of for an offset: one
// call for a page at any depth, and for the window read ahead with it
// when a walk continues (a window with no offset: "ids above X, up to
// its size"), no search, no index. The answer is anchored at the cursor
// by the backend's own condition, so a page cut from it is the records
// after the cursor as the backend held them, as the guarantee asks.
//
// The condition is the backend's, so answers are checked, not trusted,
// where a misread can show (keysetChecked): every answer in id order and
// above its anchor (an inclusive condition, id_gte, sends the anchor
// first: Engine.KeysetInclusive expects it or answers teach it); a
// window's first record the one seen after the anchor before; ids that
// grow a digit, where text and numeric comparison part (textMayDiffer).
// Where those cannot tell (a list identity's first answer, an answer
// that ends the list, one longer than asked), the records are read by
// offset too, and a page that disagrees is a misread: the offset page is
// served, and the list identity is read by offset from then on.

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
// after it, which the next page's answer must hold first unless records
// changed there since (an offset read tells), and its offset, counted
// from an offset read through the keyset answers since, or -1. The offset
// is a hint: where the call that confirms the walk's end looks
// (keysetEnd), or the offset read of a check starts its search.
//
// Ids are kept as keyed hashes (markHash), not text: a mark is then a
// fixed size, counted whole in the list's object (ListStore's bound),
// whatever the ids' length. Two ids that share a hash cost a check at
// most; the key is random per process, so a client cannot aim for that.
type keysetMark struct {
	id, next uint64 // markHash of the ids; next 0 when not known
	off      int
}

// keysetMarks is how many marks a list identity keeps: a few walks' at
// once.
const keysetMarks = 4

// markSeed keys markHash.
var markSeed = maphash.MakeSeed()

// markHash is id's hash for a keysetMark, never 0.
func markHash(id string) uint64 {
	return max(maphash.String(markSeed, id), 1)
}

// mark returns the mark of id, if any. Callers hold the list's mutex.
func (k *keyset) mark(id string) (keysetMark, bool) {
	h := markHash(id)
	for _, m := range k.marks {
		if m.id == h {
			return m, true
		}
	}
	return keysetMark{}, false
}

// remember keeps m. Callers hold the list's mutex.
func (k *keyset) remember(m keysetMark) {
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

// keysetAnswer is what a keyset read of a page gave: the page, not cut
// (it holds the lookahead record when more follow), the last answer as
// a window to keep when the page reads ahead, and what the checks
// (keysetChecked) look at.
type keysetAnswer struct {
	pg     *Page
	run    *liststore.StoredWindow
	anchor string // the record the answers' records are above: the cursor, or the head's last
	// long says an answer held more records than asked, ended that the
	// answers showed the list's end, and crossed that an answer holds ids
	// a backend comparing ids as text could have left records before
	// (textMayDiffer).
	long, ended, crossed bool
}

// keysetPage reads a cursor page by keyset, with ahead records more in
// each call when a walk continues. A window's head, when there is one,
// starts the page, and the first call asks for the records above its
// last but one, whose answer must hold the head's last. A read ahead
// of the walker (prefetch) names prev, the record before the cursor in
// the window it continues, for the same check: a backend whose condition
// skips records above an anchor shows it on a record already seen. Each
// call is anchored at an id the page already holds, and only an id the
// template can carry safely is written into the backend's query: the
// cursor was checked (keysetFor), and the ids the backend sent are
// checked here, as any text written into a query is. It returns no page
// and no error when an answer showed the backend does not keep the
// condition, or an anchor cannot be written: the caller reads the page
// by offset, after the calls made (which it counts on from: they are the
// fetcher's first).
func (e *Engine) keysetPage(ctx context.Context, f Fetcher, ls *listState, req Request, ahead int, h head, prev string) (k keysetAnswer, calls int, _ error) {
	ls.mu.Lock()
	inclusive := ls.keyed.inclusive || e.KeysetInclusive
	ls.mu.Unlock()
	want := req.Size + 1
	pg := &Page{Source: -1, Keyset: true}
	after, overlap := req.After, "" // overlap: a record the next answer must hold first
	k.anchor = req.After
	if ids := h.ids(); len(ids) > 0 {
		h.start(pg)
		n := len(ids)
		overlap, k.anchor = ids[n-1], ids[n-1]
		if n > 1 {
			after = ids[n-2]
		}
	} else if prev != "" {
		after, overlap = prev, req.After
	}
	suspect := -1 // a short answer's length not yet explained: a clamp, or the end
	for {
		if err := e.budget(ctx, pg.Calls); err != nil {
			return k, 0, err
		}
		if after != req.After && e.Keyset(after) != nil {
			e.releaseAll(f, pg.Calls) // an anchor the template cannot carry: read by offset
			return keysetAnswer{}, pg.Calls, nil
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
		if v.fixed {
			ask = v.limit // the backend sends its own page size: ask for it, as offset calls do
		}
		w := Window{Start: -1, Size: ask, After: after}
		b, err := f.Fetch(ctx, w)
		pg.Calls++
		if err != nil {
			return k, 0, err
		}
		n := len(b.IDs)
		if n > ask {
			// The backend ignores the page size asked: learned as an
			// offset answer's is, refused past backend_max_per_page, and
			// the page is checked against an offset read (keysetCheck).
			if _, _, err := e.longAnswer(&ls.sizes, req.List, w, n, true); err != nil {
				return k, 0, err
			}
			w.Size, k.long = n, true
		}
		if err := e.check(b, w); err != nil {
			return k, 0, err
		}
		if suspect >= 0 && n > 0 && ls.sizes.clamp(suspect) {
			e.learned(req.List, suspect, false) // a short answer that was not the list's end
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
			return keysetAnswer{}, pg.Calls, nil
		}
		sent := after
		if overlap != "" {
			i, found := sort.Find(len(ids), func(i int) int { return e.Order.Compare(overlap, ids[i]) })
			if !found {
				// The record already seen after the anchor is not above
				// it: gone since it was read, or skipped by a misread.
				// This page is read by offset, and the list's next keyset
				// page is checked against an offset read.
				ls.mu.Lock()
				ls.keyed.checked = false
				ls.mu.Unlock()
				e.releaseAll(f, pg.Calls)
				return keysetAnswer{}, pg.Calls, nil
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
		short := n < w.Size
		k.ended = short && (w.Size <= v.trusted() || n < max(v.seen, MinBackendPageSize))
		if short && !k.ended {
			suspect = n
		}
		take := min(len(ids), want-len(pg.IDs))
		if ahead > 0 && (len(ids)-take >= 1 || k.ended) {
			// Anchored at after by the backend's condition: a run of the
			// list above it, whatever this page took of it. after may be
			// an id of an earlier answer of this page, whose memory the
			// fetcher reuses once the page is done: the window keeps a
			// copy.
			k.run = &liststore.StoredWindow{Span: liststore.Span{IDs: ids, Records: recs, Floor: strings.Clone(after), Ended: k.ended, Start: -1, Call: pg.Calls - 1}}
			k.crossed = k.crossed || e.textMayDiffer(sent, ids)
		} else {
			k.crossed = k.crossed || e.textMayDiffer(sent, ids[:take])
		}
		if take > 0 {
			if pg.Source < 0 {
				pg.Source = pg.Calls - 1
			}
			pg.add(ids, recs, 0, take)
		}
		if len(pg.IDs) == want || k.ended {
			break
		}
		if take > 0 {
			after = pg.IDs[len(pg.IDs)-1]
		}
	}
	if pg.Source < 0 {
		pg.Source = pg.Calls - 1 // no record: the page is the answer that showed the end
	}
	k.pg = pg
	return k, pg.Calls, nil
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
// after 95: the backend compares numbers). Such an answer is checked
// (keysetChecked): a walk's answers cross a length once.
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
