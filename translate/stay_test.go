package translate

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/helpdesk-gateway/gateway/liststore"
	"github.com/helpdesk-gateway/gateway/liststore/liststoretest"
)

// Read-ahead with no shared store proves that walks stay on an instance
// before its windows serve (liststore/stay.go): behind a balancer that
// spreads one caller's pages, an instance's window of an earlier walk
// would otherwise serve a later walk the past.

// instances are engines each with a store of its own, as gateway
// instances with the default config (read-ahead on, no readahead_store)
// are, one clock for all; trusted skips the proof, as before it.
func instances(dialect string, clock *fakeClock, n int, trusted bool) []*Engine {
	es := make([]*Engine, n)
	for i := range es {
		e := ruleEngine(dialect, clock)
		s := NewMemoryStore(cursor.Numeric, 2*time.Second, 64<<20)
		if trusted {
			liststoretest.TrustWalks(s)
		}
		e.Lists = s
		es[i] = e
	}
	return es
}

// balancedWalks walks l with walks back-to-back walks of one caller by
// size, each page sent to the instance pick names (by the page's number
// across all walks), the clock moved and the list churned a page, and
// returns the records lost: records that lived through a walk and did
// not reach it.
func balancedWalks(t *testing.T, es []*Engine, pick func(page int) int, l *memList, clock *fakeClock, walks, size int) (lost int) {
	t.Helper()
	page := 0
	for walk := range walks {
		w := &ruleWalker{name: fmt.Sprintf("walk %d", walk), size: size}
		for !w.done {
			w.step(t, es[pick(page)], l)
			page++
			clock.add(300 * time.Microsecond)
			l.mu.Lock()
			l.before(l)
			l.mu.Unlock()
		}
		lost += w.lost(l)
	}
	return lost
}

// lost counts the records that lived through the walk (the same record
// when it began and when it ended) and did not reach it as they were.
func (w *ruleWalker) lost(l *memList) (lost int) {
	l.mu.Lock()
	end := l.records()
	l.mu.Unlock()
	for id, rec := range w.begin {
		if end[id] == rec && w.served[id] != rec {
			lost++
		}
	}
	return lost
}

// lightChurn is ruleList with one insert and one delete every 8th call
// or page: light enough that back-to-back walks' pages mostly end at the
// same ids, as a list of thousands with a few changes a second does.
func lightChurn(seed uint64, n int, dialect string) *memList {
	l := ruleList(seed, n, 1, dialect)
	churn, k := l.before, 0
	l.before = func(l *memList) {
		if k++; k%8 == 0 {
			churn(l)
		}
	}
	return l
}

// TestStayProofWalkSplit: the case the proof is for, step by step. A
// walk's second page is served by instance A, which reads a window
// after it; the walk ends on B. A record is inserted inside that window.
// The caller's next walk begins on B, and its third page goes to A with
// the cursor A's own page of the earlier walk ended at: trusting its
// windows, A cuts the page from the window read before this walk began,
// and the record, which lived through the whole walk, is lost. With the
// proof, A has not seen walks stay on it, and reads the page.
func TestStayProofWalkSplit(t *testing.T) {
	for _, dialect := range ruleDialects {
		for _, trusted := range []bool{false, true} {
			clock := newFakeClock()
			l := newMemList(evenIDs(400)).withRecords()
			l.offsets = dialect == "offsets"
			es := instances(dialect, clock, 2, trusted)
			a, b := es[0], es[1]
			step := func(w *ruleWalker, e *Engine) { w.step(t, e, l); clock.add(300 * time.Microsecond) }
			w1 := &ruleWalker{name: "walk 1", size: 10}
			step(w1, a)
			step(w1, a) // the cursor continues a walk A served: a window is read
			for !w1.done {
				step(w1, b)
			}
			clock.add(time.Millisecond)
			l.insert(255) // inside the window A read, after its read
			w2 := &ruleWalker{name: "walk 2", size: 10}
			step(w2, b)
			step(w2, b)
			step(w2, a) // after 200, where A's page of walk 1 ended
			for !w2.done {
				step(w2, b)
			}
			if trusted {
				assert.Equal(t, 1, w2.lost(l), "%s: trusting windows as before the proof, the record inserted before walk 2 is lost", dialect)
				continue
			}
			assert.Zero(t, w2.lost(l), "%s: records that lived through walk 2 and did not reach it", dialect)
			assert.Zero(t, a.Lists.(*MemoryStore).Stats().Served, "%s: A served pages from windows before it proved walks stay", dialect)
		}
	}
}

