package translate

import (
	"math"
	"strings"
)

// search locates, in an offset-paged list that is sorted by id, the first
// offset whose id is greater than a cursor id: the boundary.
//
// What it knows is a bracket: the boundary lies in (lo, hi], where lo is an
// offset whose id is at or below the cursor (-1: before the start) and hi
// an offset whose id is above it, or an offset at or past the list's end
// (-1: unknown). Bounds come from the index and from fresh answers; when a
// fresh answer contradicts a bound, the bound was stale and is replaced.
type search struct {
	order  Order
	cursor string

	lo, hi     int
	loID, hiID string // ids at lo and hi, "" when the bound is not a seen record
	end        int    // an offset at or past the end of the list; -1 unknown

	step     int  // gallop distance while the end is unknown
	backoff  int  // distance below hi to retry when lo proved stale
	interp   bool // whether the next probe may interpolate
	lastSpan int  // hi - lo before an interpolated probe; 0 after other probes

	// While the end is unknown, numeric ids let the gallop leap to where
	// the density of ids seen so far puts the cursor: base is the
	// lowest-offset record seen, the other end of that density.
	baseOff      int
	baseID       string // "" until a record is seen
	extrap       bool   // whether the gallop may still extrapolate
	extrapolated bool   // the window last planned was an extrapolated leap
}

func newSearch(order Order, cursor string, h hint) *search {
	s := &search{order: order, cursor: cursor, lo: -1, hi: -1, end: h.end, interp: true, extrap: true}
	if h.hasLo {
		s.lo, s.loID = h.lo.off, h.lo.id
		s.baseOff, s.baseID = h.lo.off, h.lo.id
	}
	if h.hasHi && h.hi.off > s.lo {
		s.hi, s.hiID = h.hi.off, h.hi.id
	}
	return s
}

// exact reports whether the record at lo is the cursor record itself.
func (s *search) exact() bool {
	return s.loID != "" && s.order.Compare(s.loID, s.cursor) == 0
}

// upper returns the bracket's upper end, combining hi and the list's end.
func (s *search) upper() int {
	switch {
	case s.hi < 0:
		return s.end
	case s.end >= 0 && s.end < s.hi:
		return s.end
	}
	return s.hi
}

// window plans the next call for a page of need records after the cursor.
// Every window includes an offset where a record at or below the cursor is
// expected, so that an answer proves where the boundary is.
func (s *search) window(need int, plan func(from, to int) Window) Window {
	probe := 2*need + 1
	lo, hi := s.lo, s.upper()
	s.lastSpan = 0
	s.extrapolated = false
	switch {
	case lo >= 0 && (s.exact() || hi == lo+1):
		// The boundary is right after lo: fetch it and the page in one call.
		return plan(lo, lo+1+need)
	case hi < 0:
		// The end is unknown: gallop, doubling the distance at each step.
		if lo < 0 {
			return plan(0, probe)
		}
		from := lo + s.step
		if g, ok := s.extrapolate(); ok && g-need/2-1 > from {
			// Never short of the doubling, so a poor guess costs no
			// more than the gallop it replaces.
			from = g - need/2 - 1
			s.extrapolated = true
		}
		return plan(from, from+probe)
	case hi+need-max(lo, 0) <= probe:
		// One call covers every place the boundary can be, with its page.
		return plan(max(lo, 0), hi+need)
	}
	guess := lo + (hi-lo)/2
	if g, ok := s.interpolate(lo, hi); ok {
		guess = g
		s.lastSpan = hi - lo
	}
	from := min(max(guess-need/2-1, lo, 0), hi+need-probe)
	return plan(from, from+probe)
}

// interpolate guesses the boundary from the numeric ids at the bracket's
// ends, as a reader opens a dictionary near the right letter. It stands down
// for one probe whenever a guess failed to halve the bracket, so that
// uneven ids cost at most about twice a bisection.
func (s *search) interpolate(lo, hi int) (int, bool) {
	if !s.interp || s.loID == "" || s.hiID == "" || hi != s.hi {
		return 0, false
	}
	l, ok1 := s.order.value(s.loID)
	h, ok2 := s.order.value(s.hiID)
	x, ok3 := s.order.value(s.cursor)
	if !ok1 || !ok2 || !ok3 || h <= l {
		return 0, false
	}
	frac := (x - l) / (h - l)
	if frac < 0 || frac >= 1 {
		return 0, false
	}
	return lo + 1 + int(frac*float64(hi-lo-1)), true
}

// maxLeap bounds the offset an extrapolated leap may probe: past it a
// guess says more about an odd cursor id than about the list, and a
// backend should not be asked for absurd offsets.
const maxLeap = math.MaxInt32

// extrapolate guesses the boundary while the list's end is unknown, from
// the density of the ids between base and lo: on evenly spread ids a cold
// cursor then costs a call or two instead of a gallop and a bisection.
func (s *search) extrapolate() (int, bool) {
	if !s.extrap || s.loID == "" || s.baseID == "" || s.lo <= s.baseOff {
		return 0, false
	}
	b, ok1 := s.order.value(s.baseID)
	l, ok2 := s.order.value(s.loID)
	x, ok3 := s.order.value(s.cursor)
	if !ok1 || !ok2 || !ok3 || l <= b || x <= l {
		return 0, false
	}
	g := float64(s.lo) + (x-l)*float64(s.lo-s.baseOff)/(l-b)
	if g > maxLeap {
		return maxLeap, true
	}
	return int(g), true
}

// observe narrows the bracket with an answer that did not settle the
// boundary: ids, at offsets from start, are all at or below the cursor
// (below == len(ids)), or all above it (below == 0), or there are none.
// It reports whether the answer contradicted a bound, that is, whether a
// hint or an earlier answer had gone stale. The ids it keeps are copies:
// the answer may be released as soon as it returns.
func (s *search) observe(start int, ids []string, below int, short bool) (stale bool) {
	if len(ids) > 0 && (s.baseID == "" || start < s.baseOff) {
		s.baseOff, s.baseID = start, strings.Clone(ids[0])
	}
	switch {
	case len(ids) == 0 && s.extrapolated:
		// A leap past the end bounds the list only loosely, and a loose
		// end would make the bisection after it long: forget it, stop
		// leaping, and gallop on.
		s.extrap = false
		return false
	case len(ids) == 0:
		// Past the end: the list has at most start records.
		if s.end < 0 || start < s.end {
			s.end = start
		}
		if s.hi >= start {
			s.hi, s.hiID = -1, ""
		}
		if s.lo >= start {
			stale = true
			s.dropLo(start)
		}
	case below == 0:
		s.hi, s.hiID = start, strings.Clone(ids[0])
		if s.lo >= start {
			stale = true
			s.dropLo(start)
		}
	default: // all at or below the cursor, and the answer was full
		last := start + len(ids) - 1
		s.lo, s.loID = last, strings.Clone(ids[len(ids)-1])
		s.step = max(2*s.step, 2*len(ids))
		if s.hi >= 0 && s.hi <= last {
			stale = true
			s.hi, s.hiID = -1, ""
		}
		if s.end >= 0 && s.end <= last {
			s.end = -1
		}
	}
	if s.lastSpan > 0 {
		s.interp = 2*(s.upper()-s.lo) <= s.lastSpan
	} else {
		s.interp = true
	}
	return stale
}

// dropLo replaces a lower bound that proved stale by a guess below hi,
// twice as far each time, so a relocation costs a logarithm of how far the
// records moved rather than a search from the start.
func (s *search) dropLo(hi int) {
	s.backoff = max(2*s.backoff, 16)
	s.lo, s.loID = max(hi-s.backoff, -1), ""
}
