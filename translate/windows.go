package translate

import (
	"container/list"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// WindowStore keeps read-ahead windows: backend answers that hold more of
// a list than the page that read them, so that the same caller's next
// pages are cut from them without a backend call.
//
// A window is content, not a hint, so the store is strict where the Index
// is lenient:
//   - it is keyed by the list identity in full, never by a hash: two
//     callers' windows can never be mistaken for each other;
//   - it serves only for ttl after the call that read it began;
//   - it lives in memory only, bounded in bytes (the least recently used
//     windows go first), and an evicted or expired window only costs the
//     next page a backend call.
//
// The consistency guarantee holds for a page cut from a window as for a
// page read from the backend: a window is one backend answer, a run of
// the list at one moment that holds a record at or below every cursor it
// serves (or starts the list, or is anchored at a keyset cursor), so the
// page is the next records after the cursor as the backend held them then.
type WindowStore struct {
	order  Order
	ttl    time.Duration
	memory int64

	mu    sync.Mutex
	lists map[string][]*StoredWindow // by list identity, newest first
	lru   list.List                  // of *StoredWindow, most recently used first
	bytes int64

	served, evicted, expired atomic.Int64

	// OnDrop, when set, is called for each window dropped, expired or
	// evicted, with the store's lock held: it must not call the store.
	OnDrop func(expired bool)
}

// StoredWindow is one backend answer kept as a read-ahead window.
type StoredWindow struct {
	ids     []string
	records [][]byte
	// The run holds every record of the list above floor (or from the
	// list's start) up to its last id, as the backend held them.
	floor     string
	fromStart bool
	ended     bool // the list ended after the run
	start     int  // the offset of ids[0]; -1 for a keyset answer
	call      int  // the call that read it, for Keeper.Keep

	list    string
	arrived time.Time
	bytes   int64
	source  any
	elem    *list.Element // in WindowStore.lru
}

// Source is what the fetcher's Keeper returned for the window's answer.
func (w *StoredWindow) Source() any { return w.source }

// maxWindowsPerList bounds the windows of one list identity: a caller
// may walk one list from several places at once.
const maxWindowsPerList = 4

// NewWindowStore returns a store whose windows serve for ttl and hold at
// most memory bytes. A ttl or memory of 0 or less stores nothing.
func NewWindowStore(order Order, ttl time.Duration, memory int64) *WindowStore {
	return &WindowStore{order: order, ttl: ttl, memory: memory, lists: make(map[string][]*StoredWindow)}
}

// TTL is how long a window serves after its answer was asked for.
func (s *WindowStore) TTL() time.Duration {
	if s == nil {
		return 0
	}
	return s.ttl
}

// WindowStats is what the admin endpoint and the metrics show of a store.
type WindowStats struct {
	Windows int
	Bytes   int64
	// Served counts the pages cut from windows: each is a backend call
	// saved. Evicted and Expired count windows dropped for memory and
	// for age.
	Served, Evicted, Expired int64
}

// Stats returns the store's state and counters.
func (s *WindowStore) Stats() WindowStats {
	if s == nil {
		return WindowStats{}
	}
	s.mu.Lock()
	n, b := s.lru.Len(), s.bytes
	s.mu.Unlock()
	return WindowStats{Windows: n, Bytes: b, Served: s.served.Load(), Evicted: s.evicted.Load(), Expired: s.expired.Load()}
}

// cut returns the page of size records after the cursor from a window of
// list that holds it. A window holds the page when the cursor is at or
// above its floor and the page's records and one more (or the list's end)
// follow the cursor in it. Failing that, a window that holds some of the
// records after the cursor gives them as the page's head (head true): the
// engine reads the rest from the backend, stitched on the head's last
// record, so that a walk whose pages a window cannot hold (a page as large
// as the backend's limit) still reads each record once. nil when no
// window holds a record after the cursor.
func (s *WindowStore) cut(list, after string, size int, now time.Time) (pg *Page, head bool) {
	if s == nil {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var (
		part  *StoredWindow // the window with the longest head, if no window holds the page
		partK int
	)
	ws := s.lists[list]
	for i := 0; i < len(ws); i++ {
		w := ws[i]
		if now.Sub(w.arrived) >= s.ttl {
			s.dropFor(w, true)
			ws = s.lists[list]
			i--
			continue
		}
		if !w.fromStart && s.order.Compare(after, w.floor) < 0 {
			continue
		}
		k := sort.Search(len(w.ids), func(i int) bool { return s.order.Compare(w.ids[i], after) > 0 })
		rest := len(w.ids) - k
		if rest <= size && !w.ended {
			if rest > 0 && (part == nil || rest > len(part.ids)-partK) {
				part, partK = w, k
			}
			continue
		}
		n := min(rest, size)
		pg := &Page{IDs: w.ids[k : k+n : k+n], More: rest > size, Source: -1, Stored: w}
		if w.records != nil {
			pg.Records = w.records[k : k+n : k+n]
		}
		if w.start >= 0 && pg.More && rest-n <= size && !w.ended && n > 0 {
			// The window runs out at the next page: the engine teaches
			// the index where this page ends, so that page costs one call.
			pg.nextAt, pg.nextID = w.start+k+n, w.ids[k+n]
		}
		s.lru.MoveToFront(w.elem)
		s.served.Add(1)
		return pg, false
	}
	if part == nil {
		return nil, false
	}
	s.lru.MoveToFront(part.elem)
	n := len(part.ids)
	pg = &Page{IDs: part.ids[partK:n:n], Source: -1, head: part}
	if part.records != nil {
		pg.Records = part.records[partK:n:n]
	}
	return pg, true
}

// keep stores w for list, unless the store holds nothing or w is larger
// than all of its memory, and drops what the bound and the ttl ask.
func (s *WindowStore) keep(list string, w *StoredWindow, now time.Time) {
	if s == nil || s.ttl <= 0 || w.bytes > s.memory {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	w.list, w.arrived = list, now
	ws := s.lists[list]
	if len(ws) == maxWindowsPerList {
		s.dropFor(ws[len(ws)-1], false)
		ws = s.lists[list]
	}
	s.lists[list] = append([]*StoredWindow{w}, ws...)
	w.elem = s.lru.PushFront(w)
	s.bytes += w.bytes
	for s.bytes > s.memory || s.lru.Len() > 0 && now.Sub(s.lru.Back().Value.(*StoredWindow).arrived) >= s.ttl {
		old := s.lru.Back().Value.(*StoredWindow)
		s.dropFor(old, now.Sub(old.arrived) >= s.ttl)
	}
}

// dropFor drops w, expired or evicted, and counts it. The caller holds
// s.mu.
func (s *WindowStore) dropFor(w *StoredWindow, expired bool) {
	s.drop(w)
	if expired {
		s.expired.Add(1)
	} else {
		s.evicted.Add(1)
	}
	if s.OnDrop != nil {
		s.OnDrop(expired)
	}
}

// drop removes w from the store. The caller holds s.mu.
func (s *WindowStore) drop(w *StoredWindow) {
	s.lru.Remove(w.elem)
	s.bytes -= w.bytes
	ws := s.lists[w.list]
	for i, x := range ws {
		if x == w {
			ws = append(ws[:i:i], ws[i+1:]...)
			break
		}
	}
	if len(ws) == 0 {
		delete(s.lists, w.list)
	} else {
		s.lists[w.list] = ws
	}
}

// Clear drops every window, as when the config that made the store is
// unloaded: their memory goes with the last page cut from them.
func (s *WindowStore) Clear() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.lists)
	s.lru.Init()
	s.bytes = 0
}

// Purge drops every window whose ttl has passed: memory the store holds
// for nothing. The store also drops them as it is used; Purge is for an
// idle instance's timer.
func (s *WindowStore) Purge(now time.Time) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for e := s.lru.Back(); e != nil; {
		prev := e.Prev()
		if w := e.Value.(*StoredWindow); now.Sub(w.arrived) >= s.ttl {
			s.dropFor(w, true)
		}
		e = prev
	}
}