// TestStayProofBehindRoundRobin: three instances with the default config
// behind round robin, back-to-back walks of one caller under churn, in
// every dialect and at several page sizes: no walk loses a record, and
// the caller's list stands down on the instances at its walks' own signs
// (a walk that came back to an instance inside a window read for it,
// past the page it was served there).
func TestStayProofBehindRoundRobin(t *testing.T) {
	for _, dialect := range ruleDialects {
		for _, size := range []int{7, 10, 100, 250} {
			t.Run(fmt.Sprintf("%s by %d", dialect, size), func(t *testing.T) {
				n := max(1500, 8*size)
				// Round robin as a walker sees it among others: its pages
				// go to the next instance, or skip one the others took.
				r := rand.New(rand.NewPCG(uint64(size), 41))
				roundRobin := func(page int) int { return (page + r.IntN(2)) % 3 }
				clock := newFakeClock()
				es := instances(dialect, clock, 3, false)
				lost := balancedWalks(t, es, roundRobin, lightChurn(uint64(size), n, dialect), clock, 6, size)
				assert.Zero(t, lost, "records that lived through a walk and did not reach it")
				for i, e := range es {
					st := e.Lists.(*MemoryStore)
					t.Logf("instance %d: %+v, %d pages from windows", i, st.Stay(), st.Stats().Served)
					assert.Zero(t, st.Stay().Proven, "instance %d: no walk of the caller ran its proof here", i)
				}
			})
		}
	}
}

// TestStayWalkSplitAcrossWalks: two instances in strict alternation, one
// caller walking a list of an odd number of pages back to back, records
// renewed (a new version under the same id) between walks: each walk's
// cursors come to the instance that handed them out in the walk before.
// Each instance sees every other walk's first page, across which no run
// of hits counts, so no walk runs the proof and no window serves. Proven
// all the same (TrustWalks: a list proven before the balancer changed),
// a walk that reads a window comes back inside it a page later, past the
// page it was served there, with a cursor handed out a walk before: a
// sign, before a later walk can bring the window's cursor back. Every
// walk gets every record as it was when it began.
func TestStayWalkSplitAcrossWalks(t *testing.T) {
	for _, dialect := range ruleDialects {
		for _, proven := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s proven %v", dialect, proven), func(t *testing.T) {
				clock := newFakeClock()
				l := newMemList(evenIDs(990)).withRecords()
				l.offsets = dialect == "offsets"
				es := instances(dialect, clock, 2, proven)
				page := 0
				for walk := range 12 {
					w := &ruleWalker{name: fmt.Sprintf("walk %d", walk+1), size: 10}
					for !w.done {
						w.step(t, es[page%2], l)
						page++
						clock.add(time.Millisecond) // a page through a balancer
					}
					assert.Zero(t, w.check(t, l), "walk %d", walk+1)
					l.mu.Lock()
					for _, id := range l.ids[walk%7:] {
						if id%70 == 0 {
							l.remove(id)
							l.insert(id) // renewed: a new version under the same id
						}
					}
					l.mu.Unlock()
				}
				for i, e := range es {
					st := e.Lists.(*MemoryStore).Stay()
					t.Logf("instance %d: %+v", i, st)
					if proven {
						assert.Positive(t, st.Signs.ContinuedElsewhere, "instance %d: walks came back inside windows read for them", i)
					} else {
						assert.Zero(t, st.Proven, "instance %d: runs of hits start again at each walk's first page here", i)
					}
				}
			})
		}
	}
}

