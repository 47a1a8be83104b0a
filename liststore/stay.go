package liststore

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/helpdesk-gateway/gateway/liststore/internal/trust"
)

// Proving that walks stay. The walk rule (walk.go) needs the store to see
// every page of a walk: a cursor is trusted to continue the walk whose
// chain entry it finds. An instance that keeps its walks to itself
// (Memory) cannot see a walk go on on another instance, so behind a
// balancer that spreads one caller's pages over instances (round_robin,
// least_conn, random: most ingress controllers) a cursor may find this
// instance's entry of an earlier walk (one whose page boundaries
// coincide), and a page be cut from a window read before the walk that
// asks for it began: a record that existed for the whole walk, inserted
// before it and after that window, is lost.
//
// So, as an operating system detects a sequential stream before it reads
// ahead, and keeps that state per stream, a list's windows serve only
// once its own walks were seen to stay here, and the list stands down at
// its own walks' sign that they do not. Everything below is per list
// identity (one caller's view of one list): what one caller sends costs
// that caller at most, never another.
//
//   - A hit is a client's cursor that continues a walk this instance
//     served: a live chain entry.
//   - A sign is a walk's own cursor continued elsewhere: a cursor that
//     lands inside one of the list's windows, at most signPages pages
//     past the furthest page served from it (its reach), when no page
//     this instance served since the window was read (or just before it,
//     Walk.inFlight) ended there. The walk that was served the
//     window's pages up to its reach went on, on another instance, past
//     records this instance holds. A cursor this instance did not hand
//     out is no sign by itself: a parallel export's workers start from
//     hand-built cursors, a job replays an earlier walk's cursors, and
//     the README's example builds one by hand.
//   - A list's windows serve once one of its walks continued ProofHits
//     pages in a row here, each with a cursor handed out for it and back
//     within its lease (Walk.Run); a page that begins a walk here (no
//     cursor, or one with no live entry) starts every run again. Until
//     then its walks read their windows ahead as usual, so that a sign
//     can show, and none serves. At a sign the list stands down (no
//     window serves it) for the quiet time, then proves again.
//   - Whatever the proof, a cursor is cold (one backend call, with the
//     walk's read-ahead: its answer is the walk's next window) when it
//     was handed out fewer times here than it came back (reused: a retry,
//     a replay, or another walk with the same page boundaries), or comes
//     back later than its walk's pace allows (late: the Lease), since
//     either may be another walk of the same caller served elsewhere up
//     to that cursor.
//
// docs/stay.md lists every arrival sequence that could serve a page from
// a window read before its walk began, and what excludes or shows it.

// ProofHits is how many pages in a row one of a list's walks must
// continue here before the list's windows serve: a caller's first walk
// here pays that many pages without read-ahead. Behind a balancer that
// picks an instance at random among three, such a run comes about once
// in 3^4 pages of a walk, each window it reads a chance for a sign; a
// walk split across instances, whose cursors come back here once a walk,
// never runs it (each walk's first page, or cold cursor, here starts
// runs again).
const ProofHits = 4

// signPages is how far past a window's reach, in pages, a cursor is a
// sign: a walk that went on elsewhere comes back within a few of its
// pages (as many as the instances it went through), where a parallel
// export's workers walk their own parts of the list, further apart.
const signPages = 8

// MinQuiet is the least time a list waits after a sign before it proves
// again; a list waits at least two TTLs, so that no window read before
// a sign outlives the wait.
const MinQuiet = time.Minute

