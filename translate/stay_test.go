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
			s.TrustWalks()
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
// every dialect and at several page sizes: no walk loses a record, and no
// instance trusts its windows: each sees the cursors others handed out.
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
					assert.False(t, st.Stay().Trusted, "instance %d trusts its windows behind round robin", i)
					assert.Zero(t, st.Stats().Served, "instance %d served pages from windows", i)
					assert.Positive(t, st.Stay().Signs, "instance %d saw cursors other instances handed out", i)
				}
			})
		}
	}
}

// TestStayProofOneInstance: on one instance (or behind a sticky
// balancer), the first walk pays at most the proof's pages without
// read-ahead, and every walk after reads ahead as before; a cursor this
// instance did not hand out while the caller walks the list here stands
// read-ahead down, which proves again only after the quiet time.
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
	assert.True(t, s.Stay().Trusted, "a walk proves that walks stay")
	assert.Zero(t, s.Stay().Signs)
	assert.LessOrEqual(t, calls, before+liststore.ProofHits, "the proof costs at most its pages")
	assert.Less(t, calls, 3*300/10, "windows serve once proven")

	// A hand-built cursor inside the list the caller walks: a sign.
	w := &ruleWalker{name: "walk", size: 10}
	w.step(t, e, l)
	w.step(t, e, l)
	w.cursor = fmt.Sprint(parseIDs([]string{w.cursor})[0] + 2000)
	w.step(t, e, l)
	st := s.Stay()
	assert.False(t, st.Trusted, "a cursor this instance did not hand out stands read-ahead down")
	assert.Equal(t, int64(1), st.StoodDown)
	assert.Equal(t, int64(1), st.Signs)

	// Proving again needs the quiet time with no sign, then the hits.
	for range 2 * liststore.ProofHits {
		w.step(t, e, l)
		clock.add(time.Millisecond)
	}
	assert.False(t, s.Stay().Trusted, "no proof within the quiet time after a sign")
	clock.add(liststore.MinQuiet)
	for range liststore.ProofHits + 1 {
		w.step(t, e, l)
	}
	assert.True(t, s.Stay().Trusted, "proven again after the quiet time")
}
