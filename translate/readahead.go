package translate

import (
	"hash/maphash"
	"time"
)

// Read-ahead: a client following next_page_cursor asks for the records
// right after the ones it just got. When a list identity's walk continues
// (a cursor that is the last record of the page served before), the
// engine reads a larger window than the page, growing as an operating
// system's readahead does (doubling per window), up to the backend's page
// limit and no further than the walker reads within the window's lifetime
// at the pace it has shown, and the WindowStore serves the walk's next
// pages from it. When a window runs out, expires or is evicted, the next
// page is read from the backend as any page is, and the walk keeps its
// window size.

// walkState is the read-ahead state of one list identity.
type walkState struct {
	next uint64    // hash of the last id of the last page with more after it; 0: none
	at   time.Time // when that page was asked for
	size int       // the records the walk's last window read, page included
	rate float64   // records per second the walker reads, smoothed
}

// walkSeed hashes the ids walks compare: a walk keeps no id of its own,
// so it holds no memory of an answer, and a collision only sizes a read.
var walkSeed = maphash.MakeSeed()

// maxWindowSize bounds a walk's window size; the planner also holds it
// to the backend's page limit.
const maxWindowSize = 1 << 20

// continues reports whether req continues the list's walk, and takes in
// the walker's pace when it does; any other page starts a new walk, whose
// window size and pace start over.
func (ls *listState) continues(req Request, now time.Time, ttl time.Duration) bool {
	if ttl <= 0 {
		return false
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	w := &ls.walk
	if req.After == "" || w.next == 0 || maphash.String(walkSeed, req.After) != w.next {
		w.size, w.rate = 0, 0
		return false
	}
	if dt := now.Sub(w.at).Seconds(); dt > 0 {
		pace := float64(req.Size) / dt
		if w.rate == 0 {
			w.rate = pace
		} else {
			w.rate = (w.rate + pace) / 2
		}
	}
	return true
}

// readahead returns how many records past the page (and the record
// after it) the page's first call reads: 0 unless the walk continues and
// a window would hold at least one page more than the page itself.
func (ls *listState) readahead(req Request, cont bool, ttl time.Duration) int {
	if !cont {
		return 0
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	w := &ls.walk
	page := req.Size + 1
	size := min(max(2*w.size, 2*page), maxWindowSize)
	// No larger than the walker reads while the window serves.
	size = min(size, page+int(min(w.rate*ttl.Seconds(), maxWindowSize)))
	if size < page+req.Size {
		return 0
	}
	w.size = size
	return size - page
}

// walked records the page served for req: a page with more after it
// may be continued.
func (ls *listState) walked(pg *Page, now time.Time, ttl time.Duration) {
	if ttl <= 0 {
		return
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	w := &ls.walk
	w.next = 0
	if pg.More && len(pg.IDs) > 0 {
		w.next, w.at = maphash.String(walkSeed, pg.IDs[len(pg.IDs)-1]), now
	}
}

// cutFrom finishes a page cut from a window: when the window runs out at
// the next page, the index learns where this page ends, so that the next
// page, read from the backend, finds its cursor in one call.
func (e *Engine) cutFrom(req Request, pg *Page) {
	if pg.nextAt > 0 {
		e.Index.learn(req.List, []sample{{pg.nextAt - 1, pg.IDs[len(pg.IDs)-1]}, {pg.nextAt, pg.nextID}}, pg.nextAt+1, -1)
	}
}

// keep stores the answer a page was read ahead in as a window, once the
// fetcher has let go of its memory.
func (e *Engine) keep(f Fetcher, list string, w *StoredWindow, now time.Time) {
	if e.Windows.TTL() <= 0 {
		return
	}
	if k, ok := f.(Keeper); ok {
		var n int
		w.source, n = k.Keep(w.call)
		w.bytes = int64(n)
	} else {
		for i, id := range w.ids {
			w.bytes += int64(len(id))
			if w.records != nil {
				w.bytes += int64(len(w.records[i]))
			}
		}
	}
	e.Windows.keep(list, w, now)
}
