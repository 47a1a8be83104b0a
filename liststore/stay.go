package liststore

import (
	"sync"
	"sync/atomic"
	"time"
)

// Proving that walks stay. The walk rule (walk.go) needs the store to see
// every page of a walk: a cursor is trusted to continue the walk whose
// chain entry it finds. An instance that keeps its walks to itself
// (Memory) cannot see a walk begin on another instance, so behind a
// balancer that spreads one caller's pages over instances (round_robin,
// least_conn, random: most ingress controllers) a cursor may find this
// instance's entry of an earlier walk, and a page be cut from a window
// read before the walk that asks for it began: a record that existed for
// the whole walk, inserted before it and after that window, is lost.
//
// So, as an operating system detects a sequential stream before it reads
// ahead, such a store cuts from windows only once it has seen its
// callers' walks stay on it, and stands down at the first sign that they
// do not:
//
//   - a hit is a cursor that continues a walk this instance served (a
//     live chain entry);
//   - a sign is a cursor that does not, arriving while the same list
//     identity (the same caller, path and query) has a live chain entry
//     here: the caller is walking this list on this instance, and the
//     page that ended at this cursor was served elsewhere (or the cursor
//     was built by hand, which costs the same caution).
//
// Windows serve, and walks read ahead, only once ProofHits hits were seen
// with no sign since, and no sign in the last Quiet: at a sign the store
// stands down (Cut answers as with read-ahead off: no window, no walk
// continued) and proves again from nothing. Behind round robin a sign
// comes with a walk's second page here, so windows never serve there;
// behind a sticky balancer, or on one instance, the first ProofHits
// pages of the first walks are read as with read-ahead off, and every
// walk after as before. Chain entries are kept all along, since they are
// what hits and signs are told by.

// ProofHits is how many cursors must continue walks this instance served,
// with no sign between, before its windows serve: a single instance's
// first walk pays that many pages without read-ahead. Behind a balancer
// that picks an instance at random among three, a run of that many hits
// before a sign comes about once in 3^8 tries.
const ProofHits = 8

// MinQuiet is the least time a store waits after a sign before it proves
// again; a store waits at least two TTLs, so that no window read before
// a sign outlives the wait.
const MinQuiet = time.Minute

// Stay is what a store has seen of whether walks stay on it.
type Stay struct {
	// Trusted says windows serve: the walks seen stay on this instance.
	Trusted bool `json:"trusted"`
	// Hits counts cursors that continued a walk this instance served;
	// Signs those that did not, while their list was walked here.
	Hits  int64 `json:"continued"`
	Signs int64 `json:"other_instance_cursors"`
	// StoodDown counts the times read-ahead stood down at a sign.
	StoodDown int64 `json:"stood_down"`
	// LastSign is when the last sign was seen; zero before any.
	LastSign time.Time `json:"last_sign,omitzero"`
}

// stay is a store's proof that walks stay on it. Its counters are read
// without the lock; the rest is guarded by mu.
type stay struct {
	quiet time.Duration

	mu       sync.Mutex
	trusted  bool
	run      int       // hits since the last sign, or since start
	lastSign time.Time // zero: none seen

	hits, signs, stoodDown atomic.Int64

	// onChange, when set, is told each sign (sign set) and each proof,
	// with whether windows serve after it; called with mu held.
	onChange func(trusted, sign bool)
}

// admits records a cursor that continues a walk served here at now, and
// reports whether windows serve it. A probe (CutQuery.Probe) is not
// recorded.
func (p *stay) admits(now time.Time, probe bool) bool {
	if !probe {
		p.hits.Add(1)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.trusted || probe {
		return p.trusted
	}
	if !p.lastSign.IsZero() && now.Sub(p.lastSign) < p.quiet {
		return false
	}
	if p.run++; p.run < ProofHits {
		return false
	}
	p.trusted = true
	if p.onChange != nil {
		p.onChange(true, false)
	}
	return true
}

// sign records a cursor that does not continue a walk served here while
// its list is walked here: read-ahead stands down, and proves again
// after the quiet time.
func (p *stay) sign(now time.Time) {
	p.signs.Add(1)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.run, p.lastSign = 0, now
	if p.trusted {
		p.trusted = false
		p.stoodDown.Add(1)
	}
	if p.onChange != nil {
		p.onChange(false, true)
	}
}

// state returns what the proof has seen.
func (p *stay) state() Stay {
	p.mu.Lock()
	st := Stay{Trusted: p.trusted, LastSign: p.lastSign}
	p.mu.Unlock()
	st.Hits, st.Signs, st.StoodDown = p.hits.Load(), p.signs.Load(), p.stoodDown.Load()
	return st
}

// Stay returns what the store has seen of whether walks stay on it.
func (s *Memory[S]) Stay() Stay {
	if s == nil {
		return Stay{}
	}
	return s.stays.state()
}

// OnStay sets f to be told of each sign (sign set; windows then do not
// serve) and of each proof (trusted set). f is called with a lock of the
// store's held: it must not call the store. Set it before the first
// page.
func (s *Memory[S]) OnStay(f func(trusted, sign bool)) { s.stays.onChange = f }

// TrustWalks makes the store trust its windows from now on, as if it had
// proven that walks stay on it, until the next sign: for a program that
// embeds the engine as the only instance, and for tests of what windows
// serve.
func (s *Memory[S]) TrustWalks() {
	s.stays.mu.Lock()
	s.stays.trusted, s.stays.run = true, ProofHits
	s.stays.mu.Unlock()
}

// Quiet is how long the store waits after a sign before it proves again.
func (s *Memory[S]) Quiet() time.Duration { return s.stays.quiet }
