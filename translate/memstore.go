package translate

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

// MemoryStore is the ListStore of one instance: every list identity's
// object (liststore.go) in memory, least recently used first out, under
// one bound in bytes that counts all of it: the identity, the learned
// state, the position index's samples (MemoryStore.Index), each chain
// entry and each window with what its fetcher keeps.
//
// A window is content, not a hint, so the store is strict with it: it is
// keyed by the list identity in full, never by a hash, so two callers'
// windows (or samples) can never be mistaken for each other; it serves
// only for the TTL after the call that read it began, and only a walk the
// walk rule admits (readahead.go); and an evicted or expired window only
// costs the next page a backend call.
//
// The consistency guarantee holds for a page cut from a window as for a
// page read from the backend: a window is one backend answer, a run of
// the list at one moment that holds a record at or below every cursor it
// serves (or starts the list, or is anchored at a keyset cursor), so the
// page is the next records after the cursor as the backend held them then.
type MemoryStore struct {
	order  Order
	ttl    time.Duration
	memory int64

	mu      sync.Mutex
	lists   map[string]*storedList
	lru     list.List // of *storedList, most recently used first
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
}

// storedList is one list identity's object. Its fields but learned are
// guarded by the store's mutex.
type storedList struct {
	learned listState
	key     string
	elem    *list.Element // in MemoryStore.lru
	bytes   int64         // counted in the store's: the list's own and its entries'

	pos     *positions       // the position index's samples; nil before its first learning
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
}

// chain is a walk chain entry: see Walked.
type chain struct {
	at, made time.Time
	walk     Walk
}

// queued is a chain entry in the order entries were made. An entry made
// again under the same id is queued again; the older one, when it comes
// up, no longer matches the map's and only frees its bytes.
type queued struct {
	id   string
	made time.Time
}

// Sizes the bound counts, beyond the bytes strings and answers hold: a
// list's object with its LRU element, map slot and learned state, and a
// chain entry in its map (a slot, with room for the map's load) and in
// the queue. TestListStateBytes measures them.
const (
	listBytes   = int64(unsafe.Sizeof(storedList{}) + unsafe.Sizeof(list.Element{}) + 3*mapSlot + 32)
	chainBytes  = int64(2*(unsafe.Sizeof("")+unsafe.Sizeof(chain{})+1) + 2*unsafe.Sizeof(queued{}))
	mapSlot     = unsafe.Sizeof("") + unsafe.Sizeof((*storedList)(nil)) + 1 // key, value, control byte
	windowBytes = int64(unsafe.Sizeof(StoredWindow{}) + unsafe.Sizeof((*StoredWindow)(nil)))
)

// Interface guard
var _ ListStore = (*MemoryStore)(nil)

// NewMemoryStore returns a store whose windows and chain entries live for
// ttl and whose lists hold at most memory bytes in all. A ttl of 0 or
// less keeps no window and no chain: read-ahead is off, and the store
// holds the lists' learned state only.
func NewMemoryStore(order Order, ttl time.Duration, memory int64) *MemoryStore {
	return &MemoryStore{order: order, ttl: max(ttl, 0), memory: memory, lists: make(map[string]*storedList)}
}

