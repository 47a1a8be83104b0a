package translate

import (
	"container/list"
	"unsafe"

	"github.com/helpdesk-gateway/gateway/estimate"
	"github.com/helpdesk-gateway/gateway/liststore"
	"github.com/helpdesk-gateway/gateway/locate"
)

// A list's position samples in its object: what the store counts of them,
// and how the store and the list's Index hand them over. The Index
// (index.go) reads and changes samples; the MemoryStore (liststore.go)
// finds, counts and drops them with their list.

// positions holds the samples of one list, ascending by id and by offset.
// It hangs off the list's object in the store (listObj.pos), made by
// the first learning; its fields but owner and list are guarded by the
// owner's mutex.
type positions struct {
	samples []locate.Sample
	end     int             // an offset at or past the list's end; -1 when unknown
	spread  estimate.Spread // how irregular the list's gaps are, from its answers
	answers uint32          // answers learned, to measure a well-known spread rarely

	owner *Index          // the index that made it; set once, under the store's lock
	list  *liststore.List // whose pos it is
	elem  *list.Element   // in owner.lru; nil while it holds nothing
	ids   int64           // what the samples' ids cost (idCost)
	// counted is what the store was last told the samples cost; gone says
	// the store dropped the list, and the samples with it.
	counted int64
	gone    bool
}

// Sizes the store counts for a list's positions: the object with its LRU
// element, made once, and each sample's struct (its id's bytes apart).
const (
	positionsBytes = int64(unsafe.Sizeof(positions{}) + unsafe.Sizeof(list.Element{}) + unsafe.Sizeof((*positions)(nil)))
	sampleBytes    = int64(unsafe.Sizeof(locate.Sample{}))
)

// bytes is what p's samples cost the store beyond positionsBytes.
func (p *positions) bytes() int64 { return int64(cap(p.samples))*sampleBytes + p.ids }

// recount adds to changes what p's samples cost more than the store was
// last told, if anything, and tells it so. The caller holds the owner's
// mutex.
func recount(p *positions, changes []liststore.Change) []liststore.Change {
	if d := p.bytes() - p.counted; d != 0 {
		p.counted += d
		changes = append(changes, liststore.Change{List: p.list, Bytes: d})
	}
	return changes
}

// idBytes is what the ids of samples cost the heap.
func idBytes(samples []locate.Sample) (n int64) {
	for _, s := range samples {
		n += idCost(s.ID)
	}
	return n
}

// idCost is what a sample's id, cloned, costs the heap: its bytes rounded
// up as the allocator's size classes round them (no less for an id of at
// most 512 bytes, the longest the gateway takes), so that many short ids
// are not undercounted. TestPositionsBytes measures it.
func idCost(id string) int64 {
	n := int64(len(id))
	if n <= 256 {
		return (n + 15) &^ 15
	}
	return (n + 63) &^ 63
}

// forget drops p's samples: the list's object keeps p, empty, for its
// next learning. The caller holds x.mu.
func (x *Index) forget(p *positions) {
	if p.elem == nil {
		return
	}
	x.total -= len(p.samples)
	x.lru.Remove(p.elem)
	// Field by field: owner and list are read under the store's lock.
	clear(p.samples)
	p.samples, p.end, p.spread, p.answers, p.elem, p.ids = nil, -1, estimate.Spread{}, 0, nil, 0
}

// thin halves p's samples, keeping its last; false when p holds two or
// fewer. The caller holds the owner's mutex and counts the samples gone.
func thin(p *positions) bool {
	s := p.samples
	if len(s) <= 2 {
		return false
	}
	last := s[len(s)-1]
	n := 0
	for k := 0; k < len(s); k += 2 {
		s[n] = s[k]
		n++
	}
	if s[n-1] != last {
		s[n] = last
		n++
	}
	// A new array, so that the memory goes: the store counts capacity.
	p.samples = append(make([]locate.Sample, 0, n), s[:n]...)
	clear(s)
	p.ids = idBytes(p.samples) // as long as thinning, which is rare
	return true
}

// positions returns the list's samples, made for x when new if create
// is set, and marks the list used; nil when the list holds none (create
// unset) or another index's. Lookups and learnings of the index come
// here first, so that a list's samples live and die with its object.
func (s *MemoryStore) positions(name string, x *Index, create bool) *positions {
	var p *positions // read and made under the store's lock, which guards pos
	s.Own(name, create, func(l *liststore.List, o *listObj) int64 {
		if p = o.pos; p != nil || !create {
			return 0
		}
		p = &positions{owner: x, list: l, end: -1}
		o.pos = p
		return positionsBytes
	})
	if p == nil || p.owner != x {
		return nil // a list is one endpoint's, so of one index; never shared
	}
	return p
}

// listOwner is what the store asks of the engine's part of a list's
// object as it drops or thins it, with the store's lock held: it takes
// the Index's, which the Index never holds while it waits for the
// store's (see Index's locks).
type listOwner struct{}

// Interface guard
var _ liststore.Owner[listObj] = listOwner{}

// Forget drops o's samples from the index that holds them, as the store
// drops the list.
func (listOwner) Forget(o *listObj) {
	p := o.pos
	if p == nil {
		return
	}
	x := p.owner
	x.mu.Lock()
	x.forget(p)
	p.gone = true
	x.mu.Unlock()
}

// Thin halves the samples of o, the list in use, when nothing else is
// left to drop; false when it holds too few.
func (listOwner) Thin(o *listObj) (thinned bool, bytes int64) {
	p := o.pos
	if p == nil {
		return false, 0
	}
	x := p.owner
	x.mu.Lock()
	n := len(p.samples)
	thinned = thin(p)
	x.total -= n - len(p.samples)
	var room [1]liststore.Change
	c := recount(p, room[:0])
	x.mu.Unlock()
	for _, c := range c {
		bytes += c.Bytes
	}
	return thinned, bytes
}
