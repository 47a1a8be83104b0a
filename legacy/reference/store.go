package reference

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
)

// record is one stored record. Its JSON is encoded once, when the record
// is made, so that serving a page only concatenates bytes.
type record struct {
	id     int64
	json   []byte
	keys   sortKeys
	ticket *Ticket // the ticket list only: what _filters looks at
}

// sortKeys holds a record's value of each sortable field of its kind, in
// the order of kind.sortable, as a number in the field's order: a
// date-time as Unix seconds (0 when empty), a phone number as its digits.
// Numbers held in the record, rather than text behind pointers, keep
// sorting a list of 100,000 records a matter of milliseconds.
type sortKeys [4]int64

// list is one record list, kept sorted by id: a page in id order, the one
// the gateway asks for, is a slice of it, with no sorting and no copy.
type list struct {
	kind     *kind
	requests atomic.Int64 // list requests answered, for tests
	served   atomic.Int64 // records sent in list answers, for benchmarks
	stepped  atomic.Int64 // records stepped through to answer (offset + sent), for benchmarks
	skipped  atomic.Int64 // of those, the offsets': stepped over, not sent

	mu      sync.RWMutex
	recs    []*record          // ascending by id, ids unique
	deleted map[int64]struct{} // ids ever deleted, when Config.RecordDeletions
}

// find returns the position of the first record whose id is at least id,
// and whether that record has id. Callers hold the lock.
func (l *list) find(id int64) (int, bool) {
	return sort.Find(len(l.recs), func(i int) int { return cmp.Compare(id, l.recs[i].id) })
}

// insert adds r unless its id is taken. Callers hold the write lock.
func (l *list) insert(r *record) bool {
	i, found := l.find(r.id)
	if found {
		return false
	}
	l.recs = slices.Insert(l.recs, i, r)
	return true
}

// remove deletes the record with id, if there is one. Callers hold the
// write lock.
func (l *list) remove(id int64) bool {
	i, found := l.find(id)
	if !found {
		return false
	}
	l.recs = slices.Delete(l.recs, i, i+1)
	if l.deleted != nil {
		l.deleted[id] = struct{}{}
	}
	return true
}

// freeID returns an id that no record has. One time in four it is just
// past the last record, as a new record of a real backend would be;
// otherwise it is drawn evenly from 1 to a little past the last id, so
// that inserts also land below the first record and between records. A
// drawn id that is taken moves up to the next free one. Callers hold the
// lock.
func (l *list) freeID(r *rand.Rand) int64 {
	var top int64
	if n := len(l.recs); n > 0 {
		top = l.recs[n-1].id
	}
	if r.IntN(4) == 0 {
		return top + 1 + r.Int64N(maxGap)
	}
	id := 1 + r.Int64N(top+maxGap)
	i, _ := l.find(id)
	for ; i < len(l.recs) && l.recs[i].id == id; i++ {
		id++
	}
	return id
}

// ids returns the ids of the list, ascending.
func (l *list) ids() []int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make([]int64, len(l.recs))
	for i, r := range l.recs {
		out[i] = r.id
	}
	return out
}

// ordered returns recs, which are in id order, in the order of the sort
// key at index key of the kind's sortable fields, or of the id when key is
// -1. Ties break by ascending id, so every order is total and pages of it
// never overlap. For ascending id it returns recs itself; otherwise a copy.
func ordered(recs []*record, key int, desc bool) []*record {
	if key < 0 && !desc {
		return recs
	}
	out := slices.Clone(recs)
	if key < 0 {
		slices.Reverse(out)
		return out
	}
	slices.SortFunc(out, func(a, b *record) int {
		c := cmp.Compare(a.keys[key], b.keys[key])
		if desc {
			c = -c
		}
		if c == 0 {
			c = cmp.Compare(a.id, b.id)
		}
		return c
	})
	return out
}
