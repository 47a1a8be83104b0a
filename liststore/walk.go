package liststore

import "time"

// Read-ahead: a client following next_page_cursor asks for the records
// right after the ones it just got. When a cursor continues a walk (it is
// the last record of a page this instance served, within the TTL), the
// engine (translate) reads a larger window than the page (Readahead),
// four pages first, then growing as an operating system's readahead does
// (doubling per window), up to the backend's page limit and no further
// than the walker reads within the window's lifetime at the pace it has
// shown, and the store
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
// A walk resumed from a stored cursor is one walk with the pages before
// it, served from answers no older than the page that gave that cursor,
// when that is the cursor's first return within its lease; otherwise its
// page is read from the backend (stay.go).
//
// The rule needs the store to see every page a walk is served: (a) takes
// a chain entry for the latest page that ended at the cursor. Instances
// that each keep their own store behind a balancer that spreads one
// caller's pages over them do not: one continues a cursor from its own
// entry of an earlier walk, not knowing that another served the page that
// ended there since, and may cut the page from a window read before this
// walk began. So an instance that keeps its walks to itself proves, per
// caller's list, that its walks stay before their windows serve, and
// stands that list down at its walks' sign that they do not (stay.go);
// instances behind a spreading balancer
// share one store instead (redisstore, whose times are all read off the
// store's clock) to keep read-ahead (docs/operating.md, "Behind a
// balancer").

// Reading ahead of the walker. A window's last whole page is followed
// by a page that starts with the window's last records (a head) and
// whose rest is read from the backend: the walker would wait for that
// call, and for its answer to be kept, at every window's end. So, as an
// operating system's async readahead does at its marker page, the page
// cut from a window half of it before its last one (Marker) tells
// the engine to read the walk's next window now, in the background,
// after the window's last record (CutResult.Ahead), and the engine
// records that answer as a page ending at that record would be (Walked
// with Last that record): a chain entry whose time is the read's start,
// under the keep-later rule, and the window, whose first page is the
// rest of the walk's page at the window's end (Walked.First). That page
// is then the head and the rest cut from the window read ahead, with no
// backend call, when the walk rule admits both: the head's window by the
// cursor's entry, and the window read ahead by the entry at the head's
// last record and by being read no earlier than the head's window. So
// no record of the page comes from an answer older than the one its
// previous page came from, as before; a walker that gets to the head
// before the read ahead is done waits for it on the instance that reads
// it, or reads the rest from the backend as it did.

// Marker reports whether a page cut whole from a window is the window's
// marker, the page whose cut starts the read of the walk's next window:
// half the window before its end, as an operating system's readahead
// reads the next window while the walker is in this one, so that the
// read is done before the walker gets to it whatever the backend's and
// the store's pace (four pages before the end left the walker waiting
// for it: loadbench at one client, 0.7 ms more p99 at 10 a page). pages
// is how many whole pages (each with the record after it) the window
// holds past the page that read it, left how many of them follow the
// page cut. Walk.Ahead keeps a walker slow enough that the next window
// would age before it is read from being read ahead at all.
func Marker(pages, left int) bool { return left == pages/2 }

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
	// Run is how many pages in a row the walk continued here with cursors
	// handed out for it, back within their lease (stay.go): a walk that
	// ran ProofHits pages proves that its list's walks stay.
	Run int
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

// Ahead is Readahead for a read ahead of the walker (see Marker), whose
// window holds at most limit records (the backend's page limit): 0 also
// when the walker reads so slowly that the window would not be read in
// half its lifetime. A window read pages before the walker needs it
// loses that time of its TTL, which a slow walker would spend reading it:
// such a walk's window is read when it gets there, as it was.
func (w *Walk) Ahead(size, limit int, ttl time.Duration) int {
	n := w.Readahead(size, true, ttl)
	if n == 0 || w.Rate*ttl.Seconds() < 2*float64(min(n+size+1, limit)) {
		return 0
	}
	return n
}