// TestStayBalancerMoves: a hashing balancer whose upstream set changes:
// one caller's walks stay on A, which proves them, until the set changes
// and the caller's pages go to B; the next walk begins on B and comes
// back to A when the set changes back, with a cursor A handed out in the
// walk before. A cursor whose page A served the walk before with more
// after it came back and was continued (spent), or that comes back later
// than its walk's lease, is read cold: no record the later walk lived
// through is lost. Within the lease, the cursor A's walk left at is the
// one sequence not excluded (docs/internals.md).
func TestStayBalancerMoves(t *testing.T) {
	for _, tc := range []struct {
		name string
		back int           // the later walk comes back to A after this page
		wait time.Duration // between the first walk leaving A and the second's first page
		lost bool
	}{
		{name: "a cursor continued on A before: reused", back: 10},
		{name: "the cursor the walk left A at, after its lease: late", back: 30, wait: liststore.MinLease},
		{name: "the cursor the walk left A at, within its lease", back: 30, lost: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock()
			l := newMemList(evenIDs(600)).withRecords()
			es := instances("pages", clock, 2, false)
			a, b := es[0], es[1]
			step := func(w *ruleWalker, e *Engine) { w.step(t, e, l); clock.add(300 * time.Microsecond) }
			w1 := &ruleWalker{name: "walk 1", size: 10}
			for w1.pages < 30 {
				step(w1, a) // proven on A: its windows serve from the ninth page
			}
			require.Positive(t, a.Lists.(*MemoryStore).Stay().Proven)
			for !w1.done {
				step(w1, b) // the set changed: the rest of the walk on B
			}
			clock.add(tc.wait)
			l.mu.Lock()
			for _, id := range l.ids[300:400] {
				l.remove(id)
				l.insert(id) // renewed before walk 2 begins, inside A's windows
			}
			l.mu.Unlock()
			w2 := &ruleWalker{name: "walk 2", size: 10}
			for w2.pages < tc.back {
				step(w2, b)
			}
			for !w2.done {
				step(w2, a) // the set changed back
			}
			lost := w2.lost(l)
			if tc.lost {
				assert.Positive(t, lost, "the sequence docs/internals.md names as not excluded")
				return
			}
			assert.Zero(t, lost)
			st := a.Lists.(*MemoryStore).Stay()
			assert.Positive(t, st.Reused+st.Late, "the cursor was read cold")
		})
	}
}

// stepCounting steps w on e and returns the backend calls it made.
func stepCounting(t *testing.T, w *ruleWalker, e *Engine, l *memList) int {
	t.Helper()
	before, _ := l.counts()
	w.step(t, e, l)
	after, _ := l.counts()
	return after - before
}

