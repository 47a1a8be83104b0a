package liststore

import (
	"sync"
	"time"
)

// What goes, and when: windows and chain entries past the TTL, as a list
// is used or on a timer (Purge); the least recently used list's windows,
// then that list, when the store passes its memory; and everything when
// the config that made the store is unloaded (Clear).

// expire drops l's windows and chain entries past the TTL. The caller
// holds s.mu.
func (s *Memory[S]) expire(l *List, now time.Time) {
	for n := len(l.windows); n > 0 && now.Sub(l.windows[n-1].At) >= s.ttl; n = len(l.windows) {
		s.drop(l, l.windows[n-1], true)
	}
	for len(l.queue) > 0 && now.Sub(l.queue[0].made) >= s.ttl {
		s.popChain(l)
	}
}

// popChain forgets l's oldest queued chain entry, and returns its answer
// time when it was the live entry of its id. The caller holds s.mu.
func (s *Memory[S]) popChain(l *List) (at time.Time) {
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
func (s *Memory[S]) drop(l *List, w *StoredWindow, expired bool) {
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
// list's windows go first, then that list, with its own object; the list
// in use (keep) loses its oldest windows and chain entries, then, by its
// owner's Thin, half of what its own object holds at a time, never the
// object itself. The caller holds s.mu.
func (s *Memory[S]) bound(keep *entry[S]) {
	for s.bytes > s.memory && s.lru.Len() > 0 {
		l := s.lru.Back().Value.(*entry[S])
		if l == keep && s.lru.Len() > 1 {
			l = s.lru.Back().Prev().Value.(*entry[S])
		}
		switch {
		case len(l.windows) > 0:
			s.drop(&l.List, l.windows[len(l.windows)-1], false)
		case l != keep:
			s.remove(l)
		case len(l.queue) > 0:
			if at := s.popChain(&l.List); at.After(l.floor) {
				l.floor = at
			}
		case !s.thin(l):
			return
		}
	}
}

// thin asks the owner to thin l's own object, the list in use, and
// counts what that freed; false when it cannot. The caller holds s.mu.
func (s *Memory[S]) thin(l *entry[S]) bool {
	if s.owner == nil {
		return false
	}
	thinned, n := s.owner.Thin(&l.own)
	l.bytes += n
	s.bytes += n
	return thinned
}

// forget tells the owner l's own object goes with l. The caller holds
// s.mu.
func (s *Memory[S]) forget(l *entry[S]) {
	if s.owner != nil {
		s.owner.Forget(&l.own)
	}
}

// remove forgets l whole. The caller holds s.mu.
func (s *Memory[S]) remove(l *entry[S]) {
	for len(l.windows) > 0 {
		s.drop(&l.List, l.windows[0], false)
	}
	for len(l.queue) > 0 {
		if at := s.popChain(&l.List); at.After(s.gone) {
			s.gone = at
		}
	}
	if l.floor.After(s.gone) {
		s.gone = l.floor // what it forgot before, too
	}
	s.forget(l)
	s.lru.Remove(l.elem)
	delete(s.lists, l.key)
	s.bytes -= l.bytes
}

// Change is what a list's own object came to cost more (or less, below
// zero) after the engine changed it outside the store's lock.
type Change struct {
	List  *List
	Bytes int64
}

// Counted takes changes in what lists' own objects cost, for the lists
// the store still holds, and keeps the bound for the list in use. A list
// dropped since counts nothing: its bytes left with it, before the
// change.
func (s *Memory[S]) Counted(keep *List, changes []Change) {
	if len(changes) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range changes {
		if l := s.lists[c.List.key]; l != nil && &l.List == c.List {
			l.bytes += c.Bytes
			s.bytes += c.Bytes
		}
	}
	if l := s.lists[keep.key]; l != nil && &l.List == keep {
		s.bound(l)
	}
}

// Clear drops every list, as when the config that made the store is
// unloaded: window memory goes with the last page cut from it.
func (s *Memory[S]) Clear() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.lists {
		s.forget(l)
	}
	clear(s.lists)
	s.lru.Init()
	s.bytes, s.windows, s.chains = 0, 0, 0
}

// Purge drops every window and chain entry whose TTL has passed: memory
// the store holds for nothing. The store also drops them as a list is
// used; Purge is for a timer, so that an idle instance lets them go.
func (s *Memory[S]) Purge(now time.Time) {
	if s == nil || s.ttl <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.lists {
		s.expire(&l.List, now)
	}
}

// PurgeEvery calls Purge every interval until the func it returns is
// called (once or more): so that an idle instance does not hold callers'
// records past the TTL waiting for traffic. It does nothing when
// read-ahead is off.
func (s *Memory[S]) PurgeEvery(interval time.Duration) (stop func()) {
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
