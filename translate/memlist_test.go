package translate

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// memList is an in-memory offset-paged backend for the engine's tests: a
// sorted id list that tests may change between calls, with every call
// counted.
type memList struct {
	mu      sync.Mutex
	ids     []int64
	calls   int
	fetched int
	// stepped counts the records the backend steps through: a SQL
	// OFFSET/LIMIT query reads the offset's records and the page's; a
	// keyset query (id > X LIMIT n, on an index) reads the page's only.
	stepped int
	// before runs ahead of every call, under the lock, to change the list
	// between calls.
	before func(l *memList)
	// clampAt > 0 makes the list clamp _perPage to it without saying so;
	// fixed > 0 makes it ignore _perPage and serve pages of fixed records.
	// Either way the page number counts pages of the size it served, as a
	// real backend's does.
	clampAt, fixed int
	// offsets makes the list take a window's offset, as an offset/limit
	// backend does, instead of its page number: a clamp then cuts a
	// window short but never moves it.
	offsets bool
	// keysetInclusive makes a keyset window hold the cursor's own record
	// (id >= X, as json-server's id_gte); keysetIgnored makes the list
	// ignore the condition and answer from its start.
	keysetInclusive, keysetIgnored bool
	// keysetAs makes the list misread the condition: "text" compares ids
	// as text (after 9 come 90, 91, ...), "field" applies it to another
	// field, a ticket number that counts the records from 0; "block"
	// applies it to the id rounded down to a multiple of 5, so that it
	// skips records only above some cursors.
	keysetAs string
	// offsetCalls, offsetFetched and offsetStepped count the calls that
	// are not keyset, the records they send and those they step through.
	offsetCalls, offsetFetched, offsetStepped int
	// versions, when set, makes the list send records, each the id and
	// the version its insert gave it: a record deleted and inserted again
	// under its old id is a new record, with other bytes.
	versions map[int64]int
	version  int
}

// withRecords makes l send records (see versions), every record present
// now at version 0.
func (l *memList) withRecords() *memList {
	l.versions = make(map[int64]int, len(l.ids))
	for _, id := range l.ids {
		l.versions[id] = 0
	}
	return l
}

// record is the bytes l sends for id.
func (l *memList) record(id int64) []byte {
	return fmt.Appendf(nil, `{"id":%d,"v":%d}`, id, l.versions[id])
}

// batch is the answer that holds ids.
func (l *memList) batch(ids []int64) Batch {
	b := Batch{IDs: make([]string, 0, len(ids))}
	if l.versions != nil {
		b.Records = make([][]byte, 0, len(ids))
	}
	for _, id := range ids {
		b.IDs = append(b.IDs, strconv.FormatInt(id, 10))
		if l.versions != nil {
			b.Records = append(b.Records, l.record(id))
		}
	}
	return b
}

// records returns the record of every id of l. Callers hold mu.
func (l *memList) records() map[int64]string {
	m := make(map[int64]string, len(l.ids))
	for _, id := range l.ids {
		m[id] = string(l.record(id))
	}
	return m
}

func newMemList(ids []int64) *memList {
	return &memList{ids: slices.Clone(ids)}
}

// evenIDs returns n ids spread evenly: 10, 20, 30, ...
func evenIDs(n int) []int64 {
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(i+1) * 10
	}
	return ids
}

// randomIDs returns n ascending ids with random gaps of 1 to maxGap.
func randomIDs(r *rand.Rand, n, maxGap int) []int64 {
	ids := make([]int64, n)
	var id int64
	for i := range ids {
		id += 1 + r.Int64N(int64(maxGap))
		ids[i] = id
	}
	return ids
}

func (l *memList) Fetch(_ context.Context, w Window) (Batch, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.before != nil {
		l.before(l)
	}
	l.calls++
	size := w.Size
	switch {
	case l.fixed > 0:
		size = l.fixed
	case l.clampAt > 0:
		size = min(size, l.clampAt)
	}
	if w.Keyset() {
		x, _ := strconv.ParseInt(w.After, 10, 64)
		if !l.keysetInclusive {
			x++
		}
		i, _ := slices.BinarySearch(l.ids, x)
		if l.keysetIgnored {
			i = 0
		}
		ids := l.ids[i:]
		if l.keysetAs != "" {
			ids = misreadAbove(l.ids, w.After, l.keysetInclusive, l.keysetAs)
		}
		b := l.batch(ids[:min(size, len(ids))])
		l.fetched += len(b.IDs)
		l.stepped += len(b.IDs)
		return b, nil
	}
	from := (w.Page() - 1) * size // the page as the backend counts it
	if l.offsets {
		from = w.Start
	} else if !w.Aligned() {
		panic(fmt.Sprintf("window %+v asked of a backend that pages by number", w))
	}
	from = min(from, len(l.ids))
	to := min(from+size, len(l.ids))
	l.offsetCalls++
	l.offsetFetched += to - from
	l.offsetStepped += to
	b := l.batch(l.ids[from:to])
	l.fetched += len(b.IDs)
	l.stepped += to
	return b, nil
}

// misreadAbove returns the ids a backend that misreads "ids above after"
// (or at it, inclusive) as mode says (see memList.keysetAs) answers
// with, in id order.
func misreadAbove(ids []int64, after string, inclusive bool, mode string) []int64 {
	x, _ := strconv.ParseInt(after, 10, 64)
	var out []int64
	for number, id := range ids {
		c := 0
		switch mode {
		case "text":
			c = strings.Compare(strconv.FormatInt(id, 10), after)
		case "field":
			c = cmp.Compare(int64(number), x)
		case "block":
			c = cmp.Compare(id/5*5, x)
		}
		if c > 0 || c == 0 && inclusive {
			out = append(out, id)
		}
	}
	return out
}

// insert adds id if absent; remove deletes it if present. Callers hold mu.
func (l *memList) insert(id int64) {
	i, found := slices.BinarySearch(l.ids, id)
	if !found {
		l.ids = slices.Insert(l.ids, i, id)
		if l.versions != nil {
			l.version++
			l.versions[id] = l.version
		}
	}
}

func (l *memList) remove(id int64) {
	if i, found := slices.BinarySearch(l.ids, id); found {
		l.ids = slices.Delete(l.ids, i, i+1)
		delete(l.versions, id)
	}
}

func (l *memList) snapshot() []int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.ids)
}

func (l *memList) counts() (calls, fetched int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls, l.fetched
}

// after returns the first n ids of ids above cursor, and whether more follow.
func after(ids []int64, cursor int64, n int) ([]int64, bool) {
	i, found := slices.BinarySearch(ids, cursor)
	if found {
		i++
	}
	rest := ids[i:]
	if len(rest) > n {
		return rest[:n], true
	}
	return rest, false
}

func parseIDs(ids []string) []int64 {
	out := make([]int64, len(ids))
	for i, s := range ids {
		out[i], _ = strconv.ParseInt(s, 10, 64)
	}
	return out
}

// Detach implements Detacher: the list is its own fetcher for a read
// ahead, its calls counted with the walker's.
func (l *memList) Detach() (Fetcher, context.Context, func(error), bool) {
	return l, context.Background(), func(error) {}, true
}
