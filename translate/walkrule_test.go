package translate

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The walk rule across walks (liststore/walk.go, chains): whatever windows the
// same caller's earlier or concurrent walks left, every record that
// existed for the whole of a walk reaches it, with the bytes it had.

// ruleWalker is one walk by cursor of a memList with records, by one
// caller, checked against the records that lived through it.
type ruleWalker struct {
	name   string
	list   string // the caller's list identity; "caller" when empty
	size   int
	fresh  func(page int) bool // pages asked with Cache-Control: no-cache
	cursor string
	pages  int
	done   bool
	begin  map[int64]string // every record when the walk began
	served map[int64]string
	last   int64
}

// step asks for the walk's next page.
func (w *ruleWalker) step(t *testing.T, e *Engine, l *memList) {
	t.Helper()
	if w.begin == nil {
		l.mu.Lock()
		w.begin = l.records()
		l.mu.Unlock()
		w.served = map[int64]string{}
	}
	fresh := w.fresh != nil && w.fresh(w.pages)
	list := cmp.Or(w.list, "caller")
	pg, err := e.Page(context.Background(), l, Request{List: list, After: w.cursor, Size: w.size, Fresh: fresh})
	require.NoError(t, err)
	w.pages++
	require.Len(t, pg.Records, len(pg.IDs))
	for i, id := range parseIDs(pg.IDs) {
		require.Greater(t, id, w.last, "%s: ids ascend", w.name)
		w.last = id
		w.served[id] = string(pg.Records[i])
	}
	if !pg.More {
		w.done = true
		return
	}
	require.Len(t, pg.IDs, w.size)
	w.cursor = pg.IDs[len(pg.IDs)-1]
}

