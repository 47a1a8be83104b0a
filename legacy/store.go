package legacy

import (
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// record is one stored record: its id, its value, and the values it can be
// sorted by. Its JSON is encoded once, on first read, so that a large data
// set is made in an instant and paging only concatenates bytes.
type record struct {
	id     int64
	date   string   // the list's date field, for the default order
	sorts  []string // the kind's other sortable fields, as sortable text
	value  any      // what is encoded
	ticket *Ticket  // for the ticket list only

	once sync.Once
	json []byte
}

// bytes returns the record's JSON.
func (r *record) bytes() []byte {
	r.once.Do(func() { r.json = encode(r.value) })
	return r.json
}

// list is one thread-safe record list, kept sorted by id so that the
// gateway's id-ordered pages are a slice away.
type list struct {
	name      string
	dateField string
	mu        sync.RWMutex
	recs      []*record
	requests  atomic.Int64
	deleted   map[int64]struct{} // ids ever deleted, when Config.RecordDeletions
}

func (l *list) find(id int64) (int, bool) {
	return sort.Find(len(l.recs), func(i int) int {
		switch {
		case id < l.recs[i].id:
			return -1
		case id > l.recs[i].id:
			return 1
		}
		return 0
	})
}

// insert adds r unless its id exists; callers hold the write lock.
func (l *list) insert(r *record) bool {
	i, found := l.find(r.id)
	if found {
		return false
	}
	l.recs = slices.Insert(l.recs, i, r)
	return true
}

// remove deletes the record with id; callers hold the write lock.
func (l *list) remove(id int64) bool {
	i, found := l.find(id)
	if found {
		l.recs = slices.Delete(l.recs, i, i+1)
		if l.deleted != nil {
			l.deleted[id] = struct{}{}
		}
	}
	return found
}

// sorted returns the records in the order a request asks for. Ties break
// by id so that every order is total and pages never overlap. Callers hold
// the read lock.
func (l *list) sorted(field string, desc bool) []*record {
	if field == "id" {
		if !desc {
			return l.recs
		}
		out := slices.Clone(l.recs)
		slices.Reverse(out)
		return out
	}
	k := slices.Index(kindOf(l.name).sortable, field)
	key := func(r *record) string {
		if k < 0 {
			return r.date
		}
		return r.sorts[k]
	}
	out := slices.Clone(l.recs)
	slices.SortStableFunc(out, func(a, b *record) int {
		c := strings.Compare(key(a), key(b))
		if desc {
			c = -c
		}
		return c // stable over the id order: ties stay ascending by id
	})
	return out
}

func (l *list) ids() []int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make([]int64, len(l.recs))
	for i, r := range l.recs {
		out[i] = r.id
	}
	return out
}
