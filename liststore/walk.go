package liststore

import "time"

// Read-ahead: a client following next_page_cursor asks for the records
// right after the ones it just got. When a cursor continues a walk (it is
// the last record of a page this instance served, within the TTL), the
// engine (translate) reads a larger window than the page (Readahead),
// four pages first, then growing as an operating system's readahead does
// (doubling per window), up to the backend's page limit and no further than the walker reads
// within the window's lifetime at the pace it has shown, and the store
// serves the walk's next pages from it. When a window runs out, the next
// page is read from the backend as any page is, and the walk keeps its
// window size; when a window is dropped mostly unread (evicted, or
// expired), the walk's next window is half as large (Walk.Backoff).
//
// Any number of walks of one list identity are followed at once: each is
// a chain of entries in the store, one per page, bounded by the store's
// memory, not by a count.
//
// The walk rule. A cursor carries only an id, so the instance keeps the
// walks it served as chains: for each page served with more after it, an
// entry under the page's last id that holds the time of the answer that
// record came from: for a page cut whole from a window,
// the time the window's call began; for a page read from the backend (in
// part or whole), the page's start, which is no later than any of its
// calls. Where several pages ended at the same id, the entry keeps the
// latest such time, so the rule holds for every walk that holds that
// cursor. A cursor page is cut from a stored window, whole or as a head,
// only when
//
//	(a) its cursor is the end of a page this instance served: a live
//	    chain entry, which lives for the TTL from that page; and
//	(b) the window's call began no earlier than that entry's time.
//
// Any other page (a first page, an offset page, a Fresh one, a hand-built
// cursor, a cursor whose entry expired or was evicted, or one no admitted
// window holds) is read from the backend, and that answer may become the
// walk's window. So along a walk no page comes from an answer read before
// the answer its previous page came from, and by induction none from an
// answer read before the walk's first page began: every record that
// existed for the whole walk is in the answer that served its part of the
// list, whoever read the windows and whatever the same caller did before.
// A walk resumed from a stored cursor within the TTL is one walk with the
// pages before it: it is served from answers no older than the page that
// gave that cursor.

// Walk is the read-ahead state of one walk, carried from each chain
// entry to the next.
type Walk struct {
	Size int     // the records the walk's last window read, page included
	Rate float64 // records per second the walker reads, smoothed
	// Backoff says a window of the walk was dropped mostly unread (evicted
	// or expired): its next window is no larger than Size, which the drop
	// halved, as an operating system's readahead backs off when its pages
	// are dropped before they are read.
	Backoff bool
}

// maxWindowSize bounds a walk's window size; the engine's planner also
// holds it to the backend's page limit.
const maxWindowSize = 1 << 20

// Pace takes a page of size records, asked at now, into the walk's pace:
// made is when the page before it was served.
func (w *Walk) Pace(size int, made, now time.Time) {
	dt := now.Sub(made).Seconds()
	if dt <= 0 {
		return
	}
	pace := float64(size) / dt
	if w.Rate == 0 {
		w.Rate = pace
	} else {
		w.Rate = (w.Rate + pace) / 2
	}
}

// Readahead returns how many records past a page of size records (and
// the record after it) the page's first call reads, and sizes the walk's
// window: 0 unless the page continues a walk and a window would hold at
// least one page more than the page.
func (w *Walk) Readahead(size int, continues bool, ttl time.Duration) int {
	if !continues || ttl <= 0 {
		return 0
	}
	page := size + 1
	n := min(max(2*w.Size, 4*page), maxWindowSize)
	if w.Backoff {
		n, w.Backoff = w.Size, false // then grow again, as after a fresh start
	}
	// No larger than the walker reads while the window serves.
	n = min(n, page+int(min(w.Rate*ttl.Seconds(), maxWindowSize)))
	if n < page+size {
		return 0
	}
	w.Size = n
	return n - page
}