// check reports the records that lived through the walk (the same record,
// not only the same id, when it began and when it ended) and did not
// reach it as they were.
func (w *ruleWalker) check(t *testing.T, l *memList) (lost int) {
	t.Helper()
	l.mu.Lock()
	end := l.records()
	l.mu.Unlock()
	for id, rec := range w.begin {
		if end[id] != rec {
			continue // deleted, or deleted and inserted again, during the walk
		}
		if w.served[id] != rec {
			if lost == 0 {
				t.Errorf("%s: record %s lived through the walk and was served as %q", w.name, rec, w.served[id])
			}
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("%s: %d records lost in %d pages", w.name, lost, w.pages)
	}
	return lost
}

// ruleList is a list of n records with records, churning before every
// backend call: inserts anywhere in the id range (deleted ids come back
// as new records) and one delete.
func ruleList(seed uint64, n, inserts int, dialect string) *memList {
	l := newMemList(evenIDs(n)).withRecords()
	l.offsets = dialect == "offsets"
	r := rand.New(rand.NewPCG(seed, 29))
	l.before = func(l *memList) {
		for range inserts {
			l.insert(int64(10 + r.IntN(n+n/4)*10 - 5*r.IntN(2)))
		}
		l.remove(l.ids[r.IntN(len(l.ids))])
	}
	return l
}

// ruleEngine is the gateway's engine with read-ahead on, its clock moved
// by hand, for the dialect.
func ruleEngine(dialect string, clock *fakeClock) *Engine {
	e := readaheadEngine(dialect == "offsets")
	if dialect == "keyset" {
		e = keysetEngine(true)
	}
	return clock.engine(e)
}

// runWalks steps every walker in turn, the clock moved by tick and the
// list churned once a page,
// until all are done; start[i] is how many turns walker i waits.
func runWalks(t *testing.T, e *Engine, l *memList, clock *fakeClock, tick time.Duration, ws []*ruleWalker, start []int) {
	t.Helper()
	for turn := 0; ; turn++ {
		active := false
		for i, w := range ws {
			if w.done || turn < start[i] {
				active = active || !w.done
				continue
			}
			active = true
			w.step(t, e, l)
			clock.add(tick)
			l.mu.Lock()
			l.before(l) // records change with time, not only with calls
			l.mu.Unlock()
		}
		if !active {
			return
		}
		require.Less(t, turn, 1_000_000)
	}
}

var ruleDialects = []string{"pages", "offsets", "keyset"}

// TestWalkRuleBackToBack: one caller walks a list again as soon as its
// last walk ends (a sync job on a short schedule), under churn, in every
// dialect and at page sizes from 1 to the backend's limit: no walk is cut
// from the windows its predecessor read, and none loses a record.
func TestWalkRuleBackToBack(t *testing.T) {
	for _, size := range []int{1, 7, 100, 250, 1000} {
		for _, dialect := range ruleDialects {
			t.Run(fmt.Sprintf("%s by %d", dialect, size), func(t *testing.T) {
				n := max(2500, 6*size)
				if size == 1 {
					n = 600
				}
				clock := newFakeClock()
				l := ruleList(uint64(size), n, 4, dialect)
				e := ruleEngine(dialect, clock)
				for walk := range 6 {
					w := &ruleWalker{name: fmt.Sprintf("walk %d", walk), size: size}
					runWalks(t, e, l, clock, 200*time.Microsecond, []*ruleWalker{w}, []int{0})
					w.check(t, l)
				}
			})
		}
	}
}

// TestWalkRuleInterleaved: walks by one caller that start while another
// is mid-list, at other page sizes, each keep the rule.
func TestWalkRuleInterleaved(t *testing.T) {
	for _, dialect := range ruleDialects {
		t.Run(dialect, func(t *testing.T) {
			clock := newFakeClock()
			l := ruleList(3, 3000, 2, dialect)
			e := ruleEngine(dialect, clock)
			ws := []*ruleWalker{
				{name: "by 10", size: 10}, {name: "by 25", size: 25},
				{name: "by 10, later", size: 10}, {name: "by 60", size: 60},
			}
			runWalks(t, e, l, clock, time.Millisecond, ws, []int{0, 20, 60, 90})
			for _, w := range ws {
				w.check(t, l)
			}
		})
	}
}

// TestWalkRuleAlternating: a walk whose pages alternate between window
// cuts and backend calls (Fresh on every other page), after a walk that
// left windows, keeps the rule.
func TestWalkRuleAlternating(t *testing.T) {
	for _, dialect := range ruleDialects {
		for _, tc := range []struct{ size, parity int }{{1, 0}, {1, 1}, {7, 0}, {7, 1}, {100, 0}, {100, 1}, {250, 0}, {250, 1}} {
			size := tc.size
			t.Run(fmt.Sprintf("%s by %d fresh %d", dialect, size, tc.parity), func(t *testing.T) {
				clock := newFakeClock()
				l := ruleList(5, max(600, 10*size), 4, dialect)
				e := ruleEngine(dialect, clock)
				first := &ruleWalker{name: "first", size: size}
				runWalks(t, e, l, clock, 200*time.Microsecond, []*ruleWalker{first}, []int{0})
				first.check(t, l)
				alt := &ruleWalker{name: "alternating", size: size, fresh: func(p int) bool { return p%2 == tc.parity }}
				runWalks(t, e, l, clock, 200*time.Microsecond, []*ruleWalker{alt}, []int{0})
				alt.check(t, l)
			})
		}
	}
}

// TestWalkRuleResumed: a walk resumed from a stored cursor is served
// from answers no older than the page that gave the cursor, and only
// while that is the cursor's first return within its lease
// (liststore/stay.go): a cursor continued before (a retry, a replay), one
// back after its lease, one no page ended at, or one past the TTL is read
// from the backend.
func TestWalkRuleResumed(t *testing.T) {
	clock := newFakeClock()
	l := newMemList(evenIDs(1000)).withRecords()
	e := ruleEngine("pages", clock)
	w := &ruleWalker{name: "walk", size: 10}
	for range 4 {
		w.step(t, e, l)
		clock.add(time.Millisecond)
	}
	stored := w.cursor // 400: a window holds the pages after it
	w.step(t, e, l)
	late := w.cursor

	for _, tc := range []struct {
		name   string
		after  string
		wait   time.Duration
		stored bool
	}{
		{"the stored cursor, back within its lease", late, 10 * time.Millisecond, true},
		{"the stored cursor again: reused", late, 0, false},
		{"a cursor continued before", stored, 0, false},
		{"a cursor no page ended at", "405", 0, false},
	} {
		clock.add(tc.wait)
		pg, err := e.Page(context.Background(), l, Request{List: "caller", After: tc.after, Size: 10})
		require.NoError(t, err)
		assert.Equal(t, tc.stored, pg.Stored != nil, tc.name)
	}
	for _, tc := range []struct {
		name string
		wait time.Duration
	}{
		{"a cursor back after its lease", time.Second},
		{"a cursor back past the TTL", 2 * time.Second},
	} {
		w.step(t, e, l)
		clock.add(tc.wait)
		pg, err := e.Page(context.Background(), l, Request{List: "caller", After: w.cursor, Size: 10})
		require.NoError(t, err)
		assert.Nil(t, pg.Stored, tc.name)
	}
}