// TestStayPerCaller: on one instance (as behind a sticky balancer), what
// one caller sends costs that caller at most. Bob's walk costs the same
// whatever alice does before it: hand-built cursors, a parallel export,
// replayed and retried cursors, dropped walks, a walk that went on at
// another instance (a sign on her list, not his). Every walk is exact.
func TestStayPerCaller(t *testing.T) {
	bobWalk := func(e *Engine, l *memList, clock *fakeClock) (calls, pages int) {
		w := &ruleWalker{name: "bob", list: "bob", size: 10}
		for !w.done {
			calls += stepCounting(t, w, e, l)
			clock.add(300 * time.Microsecond)
		}
		assert.Zero(t, w.check(t, l))
		return calls, w.pages
	}
	run := func(alice func(e, other *Engine, l *memList, clock *fakeClock)) (calls, pages int, st liststore.Stay) {
		clock := newFakeClock()
		l := newMemList(evenIDs(4000)).withRecords()
		es := instances("pages", clock, 2, false)
		if alice != nil {
			alice(es[0], es[1], l, clock)
		}
		calls, pages = bobWalk(es[0], l, clock)
		return calls, pages, es[0].Lists.(*MemoryStore).Stay()
	}
	quiet, pages, _ := run(nil)
	t.Logf("bob alone: %d calls for %d pages", quiet, pages)
	walkFrom := func(e *Engine, l *memList, clock *fakeClock, cursor string, n int) *ruleWalker {
		w := &ruleWalker{name: "alice from " + cursor, list: "alice", size: 10, cursor: cursor}
		for !w.done && w.pages < n {
			w.step(t, e, l)
			clock.add(300 * time.Microsecond)
		}
		return w
	}
	for _, tc := range []struct {
		name  string
		alice func(e, other *Engine, l *memList, clock *fakeClock)
	}{
		{"hand-built cursors", func(e, _ *Engine, l *memList, clock *fakeClock) {
			for i := range 20 {
				walkFrom(e, l, clock, fmt.Sprint(10*(i*97%400+1)), 3)
			}
		}},
		{"a parallel export", func(e, _ *Engine, l *memList, clock *fakeClock) {
			ws := make([]*ruleWalker, 8)
			for i := range ws {
				ws[i] = &ruleWalker{name: fmt.Sprint("worker ", i), list: "alice", size: 10, cursor: fmt.Sprint(i * 5000)}
			}
			for range 60 {
				for _, w := range ws {
					if w.done {
						continue
					}
					w.step(t, e, l)
					clock.add(300 * time.Microsecond)
				}
			}
		}},
		{"replayed and retried cursors", func(e, _ *Engine, l *memList, clock *fakeClock) {
			w := &ruleWalker{name: "recorder", list: "alice", size: 10}
			var cursors []string
			for range 40 {
				before := w.cursor
				w.step(t, e, l)
				walkFrom(e, l, clock, before, 1) // the same page again: a retry
				cursors = append(cursors, w.cursor)
			}
			for _, c := range cursors {
				walkFrom(e, l, clock, c, 1) // a job replays the walk's cursors
			}
		}},
		{"dropped walks", func(e, _ *Engine, l *memList, clock *fakeClock) {
			for range 10 {
				walkFrom(e, l, clock, "", 12)
			}
		}},
		{"a walk that goes on at another instance", func(e, other *Engine, l *memList, clock *fakeClock) {
			w := &ruleWalker{name: "alice", list: "alice", size: 10}
			for i := 0; !w.done && i < 200; i++ {
				w.step(t, []*Engine{e, other}[i/2%2], l)
				clock.add(300 * time.Microsecond)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls, pages, st := run(tc.alice)
			t.Logf("bob after alice: %d calls for %d pages; alice's signs %+v, stood down %d", calls, pages, st.Signs, st.StoodDown)
			assert.Equal(t, quiet, calls, "what alice sent changed what bob's walk cost")
		})
	}
}

// TestStayParallelExport: a job of 8 workers of one caller, each starting
// from a hand-built cursor at its eighth of the list and following
// next_page_cursor to the next eighth, on one instance from its first
// minute: every worker's walk is exact, and past each worker's first
// page (which finds a hand-built cursor's place in the list) the job
// costs at most 0.05 backend calls a page.
func TestStayParallelExport(t *testing.T) {
	for _, dialect := range ruleDialects {
		t.Run(dialect, func(t *testing.T) {
			clock := newFakeClock()
			l := ruleList(7, 20000, 1, dialect)
			churn, k := l.before, 0
			l.before = func(l *memList) {
				if k++; k%200 == 0 {
					churn(l)
				}
			}
			e := instances(dialect, clock, 1, false)[0]
			const eighth = 25000 // ids are 10 to 200,000
			ws := make([]*ruleWalker, 8)
			for i := range ws {
				ws[i] = &ruleWalker{name: fmt.Sprint("worker ", i), size: 10}
				if i > 0 {
					ws[i].cursor = fmt.Sprint(i * eighth)
				}
			}
			pages, calls := 0, 0
			for active := true; active; {
				active = false
				for i, w := range ws {
					if w.done || w.last >= int64(i+1)*eighth {
						continue
					}
					active = true
					n := stepCounting(t, w, e, l)
					if w.pages > 1 {
						pages, calls = pages+1, calls+n
					}
					clock.add(100 * time.Microsecond)
					l.mu.Lock()
					l.before(l)
					l.mu.Unlock()
				}
			}
			l.mu.Lock()
			now := l.records()
			l.mu.Unlock()
			for i, w := range ws {
				lost := 0
				for id, rec := range w.begin {
					if id > int64(i*eighth) && id <= w.last && now[id] == rec && w.served[id] != rec {
						lost++
					}
				}
				assert.Zero(t, lost, "worker %d", i)
			}
			t.Logf("%d calls for %d pages past the workers' first: %.3f a page; %+v", calls, pages, float64(calls)/float64(pages), e.Lists.(*MemoryStore).Stay())
			assert.LessOrEqual(t, float64(calls)/float64(pages), 0.05)
			assert.Zero(t, e.Lists.(*MemoryStore).Stay().StoodDown, "hand-built cursors are no sign")
		})
	}
}

// TestStayProofOneInstance: on one instance (or behind a sticky
// balancer), a caller's first walk pays at most the proof's pages
// without read-ahead, and every walk after reads ahead as before. A
// hand-built cursor is no sign; one that lands inside a window past the
// page served from it is, and stands that caller's list down for the
// quiet time, after which it proves again.
func TestStayProofOneInstance(t *testing.T) {
	one := func(int) int { return 0 }
	cost := func(trusted bool) (calls int, e *Engine, l *memList, clock *fakeClock) {
		clock = newFakeClock()
		l = ruleList(3, 3000, 2, "pages")
		e = instances("pages", clock, 1, trusted)[0]
		require.Zero(t, balancedWalks(t, []*Engine{e}, one, l, clock, 3, 10))
		calls, _ = l.counts()
		return calls, e, l, clock
	}
	before, _, _, _ := cost(true)
	calls, e, l, clock := cost(false)
	s := e.Lists.(*MemoryStore)
	t.Logf("three walks of 300 pages: %d calls, %d with windows trusted from the start", calls, before)
	assert.Equal(t, 1, s.Stay().Proven, "a walk proves that its caller's walks stay")
	assert.Zero(t, s.Stay().StoodDown)
	assert.LessOrEqual(t, calls, before+liststore.ProofHits, "the proof costs at most its pages")
	assert.Less(t, calls, 3*300/10, "windows serve once proven")

	// A hand-built cursor far from the walk's windows: no sign.
	w := &ruleWalker{name: "walk", size: 10}
	step := func() { w.step(t, e, l); clock.add(300 * time.Microsecond) }
	step()
	step()
	w.cursor = fmt.Sprint(parseIDs([]string{w.cursor})[0] + 20000)
	step()
	assert.Zero(t, s.Stay().StoodDown, "a hand-built cursor is no sign")

	// One inside a window read for the walk, past the page it served.
	for range 3 {
		step()
	}
	w.cursor = fmt.Sprint(parseIDs([]string{w.cursor})[0] + 25)
	step()
	st := s.Stay()
	assert.Equal(t, int64(1), st.StoodDown)
	assert.Equal(t, int64(1), st.Signs.NotIssuedHere)
	assert.Equal(t, 1, st.StandingDown)

	// Proving again needs the quiet time with no sign, then the hits.
	for range 2 * liststore.ProofHits {
		step()
	}
	assert.Zero(t, s.Stay().Proven, "no proof within the quiet time after a sign")
	clock.add(liststore.MinQuiet)
	for range liststore.ProofHits + 1 {
		step()
	}
	assert.Equal(t, 1, s.Stay().Proven, "proven again after the quiet time")
}
