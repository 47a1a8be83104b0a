package translate

import (
	"fmt"

	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/helpdesk-gateway/gateway/liststore"
	"github.com/helpdesk-gateway/gateway/locate"
)

// The one kind of answer the engine reads pages from. A backend call's
// answer, as a page reads it (answer, in page.go), and a read-ahead
// window (liststore.StoredWindow), which is such an answer kept for the pages
// after, are both a span: a run of the list's records as the backend held
// them, placed by an offset or above an id. A page is cut from the span
// that covers its cursor: whole, when the span holds the page and the
// record after it (or the list's end), or as a head, whose rest the
// engine reads from the backend, stitched on by keyset or by offset.

// cutPage cuts the page from the window's records from k on, which hold
// it. When the window runs out at the next page, the index learns where
// this page ends, so that the next page, read from the backend, finds its
// cursor in one call.
func (e *Engine) cutPage(req Request, w *liststore.StoredWindow, k int) *Page {
	rest := len(w.IDs) - k
	n := min(rest, req.Size)
	pg := &Page{IDs: w.IDs[k : k+n : k+n], More: rest > req.Size, Source: -1, Stored: w}
	if w.Records != nil {
		pg.Records = w.Records[k : k+n : k+n]
	}
	if at := w.Start + k + n; w.Start >= 0 && pg.More && rest-n <= req.Size && !w.Ended && n > 0 {
		e.Index.learn(req.List, []locate.Sample{{Off: at - 1, ID: w.IDs[at-w.Start-1]}, {Off: at, ID: w.IDs[at-w.Start]}}, at+1, -1)
	}
	return pg
}

// head is the records a stored window holds after a cursor, from its
// record k on, when they are fewer than the page and the record after
// it: the page starts with them, and the engine reads the rest from the
// backend, by keyset or by offset, in calls stitched on them. The zero
// head is none.
type head struct {
	w *liststore.StoredWindow
	k int
}

// ids returns the head's records' ids.
func (h head) ids() []string {
	if h.w == nil {
		return nil
	}
	return h.w.IDs[h.k:]
}

// start starts pg with the head's records.
func (h head) start(pg *Page) {
	pg.add(h.w.IDs, h.w.Records, h.k, len(h.w.IDs))
	pg.Head = len(pg.IDs)
}

// add adds the records [i, j) of an answer's ids and records (nil when
// the fetcher gave none) to the page. Most pages come from one answer:
// the first records added share its slices, capped, so that records added
// after them are appended to a copy, never into the answer, which a
// read-ahead window shares with other pages.
func (pg *Page) add(ids []string, records [][]byte, i, j int) {
	if i == j {
		return
	}
	if len(pg.IDs) == 0 {
		pg.IDs = ids[i:j:j]
		if records != nil {
			pg.Records = records[i:j:j]
		}
		return
	}
	pg.IDs = append(pg.IDs, ids[i:j]...)
	if records != nil {
		pg.Records = append(pg.Records, records[i:j]...)
	}
}

// cut cuts the lookahead record, read to know whether more follow, off a
// page of size records.
func cut(pg *Page, size int) {
	if len(pg.IDs) > size {
		pg.More = true
		pg.IDs = pg.IDs[:size]
		if pg.Records != nil {
			pg.Records = pg.Records[:size]
		}
	}
}

// check refuses answers the engine cannot reason about, saying which
// setting most likely disagrees with the backend.
func (e *Engine) check(b Batch, w Window) error {
	if len(b.IDs) > w.Size {
		return &BackendError{Window: w, Setting: "backend_max_per_page",
			Reason: fmt.Sprintf("%d records for a page of %d", len(b.IDs), w.Size)}
	}
	if b.Records != nil && len(b.Records) != len(b.IDs) {
		return &BackendError{Window: w, Reason: "records and ids differ in number"}
	}
	for i, id := range b.IDs {
		if err := e.Order.Check(id); err != nil {
			// Only a numeric id that is not a whole number would pass under
			// the other id_order; an empty, overlong or (lexical) not UTF-8
			// id fails under both, and only id_field can change that.
			if e.Order == cursor.Numeric && id != "" && len(id) <= cursor.MaxIDLength {
				return &BackendError{Window: w, Setting: "id_order", Reason: fmt.Sprintf(
					"record %d: %v; set id_order lexical if the backend's ids are not whole numbers, or id_field if it names the wrong field", i, err)}
			}
			return &BackendError{Window: w, Setting: "id_field", Reason: fmt.Sprintf(
				"record %d: %v; ids must be non-empty UTF-8 text of at most %d bytes under either id_order; set id_field if it names the wrong field", i, err, cursor.MaxIDLength)}
		}
		if i > 0 && e.Order.Compare(b.IDs[i-1], id) >= 0 {
			return e.orderError(b.IDs, i, w)
		}
	}
	return nil
}

// orderError explains ids out of the configured order, at i: as strings
// where numbers were configured, descending, repeated, or in no id order.
func (e *Engine) orderError(ids []string, i int, w Window) error {
	a, b := ids[i-1], ids[i]
	pair := fmt.Sprintf("ids out of order: %.40q before %.40q", a, b)
	descending := true
	for k := 1; k < len(ids); k++ {
		descending = descending && e.Order.Compare(ids[k-1], ids[k]) > 0
	}
	switch {
	case e.Order == cursor.Numeric && a != b && e.Order.Compare(a, b) == 0:
		return &BackendError{Window: w, Setting: "id_order", Reason: pair +
			" are the same number written two ways; set id_order lexical if the backend's ids are text, or id_field if it names the wrong field"}
	case e.Order.Compare(a, b) == 0:
		return &BackendError{Window: w, Setting: "id_field", Reason: pair +
			" are the same id; id_field must name a field unique to each record"}
	case e.Order == cursor.Numeric && sortedAs(cursor.Lexical, ids):
		return &BackendError{Window: w, Setting: "id_order", Reason: pair +
			": the backend sorts ids as strings; set id_order lexical"}
	case e.Order == cursor.Lexical && allWholeNumbers(ids) && sortedAs(cursor.Numeric, ids):
		return &BackendError{Window: w, Setting: "id_order", Reason: pair +
			": the backend sorts ids as numbers; set id_order numeric"}
	case descending:
		return &BackendError{Window: w, Setting: "backend_sort", Reason: pair +
			": the backend sorts ids descending; set backend_sort to its parameters for ascending ids"}
	}
	return &BackendError{Window: w, Setting: "backend_sort", Reason: fmt.Sprintf(
		"%s (want ascending %s ids): the backend ignores backend_sort or sorts by another field; set backend_sort to its parameters for ascending ids", pair, e.Order)}
}

// sortedAs reports whether ids ascend strictly under o.
func sortedAs(o cursor.Order, ids []string) bool {
	for k := 1; k < len(ids); k++ {
		if o.Compare(ids[k-1], ids[k]) >= 0 {
			return false
		}
	}
	return true
}

// allWholeNumbers reports whether every id would pass Numeric's Check:
// only then does a numeric order mean something for them.
func allWholeNumbers(ids []string) bool {
	for _, id := range ids {
		if cursor.Numeric.Check(id) != nil {
			return false
		}
	}
	return true
}