// Stay is what a store has seen of whether its callers' walks stay on it,
// summed over its lists: the admin endpoint's readahead.walks and the
// metrics show it. It names kinds of cursors, never a caller.
type Stay struct {
	// Proven counts the lists whose windows serve now: their walks were
	// seen to stay. StandingDown counts the lists that saw a sign within
	// their quiet time: their pages are read as with read-ahead off.
	Proven       int `json:"lists_proven"`
	StandingDown int `json:"lists_standing_down"`
	// Hits counts cursors that continued a walk served here.
	Hits int64 `json:"continued"`
	// Signs counts the signs that a list's walks go on elsewhere, by
	// kind: a cursor this instance handed out, for a page served before
	// the window (ContinuedElsewhere), or one it never handed out, built
	// by hand or by another instance (NotIssuedHere).
	Signs StaySigns `json:"signs"`
	// Reused and Late count cursors read cold although they continue a
	// walk served here: handed out fewer times than they came back, or
	// back later than the walk's pace allows (Lease).
	Reused int64 `json:"reused"`
	Late   int64 `json:"late"`
	// StoodDown counts the signs that stood a list down: the first of
	// each quiet time. The metric helpdesk_gateway_readahead_stood_down_total
	// counts the same.
	StoodDown int64 `json:"stood_down"`
	// LastSign is when the last sign was seen; zero before any.
	LastSign time.Time `json:"last_sign,omitzero"`
}

// StaySigns counts signs by kind.
type StaySigns struct {
	ContinuedElsewhere int64 `json:"continued_elsewhere"`
	NotIssuedHere      int64 `json:"not_issued_here"`
}

// SignKind is a kind of sign that a list's walks go on elsewhere.
type SignKind int

// The kinds of sign (see Stay.Signs).
const (
	NoSign SignKind = iota
	ContinuedElsewhere
	NotIssuedHere
)

// String names the kind as the metrics' label does.
func (k SignKind) String() string {
	switch k {
	case ContinuedElsewhere:
		return "continued_elsewhere"
	case NotIssuedHere:
		return "not_issued_here"
	}
	return "none"
}

// proof is one list's proof that its walks stay here. Guarded by the
// store's mutex.
type proof struct {
	trusted  bool      // windows serve
	lastSign time.Time // zero: none seen
}

// stays is what a store counts of its lists' proofs.
type stays struct {
	quiet    time.Duration
	trustNew bool // trustWalks: lists start proven

	hits, continuedElsewhere, notIssuedHere, reused, late, stoodDown atomic.Int64

	mu       sync.Mutex
	lastSign time.Time
	// onSign, when set, is told each sign, and whether it stood its list
	// down; called with the store's lock held.
	onSign func(kind SignKind, stoodDown bool)
}

// quieting reports whether p is within its quiet time at now.
func (p *proof) quieting(now time.Time, quiet time.Duration) bool {
	return !p.lastSign.IsZero() && now.Sub(p.lastSign) < quiet
}

// hit records on the list a cursor handed out here for the walk it
// continues, back within its lease, the run-th of its walk in a row: once
// a walk of the list ran ProofHits pages here so, with no sign within the
// quiet time, the list's windows serve. The caller holds the store's
// mutex.
func (s *stays) hit(p *proof, run int, now time.Time) {
	if !p.trusted && run >= ProofHits && !p.quieting(now, s.quiet) {
		p.trusted = true
	}
}

// sign records a sign of kind on the list at now: it stands down, and
// proves again after the quiet time. The caller holds the store's mutex.
func (s *stays) sign(p *proof, kind SignKind, now time.Time) {
	if kind == ContinuedElsewhere {
		s.continuedElsewhere.Add(1)
	} else {
		s.notIssuedHere.Add(1)
	}
	down := !p.quieting(now, s.quiet)
	if down {
		s.stoodDown.Add(1)
	}
	p.trusted, p.lastSign = false, now
	s.mu.Lock()
	s.lastSign = now
	s.mu.Unlock()
	if s.onSign != nil {
		s.onSign(kind, down)
	}
}