// TTL is how long a window serves after its answer was asked for.
func (s *MemoryStore) TTL() time.Duration {
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
func (s *MemoryStore) Stats() WindowStats {
	if s == nil {
		return WindowStats{}
	}
	s.mu.Lock()
	st := WindowStats{Lists: len(s.lists), Windows: s.windows, Chains: s.chains, Bytes: s.bytes}
	s.mu.Unlock()
	st.Served, st.Evicted, st.Expired = s.served.Load(), s.evicted.Load(), s.expired.Load()
	return st
}

func (s *MemoryStore) learned(name string) *listState {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.get(name)
	s.bound(l)
	return &l.learned
}

// get returns the list's object, made when new, as the most recently
// used. The caller holds s.mu and calls bound.
func (s *MemoryStore) get(name string) *storedList {
	if l, ok := s.lists[name]; ok {
		s.lru.MoveToFront(l.elem)
		return l
	}
	l := &storedList{key: name, bytes: listBytes + int64(len(name)), floor: s.gone}
	l.elem = s.lru.PushFront(l)
	s.lists[name] = l
	s.bytes += l.bytes
	return l
}

// Cut implements ListStore: the walk rule's check (see readahead.go).
func (s *MemoryStore) Cut(_ context.Context, name string, q CutQuery) (c CutResult) {
	c.At = q.Now // the instance's clock is the store's
	if s.ttl <= 0 || q.After == "" {
		return c
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.lists[name]
	if l == nil {
		return c
	}
	s.lru.MoveToFront(l.elem)
	s.expire(l, q.Now)
	e, ok := l.chains[q.After]
	if !ok || q.Now.Sub(e.made) >= s.ttl {
		return c // expire pops in queue order, which concurrent pages may skew
	}
	c.Continues, c.Walk, c.Made = true, e.walk, e.made
	if q.Fresh {
		return c
	}
	c.Window, c.From = s.cut(l, q.After, q.Size, e.at)
	return c
}

// cut returns the window of l read no earlier than at that holds the
// page of size records after the cursor, and the index of its first
// record after the cursor. A window holds the page when the cursor is at
// or above its floor and the page's records and one more (or the list's
// end) follow the cursor in it (holds). Failing that, the window that
// holds the most of the records after the cursor gives them as the
// page's head: the engine reads the rest from the backend, stitched on
// the head's last record, so that a walk whose pages a window cannot
// hold (a page as large as the backend's limit) still reads each record
// once. nil when no admitted window holds a record after the cursor. The
// caller holds s.mu.
func (s *MemoryStore) cut(l *storedList, after string, size int, at time.Time) (*StoredWindow, int) {
	var (
		part  *StoredWindow // the window with the longest head, if no window holds the page
		partK int
	)
	for _, w := range l.windows {
		if w.at.Before(at) {
			break // newest first: every window from here was read before the walk's last page
		}
		if !w.fromStart && s.order.Compare(after, w.floor) < 0 {
			continue
		}
		k := sort.Search(len(w.ids), func(i int) bool { return s.order.Compare(w.ids[i], after) > 0 })
		rest := len(w.ids) - k
		if !w.holds(k, size) {
			if rest > 0 && (part == nil || rest > len(part.ids)-partK) {
				part, partK = w, k
			}
			continue
		}
		w.read += min(rest, size)
		s.served.Add(1)
		return w, k
	}
	if part != nil {
		part.read += len(part.ids) - partK
	}
	return part, partK
}

// Walked implements ListStore.
func (s *MemoryStore) Walked(_ context.Context, name string, p Walked) {
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
		if old, ok := l.chains[id]; ok && old.at.After(e.at) {
			e.at = old.at // the rule must hold for every walk that holds this cursor
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
	if w := p.From; w != nil && w.list == l {
		w.tip = id
	}
	if w := p.Window; w != nil && !p.Now.Before(l.floor) {
		if w.bytes+windowBytes <= s.memory {
			s.keep(l, w, p, id)
		} else if e, ok := l.chains[id]; ok {
			// Read for nothing: as a window dropped unread, back off.
			e.walk.Size, e.walk.Backoff = max(e.walk.Size/2, 1), true
			l.chains[id] = e
		}
	}
	s.expire(l, p.Now)
	s.bound(l)
}

// keep adds w, read by the page p, to l. The caller holds s.mu.
func (s *MemoryStore) keep(l *storedList, w *StoredWindow, p Walked, id string) {
	w.list, w.at, w.tip = l, p.At, id
	w.bytes += windowBytes
	w.unread = len(w.ids) - sort.Search(len(w.ids), func(i int) bool { return s.order.Compare(w.ids[i], p.Last) > 0 })
	i := 0
	for i < len(l.windows) && !l.windows[i].at.Before(w.at) {
		i++
	}
	l.windows = append(l.windows, nil)
	copy(l.windows[i+1:], l.windows[i:])
	l.windows[i] = w
	l.bytes += w.bytes
	s.bytes += w.bytes
	s.windows++
}

// expire drops l's windows and chain entries past the TTL. The caller
// holds s.mu.
func (s *MemoryStore) expire(l *storedList, now time.Time) {
	for n := len(l.windows); n > 0 && now.Sub(l.windows[n-1].at) >= s.ttl; n = len(l.windows) {
		s.drop(l, l.windows[n-1], true)
	}
	for len(l.queue) > 0 && now.Sub(l.queue[0].made) >= s.ttl {
		s.popChain(l)
	}
}

// popChain forgets l's oldest queued chain entry, and returns its answer
// time when it was the live entry of its id. The caller holds s.mu.
func (s *MemoryStore) popChain(l *storedList) (at time.Time) {
	q := l.queue[0]
	l.queue[0] = queued{}
	l.queue = l.queue[1:]
	if len(l.queue) == 0 {
		l.queue = nil // let the backing array go
	}
	if e, ok := l.chains[q.id]; ok && e.made.Equal(q.made) {
		at = e.at
		delete(l.chains, q.id)
		switch n := len(l.chains); {
		case n == 0:
			l.chains, l.peak = nil, 0 // a map does not shrink: let it go
		case 4*n < l.peak && l.peak > 64:
			m := make(map[string]chain, n) // not maps.Clone, which keeps the room
			for k, v := range l.chains {
				m[k] = v
			}
			l.chains, l.peak = m, n
		}
	}
	n := chainBytes + int64(len(q.id))
	l.bytes -= n
	s.bytes -= n
	s.chains--
	return at
}

// drop removes w from l, expired or evicted, and counts it. A window
// dropped before its walk read half of what it held past the page that
// read it backs the walk off. The caller holds s.mu.
func (s *MemoryStore) drop(l *storedList, w *StoredWindow, expired bool) {
	for i, x := range l.windows {
		if x == w {
			l.windows = append(l.windows[:i:i], l.windows[i+1:]...)
			break
		}
	}
	if len(l.windows) == 0 {
		l.windows = nil
	}
	l.bytes -= w.bytes
	s.bytes -= w.bytes
	s.windows--
	w.list = nil
	if 2*w.read < w.unread && w.tip != "" {
		if e, ok := l.chains[w.tip]; ok {
			e.walk.Size, e.walk.Backoff = max(e.walk.Size/2, 1), true
			l.chains[w.tip] = e
		}
	}
	if expired {
		s.expired.Add(1)
	} else {
		s.evicted.Add(1)
	}
	if s.OnDrop != nil {
		s.OnDrop(expired)
	}
}

// bound keeps the store within its memory: the least recently used
// list's windows go first, then that list, with its samples; the list in
// use (keep) loses its oldest windows and chain entries, then half its
// samples at a time, never its learned state. The caller holds s.mu.
func (s *MemoryStore) bound(keep *storedList) {
	for s.bytes > s.memory && s.lru.Len() > 0 {
		l := s.lru.Back().Value.(*storedList)
		if l == keep && s.lru.Len() > 1 {
			l = s.lru.Back().Prev().Value.(*storedList)
		}
		switch {
		case len(l.windows) > 0:
			s.drop(l, l.windows[len(l.windows)-1], false)
		case l != keep:
			s.remove(l)
		case len(l.queue) > 0:
			if at := s.popChain(l); at.After(l.floor) {
				l.floor = at
			}
		case !s.thin(l):
			return
		}
	}
}

// remove forgets l whole. The caller holds s.mu.
func (s *MemoryStore) remove(l *storedList) {
	for len(l.windows) > 0 {
		s.drop(l, l.windows[0], false)
	}
	for len(l.queue) > 0 {
		if at := s.popChain(l); at.After(s.gone) {
			s.gone = at
		}
	}
	if l.floor.After(s.gone) {
		s.gone = l.floor // what it forgot before, too
	}
	l.dropPositions()
	s.lru.Remove(l.elem)
	delete(s.lists, l.key)
	s.bytes -= l.bytes
}

// Clear drops every list, as when the config that made the store is
// unloaded: window memory goes with the last page cut from it.
func (s *MemoryStore) Clear() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.lists {
		l.dropPositions()
	}
	clear(s.lists)
	s.lru.Init()
	s.bytes, s.windows, s.chains = 0, 0, 0
}

// Purge drops every window and chain entry whose TTL has passed: memory
// the store holds for nothing. The store also drops them as a list is
// used; Purge is for a timer, so that an idle instance lets them go.
func (s *MemoryStore) Purge(now time.Time) {
	if s == nil || s.ttl <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.lists {
		s.expire(l, now)
	}
}

// PurgeEvery calls Purge every interval until the func it returns is
// called (once or more): so that an idle instance does not hold callers'
// records past the TTL waiting for traffic. It does nothing when
// read-ahead is off.
func (s *MemoryStore) PurgeEvery(interval time.Duration) (stop func()) {
	if s == nil || s.ttl <= 0 || interval <= 0 {
		return func() {}
	}
	t := time.NewTicker(interval)
	done := make(chan struct{})
	go func() {
		defer t.Stop()
		for {
			select {
			case now := <-t.C:
				s.Purge(now)
			case <-done:
				return
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done) }) }
}
