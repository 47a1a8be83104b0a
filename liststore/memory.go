package liststore

import (
	"container/list"
	"context"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Memory is the store of one instance: every list identity's object in
// memory, least recently used first out, under one bound in bytes that
// counts all of it: the identity, the engine's own object of the list (S,
// with what it holds, as Own and Counted are told), each chain entry and
// each window with what its fetcher keeps.
//
// A window is content, not a hint, so the store is strict with it: it is
// keyed by the list identity in full, never by a hash, so two callers'
// windows (or samples) can never be mistaken for each other; it serves
// only for the TTL after the call that read it began, and only a walk the
// walk rule admits; and an evicted or expired window only costs the next
// page a backend call.
//
// The consistency guarantee holds for a page cut from a window as for a
// page read from the backend: a window is one backend answer, a run of
// the list at one moment that holds a record at or below every cursor it
// serves (or starts the list, or is anchored at a keyset cursor), so the
// page is the next records after the cursor as the backend held them then.
type Memory[S any] struct {
	compare   func(a, b string) int
	owner     Owner[S]
	ttl       time.Duration
	memory    int64
	listBytes int64 // what a list's object costs, its identity apart

	mu      sync.Mutex
	lists   map[string]*entry[S]
	lru     list.List // of *entry[S], most recently used first
	bytes   int64
	windows int
	chains  int
	// gone is the latest answer time of a chain entry forgotten with its
	// list for memory: a list made after that starts with it as its floor.
	gone time.Time

	served, evicted, expired atomic.Int64

	// OnDrop, when set, is called for each window dropped, expired or
	// evicted, with the store's lock held: it must not call the store.
	OnDrop func(expired bool)

	// stays counts what the lists' proofs that walks stay on this
	// instance saw (stay.go); seen is the latest page time a Cut was
	// given, the clock Stay reads quiet times by.
	stays stays
	seen  time.Time
}

// Owner is what the store asks of the engine's object of each list (S)
// as it drops or thins it. Both methods are called with the store's lock
// held: they may take the engine's own lock (translate's Index's), which
// the engine never holds while it waits for the store's. The store's lock
// may be taken before the engine's, never the reverse.
type Owner[S any] interface {
	// Forget lets go of what own holds outside the store, as the store
	// drops its list.
	Forget(own *S)
	// Thin halves what own holds for the list in use, when the store has
	// nothing else of it to drop; false when it cannot. bytes is what that
	// changed own's cost by (below zero: less).
	Thin(own *S) (thinned bool, bytes int64)
}

// List is one list identity's object, as a handle the engine keeps in its
// own object (Own) to tell the store what it costs (Counted). Its fields
// are guarded by the store's mutex.
type List struct {
	key   string
	elem  *list.Element // in Memory.lru
	bytes int64         // counted in the store's: the list's own and its entries'

	windows []*StoredWindow  // newest first
	chains  map[string]chain // by the last id of a page served
	queue   []queued         // chain entries as made, oldest first, to expire
	// peak is the most entries chains held since it was made: a map does
	// not shrink, so one that held four times its entries is made anew.
	peak int
	// floor is the latest answer time of a chain entry forgotten for
	// memory (here, or with an earlier object of the list): a window of a
	// page that began before it is not kept, since another walk's entry
	// for the same id, made again from it, would serve the forgotten walk
	// the past. Expiry needs none: older windows expire first.
	floor time.Time
	// proof is whether the list's walks were seen to stay here, and began
	// the latest page asked of it here that began a walk here (no cursor,
	// or one with no live entry), across which no run of hits counts
	// (stay.go).
	proof proof
	began time.Time
}

// Key is the list identity l is the object of, in full.
func (l *List) Key() string { return l.key }

// Bytes is what the store counts of the list: its own and its entries',
// the engine's object among them. Read it where the store's lock is held
// (Own's attach).
func (l *List) Bytes() int64 { return l.bytes }

// entry is a list's object with the engine's own.
type entry[S any] struct {
	List
	own S
}

// chain is a walk chain entry: see Walked. credit is how many more
// times clients were handed its cursor here than they brought it back:
// a cursor that comes back with none left is reused (stay.go).
type chain struct {
	at, made time.Time
	walk     Walk
	credit   int32
}

// queued is a chain entry in the order entries were made. An entry made
// again under the same id is queued again; the older one, when it comes
// up, no longer matches the map's and only frees its bytes.
type queued struct {
	id   string
	made time.Time
}

// Sizes the bound counts, beyond the bytes strings and answers hold: a
// list's object (entry) with its LRU element and map slot, and a chain
// entry in its map (a slot, with room for the map's load) and in the
// queue. translate's TestListStateBytes measures them.
const (
	chainBytes  = int64(2*(unsafe.Sizeof("")+unsafe.Sizeof(chain{})+1) + 2*unsafe.Sizeof(queued{}))
	mapSlot     = unsafe.Sizeof("") + unsafe.Sizeof((*List)(nil)) + 1 // key, value, control byte
	windowBytes = int64(unsafe.Sizeof(StoredWindow{}) + unsafe.Sizeof((*StoredWindow)(nil)))
)

// Interface guard
var _ WalkStore = (*Memory[struct{}])(nil)

// Init readies s, a zero Memory, and returns it: a store that orders ids
// by compare, whose windows and chain entries live for ttl and whose
// lists hold at most memory bytes in all. A ttl of 0 or less keeps no
// window and no chain: read-ahead is off, and the store holds the lists'
// own objects only. owner, when not nil, is told of each object the store
// drops or thins. A Memory is held inside the value that wraps it (the
// engine's MemoryStore), made in one allocation, so Init is its one
// constructor.
func (s *Memory[S]) Init(compare func(a, b string) int, ttl time.Duration, memory int64, owner Owner[S]) *Memory[S] {
	s.compare, s.owner, s.ttl, s.memory = compare, owner, max(ttl, 0), memory
	s.stays.quiet = max(MinQuiet, 2*s.ttl)
	s.listBytes = int64(unsafe.Sizeof(entry[S]{}) + unsafe.Sizeof(list.Element{}) + 3*mapSlot + 32)
	s.lists = make(map[string]*entry[S])
	return s
}

// TTL is how long a window serves after its answer was asked for.
func (s *Memory[S]) TTL() time.Duration {
	if s == nil {
		return 0
	}
	return s.ttl
}

// WindowStats is what the admin endpoint and the metrics show of a store.
type WindowStats struct {
	Lists, Windows, Chains int
	// Bytes is all the store holds, lists and chains included.
	Bytes int64
	// Served counts the pages cut from windows: each is a backend call
	// saved. Evicted and Expired count windows dropped for memory and
	// for age.
	Served, Evicted, Expired int64
}

// Stats returns the store's state and counters.
func (s *Memory[S]) Stats() WindowStats {
	if s == nil {
		return WindowStats{}
	}
	s.mu.Lock()
	st := WindowStats{Lists: len(s.lists), Windows: s.windows, Chains: s.chains, Bytes: s.bytes}
	s.mu.Unlock()
	st.Served, st.Evicted, st.Expired = s.served.Load(), s.evicted.Load(), s.expired.Load()
	return st
}

// Own returns the engine's object of the list, made when new if create
// is set (nil when the store holds no such list and create is unset), and
// marks the list used. attach, when set, is called under the store's lock
// with the list's handle and object, and returns what it added to the
// object's cost: the store counts that and keeps its bound, as it does
// always when attach is nil.
func (s *Memory[S]) Own(name string, create bool, attach func(l *List, own *S) (added int64)) *S {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.lists[name]
	switch {
	case l != nil:
		s.lru.MoveToFront(l.elem)
	case !create:
		return nil
	default:
		l = s.get(name)
	}
	if attach == nil {
		s.bound(l)
	} else if n := attach(&l.List, &l.own); n != 0 {
		l.bytes += n
		s.bytes += n
		s.bound(l)
	}
	return &l.own
}

// get returns the list's object, made when new, as the most recently
// used. The caller holds s.mu and calls bound.
func (s *Memory[S]) get(name string) *entry[S] {
	if l, ok := s.lists[name]; ok {
		s.lru.MoveToFront(l.elem)
		return l
	}
	l := &entry[S]{List: List{key: name, bytes: s.listBytes + int64(len(name)), floor: s.gone}}
	if s.stays.trustNew {
		l.proof.trusted = true
	}
	l.elem = s.lru.PushFront(l)
	s.lists[name] = l
	s.bytes += l.bytes
	return l
}

// Cut implements WalkStore: the walk rule's check (walk.go), and the
// proof that the list's walks stay here (stay.go).
func (s *Memory[S]) Cut(_ context.Context, name string, q CutQuery) (c CutResult) {
	c.At = q.Now // the instance's clock is the store's
	if s.ttl <= 0 {
		return c
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if q.Now.After(s.seen) {
		s.seen = q.Now
	}
	l := s.lists[name]
	if l == nil {
		return c
	}
	if q.After == "" {
		l.began = q.Now // a walk of the list begins here: runs start again (stay.go)
		return c
	}
	s.lru.MoveToFront(l.elem)
	s.expire(&l.List, q.Now)
	e, live := l.chains[q.After]
	live = live && q.Now.Sub(e.made) < s.ttl
	if q.Probe {
		// The engine's own cursor, under a page the walk rule admitted.
		if !live || !l.proof.trusted {
			return c
		}
	} else {
		if kind := s.signOf(&l.List, q.After, q.Size, e, live); kind != NoSign {
			s.stays.sign(&l.proof, kind, q.Now)
		}
		if !live {
			l.began = q.Now // a walk begins here, at a cursor handed out elsewhere or built by hand
			return c
		}
		s.stays.hits.Add(1)
		c.Continues, c.Walk, c.Made = true, e.walk, e.made
		reused, late := e.credit <= 0, q.Now.Sub(e.made) >= e.walk.Lease(q.Size, s.ttl)
		if !reused {
			e.credit--
			l.chains[q.After] = e
		}
		switch {
		case reused:
			s.stays.reused.Add(1)
			c.Walk.Run = 0
		case late:
			s.stays.late.Add(1)
			c.Walk.Run = 0
		case e.made.Before(l.began):
			c.Walk.Run = 1 // a walk of the list began here since: runs start again
		default:
			c.Walk.Run++ // handed out for this walk, back in time
			s.stays.hit(&l.proof, c.Walk.Run, q.Now)
		}
		if !l.proof.trusted {
			// Not proven: no window serves. The walk reads ahead all the
			// same, growing its windows only along a run, so that a sign
			// can show, and a proven list's walks have their windows.
			if c.Walk.Run <= 1 {
				c.Walk.Size, c.Walk.Backoff = 0, false
			}
			return c
		}
		if reused || late {
			return c // cold: one call, whose answer is the walk's next window
		}
	}
	c.Continues, c.Walk, c.Made = true, e.walk, e.made
	if q.Fresh {
		return c
	}
	c.Window, c.From = s.cut(&l.List, q.After, q.Size, e.at)
	if w := c.Window; c.Holds(q.Size) && !w.Ended {
		left := (len(w.IDs) - c.From - q.Size - 1) / q.Size // whole pages after this one
		if Marker((w.unread-1)/q.Size, left) {
			n := len(w.IDs)
			c.Ahead, c.AheadAt, c.AheadHead = w.IDs[n-1], -1, n-c.From-q.Size*(left+1)
			if w.Start >= 0 {
				c.AheadAt = w.Start + n - 1
			}
		}
	}
	return c
}

// index returns the index of the first of w's ids at or above id.
func (s *Memory[S]) index(w *StoredWindow, id string) int {
	return sort.Search(len(w.IDs), func(i int) bool { return s.compare(w.IDs[i], id) >= 0 })
}

// signOf reports whether a client's cursor after, whose chain entry here
// is e when live, is a sign that the list's walks go on elsewhere: it
// lands inside one of the list's windows past the furthest page served
// from it, and no page this instance served since the window was read
// ended there (stay.go). The caller holds s.mu.
func (s *Memory[S]) signOf(l *List, after string, size int, e chain, live bool) SignKind {
	for _, w := range l.windows {
		n := len(w.IDs)
		if n == 0 || w.reach >= n-1 || s.compare(after, w.IDs[n-1]) > 0 {
			continue // nothing past its reach, or the cursor past it
		}
		if w.reach >= 0 && s.compare(after, w.IDs[w.reach]) <= 0 || w.reach < 0 && s.compare(after, w.IDs[0]) < 0 {
			continue // at or before its reach
		}
		if s.index(w, after)-w.reach > signPages*size {
			continue // further on than a walk goes in a few pages: another walk (a parallel export's worker)
		}
		if live && !e.made.Before(w.At.Add(-e.walk.inFlight(size))) {
			continue // a page served here ended there since the window was read, or just before it
		}
		if live {
			return ContinuedElsewhere
		}
		return NotIssuedHere
	}
	return NoSign
}

// cut returns the window of l read no earlier than at that holds the
// page of size records after the cursor, and the index of its first
// record after the cursor. A window holds the page when the cursor is at
// or above its floor and the page's records and one more (or the list's
// end) follow the cursor in it (Span.Holds). Failing that, the window
// that holds the most of the records after the cursor gives them as the
// page's head: the engine reads the rest from the backend, stitched on
// the head's last record, so that a walk whose pages a window cannot
// hold (a page as large as the backend's limit) still reads each record
// once. nil when no admitted window holds a record after the cursor. The
// caller holds s.mu.
func (s *Memory[S]) cut(l *List, after string, size int, at time.Time) (*StoredWindow, int) {
	var (
		part  *StoredWindow // the window with the longest head, if no window holds the page
		partK int
	)
	for _, w := range l.windows {
		if w.At.Before(at) {
			break // newest first: every window from here was read before the walk's last page
		}
		if !w.FromStart && s.compare(after, w.Floor) < 0 {
			continue
		}
		k := sort.Search(len(w.IDs), func(i int) bool { return s.compare(w.IDs[i], after) > 0 })
		rest := len(w.IDs) - k
		if !w.Holds(k, size) {
			if rest > 0 && (part == nil || rest > len(part.IDs)-partK) {
				part, partK = w, k
			}
			continue
		}
		w.read += min(rest, size)
		s.served.Add(1)
		return w, k
	}
	if part != nil {
		part.read += len(part.IDs) - partK
		part.reach = len(part.IDs) - 1 // the page takes every record after the cursor
	}
	return part, partK
}

// Walked implements WalkStore.
func (s *Memory[S]) Walked(_ context.Context, name string, p Walked) {
	if s.ttl <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.get(name)
	var id string
	if p.More && p.Last != "" {
		id = strings.Clone(p.Last) // the page's ids live in a fetcher's buffer
		e := chain{at: p.At, made: p.Now, walk: p.Walk}
		old, ok := l.chains[id]
		if ok && p.Now.Sub(old.made) < s.ttl {
			e.credit = old.credit
		}
		if !p.Ahead {
			e.credit++ // a client holds this cursor now (stay.go)
		}
		if ok && old.at.After(e.at) {
			// The rule must hold for every walk that holds this cursor; and
			// a later entry made by a read ahead (walk.go) has the size of
			// the window it read, which the walk grows from.
			e.at, e.walk.Size = old.at, max(e.walk.Size, old.walk.Size)
		}
		if l.chains == nil {
			l.chains = make(map[string]chain)
		}
		l.chains[id] = e
		l.peak = max(l.peak, len(l.chains))
		l.queue = append(l.queue, queued{id: id, made: p.Now})
		l.bytes += chainBytes + int64(len(id))
		s.bytes += chainBytes + int64(len(id))
		s.chains++
	}
	if w := p.From; w != nil && w.list == &l.List {
		w.tip = id
		if p.Last != "" {
			w.reach = max(w.reach, min(s.index(w, p.Last), len(w.IDs)-1))
		}
	}
	if w := p.Window; w != nil && !p.Now.Before(l.floor) {
		if w.bytes+windowBytes <= s.memory {
			s.keep(&l.List, w, p, id)
		} else if e, ok := l.chains[id]; ok {
			// Read for nothing: as a window dropped unread, back off.
			e.walk.Size, e.walk.Backoff = max(e.walk.Size/2, 1), true
			l.chains[id] = e
		}
	}
	s.expire(&l.List, p.Now)
	s.bound(l)
}

// keep adds w, read by the page p, to l. The caller holds s.mu.
func (s *Memory[S]) keep(l *List, w *StoredWindow, p Walked, id string) {
	w.list, w.At, w.tip = l, p.At, id
	w.bytes += windowBytes
	w.unread = len(w.IDs) - sort.Search(len(w.IDs), func(i int) bool { return s.compare(w.IDs[i], p.Last) > 0 })
	w.reach = len(w.IDs) - w.unread - 1 // -1: a window read ahead, no page served from it yet
	i := 0
	for i < len(l.windows) && !l.windows[i].At.Before(w.At) {
		i++
	}
	l.windows = append(l.windows, nil)
	copy(l.windows[i+1:], l.windows[i:])
	l.windows[i] = w
	l.bytes += w.bytes
	s.bytes += w.bytes
	s.windows++
}
