package translate

import "github.com/helpdesk-gateway/gateway/liststore"

// The one kind of answer the engine reads pages from. A backend call's
// answer, as a page reads it (answer, in page.go), and a read-ahead
// window (StoredWindow), which is such an answer kept for the pages
// after, are both a span: a run of the list's records as the backend held
// them, placed by an offset or above an id. A page is cut from the span
// that covers its cursor: whole, when the span holds the page and the
// record after it (or the list's end), or as a head, whose rest the
// engine reads from the backend, stitched on by keyset or by offset.

// span is a run of the list as one backend answer held it: see
// liststore.Span, whose fields are exported because the store keeps what
// the engine reads.
type span = liststore.Span

// cutPage cuts the page from the window's records from k on, which hold
// it. When the window runs out at the next page, the index learns where
// this page ends, so that the next page, read from the backend, finds its
// cursor in one call.
func (e *Engine) cutPage(req Request, w *StoredWindow, k int) *Page {
	rest := len(w.IDs) - k
	n := min(rest, req.Size)
	pg := &Page{IDs: w.IDs[k : k+n : k+n], More: rest > req.Size, Source: -1, Stored: w}
	if w.Records != nil {
		pg.Records = w.Records[k : k+n : k+n]
	}
	if at := w.Start + k + n; w.Start >= 0 && pg.More && rest-n <= req.Size && !w.Ended && n > 0 {
		e.Index.learn(req.List, []sample{{at - 1, w.IDs[at-w.Start-1]}, {at, w.IDs[at-w.Start]}}, at+1, -1)
	}
	return pg
}

// head is the records a stored window holds after a cursor, from its
// record k on, when they are fewer than the page and the record after
// it: the page starts with them, and the engine reads the rest from the
// backend, by keyset or by offset, in calls stitched on them. The zero
// head is none.
type head struct {
	w *StoredWindow
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
