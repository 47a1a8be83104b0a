package translate

import (
	"hash/maphash"
	"time"
)

// Read-ahead: a client following next_page_cursor asks for the records
// right after the ones it just got. When a list identity's walk continues
// (a cursor that is the last record of the page served before), the
// engine reads a larger window than the page, four pages first, then
// growing as an operating system's readahead does (doubling per window),
// up to the backend's page
// limit and no further than the walker reads within the window's lifetime
// at the pace it has shown, and the WindowStore serves the walk's next
// pages from it. When a window runs out, expires or is evicted, the next
// page is read from the backend as any page is, and the walk keeps its
// window size.

// walkState is the read-ahead state of one walk of a list identity.
type walkState struct {
	next uint64    // hash of the last id of the last page with more after it; 0: none
	at   time.Time // when that page was asked for
	size int       // the records the walk's last window read, page included
	rate float64   // records per second the walker reads, smoothed
}

// maxWalks is how many walks of one list identity are followed at once:
// a caller (a sync job with several workers, say) may walk one list from
// several places, and each walk reads ahead on its own.
const maxWalks = maxWindowsPerList

// walkSeed hashes the ids walks compare: a walk keeps no id of its own,
// so it holds no memory of an answer, and a collision only sizes a read.
var walkSeed = maphash.MakeSeed()

// maxWindowSize bounds a walk's window size; the planner also holds it
// to the backend's page limit.
const maxWindowSize = 1 << 20

// continues returns the walk of the list that req continues, taking in
// the walker's pace, or -1: any other page starts a new walk (walked
// gives it a place).
func (ls *listState) continues(req Request, now time.Time, ttl time.Duration) int {
	if ttl <= 0 || req.After == "" {
		return -1
	}
	h := maphash.String(walkSeed, req.After)
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for i := range ls.walks {
		w := &ls.walks[i]
		if w.next != h || h == 0 {
			continue
		}
		if dt := now.Sub(w.at).Seconds(); dt > 0 {
			pace := float64(req.Size) / dt
			if w.rate == 0 {
				w.rate = pace
			} else {
				w.rate = (w.rate + pace) / 2
			}
		}
		return i
	}
	return -1
}

// readahead returns how many records past the page (and the record
// after it) the page's first call reads: 0 unless the page continues a
// walk and a window would hold at least one page more than the page.
func (ls *listState) readahead(req Request, walk int, ttl time.Duration) int {
	if walk < 0 {
		return 0
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	w := &ls.walks[walk]
	page := req.Size + 1
	size := min(max(2*w.size, 4*page), maxWindowSize)
	// No larger than the walker reads while the window serves.
	size = min(size, page+int(min(w.rate*ttl.Seconds(), maxWindowSize)))
	if size < page+req.Size {
		return 0
	}
	w.size = size
	return size - page
}

// walked records the page served for req in its walk, or, for a page
// that continues none, in a new walk in place of the one least recently
// continued: a page with more after it may be continued.
func (ls *listState) walked(pg *Page, walk int, now time.Time, ttl time.Duration) {
	if ttl <= 0 {
		return
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if walk < 0 {
		if !pg.More {
			return
		}
		walk = 0
		for i := range ls.walks {
			if ls.walks[i].at.Before(ls.walks[walk].at) {
				walk = i
			}
		}
		ls.walks[walk] = walkState{}
	}
	w := &ls.walks[walk]
	w.next, w.at = 0, now
	if pg.More && len(pg.IDs) > 0 {
		w.next = maphash.String(walkSeed, pg.IDs[len(pg.IDs)-1])
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
