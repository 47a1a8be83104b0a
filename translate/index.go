package translate

import (
	"container/list"
	"sort"
	"strings"
	"sync"

	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/helpdesk-gateway/gateway/liststore"
	"github.com/helpdesk-gateway/gateway/locate"
)

// Index remembers where ids were seen in each list: (offset, id) samples
// learned from every backend answer, and where a list ended. One Index
// serves one endpoint; each list identity's samples are its own.
//
// Samples are hints, never trusted: records come and go between calls and
// shift every offset after them. The engine verifies each hint against a
// fresh answer and relocates when it moved.
//
// Index is a view: a list's samples live in the list identity's one object
// in a MemoryStore (liststore.go), under the identity in full and counted
// in the store's one bound in bytes, each sample as its struct and its
// id. A list the store evicts takes its samples with it. The Index bounds
// only how many samples, and lists holding samples, it keeps in all
// (limit, the index_size option), least recently used list first, so that
// one endpoint's search state stays small in the store it shares.
//
// Locks: the store's guards its map and bytes, the Index's its lists'
// samples. The store takes the Index's while it holds its own (to drop or
// thin a list's samples: liststore.Owner); the Index never takes the
// store's while it holds its own, and hands the store the bytes a change
// cost after (liststore.Memory.Counted). Its samples (records seen at an
// offset of a list) and hints (what it knows of an id's neighbourhood)
// are package locate's, which a page's search (locate.Search) starts
// from.
type Index struct {
	order cursor.Order
	limit int // samples, and lists holding samples, held at most
	store *MemoryStore

	mu    sync.Mutex
	lru   list.List // of *positions holding samples, the most recently used first
	total int       // samples held across lists
	locks int       // learnings, each one acquisition of mu, for tests
}

// Index returns a position index whose samples live in s's list objects,
// counted in s's bound: at most limit samples of at most limit lists;
// limit < 1 makes an index that remembers nothing.
func (s *MemoryStore) Index(limit int) *Index {
	return &Index{order: s.order, limit: limit, store: s}
}

