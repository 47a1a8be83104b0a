package translate

import "time"

// The one kind of answer the engine reads pages from. A backend call's
// answer, as a page reads it (answer, in page.go), and a read-ahead
// window (StoredWindow), which is such an answer kept for the pages
// after, are both a span: a run of the list's records as the backend held
// them, placed by an offset or above an id. A page is cut from the span
// that covers its cursor: whole, when the span holds the page and the
// record after it (or the list's end), or as a head, whose rest the
// engine reads from the backend, stitched on by keyset or by offset.

// span is a run of the list as one backend answer held it.
type span struct {
	ids     []string
	records [][]byte // parallel to ids; nil when the fetcher gave none
	// start is the offset of ids[0], or -1 for an answer read by keyset.
	start int
	// A kept span holds every record of the list above floor (or from
	// the list's start) up to its last id: the cursors it can serve.
	floor     string
	fromStart bool
	ended     bool      // the list ended after the span
	call      int       // the page's call that read it (Keeper, Releaser)
	at        time.Time // when the page that read it began; set when kept
}

// StoredWindow is one backend answer kept as a read-ahead window: a span,
// with what the store keeps of it.
type StoredWindow struct {
	span

	list   *storedList
	bytes  int64
	source any
	ref    any
	// unread is how many of its records followed the page that read it,
	// and read how many of those pages took since; tip is the chain
	// entry of the last page served from it, which a drop of the window
	// mostly unread backs off (see Walk).
	unread, read int
	tip          string
}

// Source is what the fetcher's Keeper returned for the window's answer,
// or what a shared store made of it again (NewStoredWindow).
func (w *StoredWindow) Source() any { return w.source }

// WindowData is a window as plain data, for a WalkStore that keeps it
// outside the instance (redisstore): whatever keeps a window this way
// keeps all of these, or it cannot serve the walk rule or the guarantee.
type WindowData struct {
	IDs     []string
	Records [][]byte // parallel to IDs; nil when the fetcher gave none
	// Start is the offset of IDs[0] in the list when it was read.
	Start int
	// Floor is the cursor at or above which the window can serve (its
	// first id), unless FromStart: it starts the list.
	Floor     string
	FromStart bool
	Ended     bool      // the list ended after the window
	At        time.Time // the time the walk rule gives it (Walked.At)
}

// Data returns the window as plain data. Its slices are the window's:
// they are only read.
func (w *StoredWindow) Data() WindowData {
	return WindowData{IDs: w.ids, Records: w.records, Start: w.start, Floor: w.floor,
		FromStart: w.fromStart, Ended: w.ended, At: w.at}
}

// NewStoredWindow makes a window a WalkStore read back as plain data, or
// the part of one it holds after a cursor: source is what the fetcher
// composes pages from (see Source), ref the store's own reference to the
// window (see Ref), which it finds again on Walked.From.
func NewStoredWindow(d WindowData, source, ref any) *StoredWindow {
	return &StoredWindow{span: span{ids: d.IDs, records: d.Records, start: d.Start, floor: d.Floor,
		fromStart: d.FromStart, ended: d.Ended, at: d.At}, source: source, ref: ref}
}

// Ref is what the WalkStore that made the window (NewStoredWindow) keeps
// to find it again; nil for a window of the instance's own.
func (w *StoredWindow) Ref() any { return w.ref }

// Bytes is what the window's answer holds alive, as the fetcher's Keeper
// counted it.
func (w *StoredWindow) Bytes() int64 { return w.bytes }

// holds reports whether the span's records from k on hold a page of
// size records and the one after it, or run to the list's end: the page
// is then cut whole from it. Fewer are a head (see MemoryStore.cut).
func (s *span) holds(k, size int) bool { return len(s.ids)-k > size || s.ended }

// cutPage cuts the page from the window's records from k on, which hold
// it. When the window runs out at the next page, the index learns where
// this page ends, so that the next page, read from the backend, finds its
// cursor in one call.
func (e *Engine) cutPage(req Request, w *StoredWindow, k int) *Page {
	rest := len(w.ids) - k
	n := min(rest, req.Size)
	pg := &Page{IDs: w.ids[k : k+n : k+n], More: rest > req.Size, Source: -1, Stored: w}
	if w.records != nil {
		pg.Records = w.records[k : k+n : k+n]
	}
	if at := w.start + k + n; w.start >= 0 && pg.More && rest-n <= req.Size && !w.ended && n > 0 {
		e.Index.learn(req.List, []sample{{at - 1, w.ids[at-w.start-1]}, {at, w.ids[at-w.start]}}, at+1, -1)
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
	return h.w.ids[h.k:]
}

// start starts pg with the head's records.
func (h head) start(pg *Page) {
	pg.add(h.w.ids, h.w.records, h.k, len(h.w.ids))
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
