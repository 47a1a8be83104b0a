package translate

import (
	"container/list"
	"hash/maphash"
	"sync"
)

// listState is what the engine learns of one list identity beyond the
// positions the Index holds: the page sizes its backend answers proved,
// the pace and window size of the walk that reads it, and whether its
// backend kept the keyset condition.
//
// It is per list identity, not per endpoint, because a list identity is
// one caller's view: a caller whose own parameter makes the backend answer
// short must teach that limit to its own walks only, never to another
// caller's (SECURITY.md, "Limits and their defaults": the learned page
// limit).
type listState struct {
	sizes pageSizes

	mu    sync.Mutex
	walks [maxWalks]walkState
	keyed keyset

	key  uint64
	elem *list.Element // in lists.lru
}

// lists holds the listState of each list identity, least recently used
// first out once it holds limit of them. Like the Index, it knows a list
// by a keyed hash of its identity: an identity carries query strings and
// header values, and two that share a hash share learned sizes and pace,
// which costs calls, never a wrong page (windows, which are content, are
// never keyed by a hash; see WindowStore). The zero value is ready to use.
type lists struct {
	mu    sync.Mutex
	seed  maphash.Seed
	m     map[uint64]*listState
	lru   list.List // of *listState, most recently used first
	limit int
}

// defaultListStates bounds the lists an engine learns of when
// Engine.ListLimit is 0. A listState is about a hundred bytes.
const defaultListStates = 1 << 14

// get returns the state of list, making it when new.
func (l *lists) get(name string, limit int) *listState {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.seed = maphash.MakeSeed()
		l.m = make(map[uint64]*listState)
		l.limit = limit
		if l.limit < 1 {
			l.limit = defaultListStates
		}
	}
	k := maphash.String(l.seed, name)
	if s, ok := l.m[k]; ok {
		l.lru.MoveToFront(s.elem)
		return s
	}
	s := &listState{key: k}
	s.elem = l.lru.PushFront(s)
	l.m[k] = s
	for len(l.m) > l.limit {
		old := l.lru.Remove(l.lru.Back()).(*listState)
		delete(l.m, old.key)
	}
	return s
}

// Len returns the number of lists held.
func (l *lists) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.m)
}