// Stats returns the lists that hold samples and the samples across them,
// for the admin endpoint. Both are kept as the index changes, so this is
// constant time and holds the lock no longer than Len.
func (x *Index) Stats() (lists, samples int) {
	if x == nil {
		return 0, 0
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.lru.Len(), x.total
}

// Extent returns the most records any list of the index is known to
// hold: where it ended, or past its deepest sample; 0 when it knows none.
// The admin endpoint derives from it what a walk of the longest list
// costs a backend that pages by offset. It holds the lock for a pass
// over the lists (at most limit).
func (x *Index) Extent() int {
	if x == nil {
		return 0
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	n := 0
	for e := x.lru.Front(); e != nil; e = e.Next() {
		p := e.Value.(*positions)
		n = max(n, p.end)
		if k := len(p.samples); k > 0 {
			n = max(n, p.samples[k-1].Off+1)
		}
	}
	return n
}

func (x *Index) lookup(list, id string) locate.Hint {
	h := locate.Hint{End: -1}
	if x == nil || x.store == nil {
		return h
	}
	p := x.store.positions(list, x, false)
	if p == nil {
		return h
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if p.elem == nil {
		return h // none yet, or dropped since
	}
	x.lru.MoveToFront(p.elem)
	h.End = p.end
	h.Spread = p.spread
	i := sort.Search(len(p.samples), func(i int) bool {
		return x.order.Compare(p.samples[i].ID, id) > 0
	})
	if i > 0 {
		h.Lo, h.HasLo = p.samples[i-1], true
	}
	h.Below(p.samples[:i])
	if i < len(p.samples) {
		h.Hi, h.HasHi = p.samples[i], true
	}
	return h
}

// learn records what one answer showed: run holds samples of consecutive
// or increasing offsets taken from it, ascending by id; the list holds at
// least seenTo records; end >= 0 says the list ends there.
//
// An answer is the freshest truth about its range, so samples inside the id
// range of run, and neighbours whose offsets contradict it, are dropped.
func (x *Index) learn(list string, run []locate.Sample, seenTo, end int) {
	x.learnAnswer(list, run, seenTo, end, answerIDs{})
}

// answerIDs is every id of one answer, from offset start.
type answerIDs struct {
	start int
	ids   []string
}

// confirms reports whether the answer holds s's id at s's offset.
func (a answerIDs) confirms(order cursor.Order, s locate.Sample) bool {
	k := s.Off - a.start
	return k >= 0 && k < len(a.ids) && order.Compare(a.ids[k], s.ID) == 0
}

// learnAnswer is learn for run taken from the answer a: samples inside its
// range that a confirms are kept, as fresh as run. Concurrent walkers then
// do not wipe out each other's next cursor with their answers, which would
// make each next page search where one call would do.
func (x *Index) learnAnswer(list string, run []locate.Sample, seenTo, end int, a answerIDs) {
	if x == nil || x.limit < 1 || x.store == nil {
		return
	}
	p := x.store.positions(list, x, true)
	if p == nil {
		return
	}
	var room [4]liststore.Change // on the stack: p, and a list or two forgotten for room
	changes := x.learnLocked(p, run, seenTo, end, a, room[:0])
	x.store.Counted(p.list, changes)
}

// learnLocked is learnAnswer's change to p under x.mu. It returns the
// changes in bytes of p and of any list forgotten for room, for the
// store to count once x.mu is let go (see Index's locks).
func (x *Index) learnLocked(p *positions, run []locate.Sample, seenTo, end int, a answerIDs, changes []liststore.Change) []liststore.Change {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.locks++
	if p.gone {
		return changes // the store dropped the list since it gave p
	}
	if p.elem == nil {
		p.end = -1
		p.elem = x.lru.PushFront(p)
	} else {
		x.lru.MoveToFront(p.elem)
	}
	if p.answers++; p.spread.Learning() || p.answers%16 == 0 {
		p.spread.Learn(x.order == cursor.Lexical, a.ids)
	}
	switch {
	case end >= 0:
		p.end = end
	case p.end >= 0 && p.end < seenTo:
		p.end = -1
	}
	if len(run) > 0 {
		before := len(p.samples)
		p.samples = x.splice(p, run, a)
		x.total += len(p.samples) - before
	}
	if p.end >= 0 {
		n := len(p.samples)
		for n > 0 && p.samples[n-1].Off >= p.end {
			n--
		}
		x.total -= len(p.samples) - n
		p.ids -= idBytes(p.samples[n:])
		clear(p.samples[n:])
		p.samples = p.samples[:n]
	}
	changes = x.evict(p, changes)
	return recount(p, changes)
}

// splice replaces the samples that run supersedes with run and those of
// them that a confirms.
func (x *Index) splice(p *positions, run []locate.Sample, a answerIDs) []locate.Sample {
	samples := p.samples
	first, last := run[0], run[len(run)-1]
	i := sort.Search(len(samples), func(i int) bool {
		return x.order.Compare(samples[i].ID, first.ID) >= 0
	})
	for i > 0 && samples[i-1].Off >= first.Off {
		i--
	}
	// The samples past last's id are at or after i: search only there.
	j := i + sort.Search(len(samples)-i, func(k int) bool {
		return x.order.Compare(samples[i+k].ID, last.ID) > 0
	})
	for j < len(samples) && samples[j].Off <= last.Off {
		j++
	}
	// Ids of run are cloned: they usually point into a response body,
	// which must not stay alive for as long as the index remembers its ids.
	// Kept samples are the index's own already.
	// fresh is copied into samples below, so for the few samples of a
	// sequential walk's answer it lives on the stack.
	var room [16]locate.Sample
	fresh := room[:0]
	if n := len(run) + j - i; n > len(room) {
		fresh = make([]locate.Sample, 0, n)
	}
	old := samples[i:j]
	p.ids -= idBytes(old)
	for _, s := range run {
		for len(old) > 0 && old[0].Off <= s.Off {
			if old[0].Off < s.Off && old[0].Off > first.Off && a.confirms(x.order, old[0]) {
				fresh = append(fresh, old[0])
				p.ids += idCost(old[0].ID)
			}
			old = old[1:]
		}
		fresh = append(fresh, locate.Sample{Off: s.Off, ID: strings.Clone(s.ID)})
		p.ids += idCost(s.ID)
	}
	tail := len(samples) - j
	out := samples
	if grow := len(fresh) - (j - i); grow > 0 {
		out = append(samples, make([]locate.Sample, grow)...)
	}
	copy(out[i+len(fresh):], samples[j:j+tail])
	copy(out[i:], fresh)
	n := i + len(fresh) + tail
	clear(out[n:])
	return out[:n]
}

// evict keeps the index within its limits: first by forgetting the least
// recently used other lists' samples, in constant time each, until both
// samples and lists are within limit (a list that ended empty holds no
// sample but still counts), then by thinning keep to every other sample,
// which halves its memory and keeps its spread. A list keeps at least its
// two ends. It returns changes with those of the lists forgotten added.
// The caller holds x.mu.
func (x *Index) evict(keep *positions, changes []liststore.Change) []liststore.Change {
	for (x.total > x.limit || x.lru.Len() > x.limit) && x.lru.Len() > 1 {
		e := x.lru.Back()
		if e.Value == keep {
			e = e.Prev()
		}
		p := e.Value.(*positions)
		x.forget(p)
		changes = recount(p, changes)
	}
	for x.total > x.limit && thin(keep) {
		x.total = len(keep.samples)
	}
	return changes
}