// Lease is how long after its page a chain entry's cursor can come back
// and still be cut from a window: eight of the walk's pages at the pace
// it has shown, at least MinLease, at most the TTL. A cursor that comes
// back later is read cold (one call, whose answer is the walk's next
// window): another walk of the same caller, served elsewhere up to the
// same cursor, may be what brings it. A walker that pauses longer than
// that pays one call for the pause.
func (w *Walk) Lease(size int, ttl time.Duration) time.Duration {
	lease := MinLease
	if w.Rate > 0 {
		lease = max(lease, time.Duration(8*float64(size)/w.Rate*float64(time.Second)))
	}
	return min(lease, ttl)
}

// inFlight is how long before a window was read a cursor this walk was
// handed can have been on its way back: two of its pages at the pace it
// has shown, at most maxInFlight. A walk of the same caller walking a
// page or two ahead of the one that read the window sends such a cursor;
// one handed out longer ago and continued elsewhere since is a sign.
func (w *Walk) inFlight(size int) time.Duration {
	if w.Rate <= 0 {
		return 0
	}
	return min(time.Duration(2*float64(size)/w.Rate*float64(time.Second)), maxInFlight)
}

// maxInFlight bounds inFlight: a walk that went elsewhere and came back
// inside a window read less than this after its cursor was handed out is
// not told from one a page ahead (docs/stay.md, sequence 5).
const maxInFlight = 50 * time.Millisecond

// MinLease is the least Lease: longer than a page's call and a client's
// turn around on a loaded machine, shorter than the walk of a few dozen
// pages elsewhere that a cursor coming back later may have had.
const MinLease = 200 * time.Millisecond

// Stay returns what the store has seen of whether walks stay on it: its
// counters (StayCounters) and how many of its lists are proven and
// standing down now, which takes a look at each list under the store's
// lock.
func (s *Memory[S]) Stay() Stay {
	st := s.StayCounters()
	if s == nil {
		return st
	}
	s.mu.Lock()
	now := s.seen
	for _, l := range s.lists {
		switch {
		case l.proof.quieting(now, s.stays.quiet):
			st.StandingDown++
		case l.proof.trusted:
			st.Proven++
		}
	}
	s.mu.Unlock()
	return st
}

// StayCounters is Stay without the lists' counts (Proven and
// StandingDown left 0): its counters only, read without the store's
// lock, for a metrics scrape.
func (s *Memory[S]) StayCounters() Stay {
	if s == nil {
		return Stay{}
	}
	st := Stay{
		Hits:      s.stays.hits.Load(),
		Signs:     StaySigns{s.stays.continuedElsewhere.Load(), s.stays.notIssuedHere.Load()},
		Reused:    s.stays.reused.Load(),
		Late:      s.stays.late.Load(),
		StoodDown: s.stays.stoodDown.Load(),
	}
	s.stays.mu.Lock()
	st.LastSign = s.stays.lastSign
	s.stays.mu.Unlock()
	return st
}

// OnSign sets f to be told of each sign, and whether it stood its list
// down (the first of a quiet time). f is called with a lock of the
// store's held: it must not call the store. Set it before the first page.
func (s *Memory[S]) OnSign(f func(kind SignKind, stoodDown bool)) { s.stays.onSign = f }

// trustWalks makes the store's lists, those it holds and those it makes
// from now on, start proven, as if their walks had been seen to stay,
// until a sign. Only tests ask for it (liststoretest.TrustWalks): a
// program that did would serve windows to walks it never saw stay.
func (s *Memory[S]) trustWalks() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stays.trustNew = true
	for _, l := range s.lists {
		l.proof.trusted = true
	}
}

// truster is a Memory, whatever its type parameter, or a value that
// embeds one.
type truster interface{ trustWalks() }

// The hook liststoretest.TrustWalks reaches trustWalks by.
func init() {
	trust.Walks = func(s any) bool {
		t, ok := s.(truster)
		if ok {
			t.trustWalks()
		}
		return ok
	}
}

// Quiet is how long a list waits after a sign before it proves again.
func (s *Memory[S]) Quiet() time.Duration { return s.stays.quiet }
