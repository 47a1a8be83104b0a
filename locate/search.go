package locate

import (
	"math"
	"strconv"
	"strings"

	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/helpdesk-gateway/gateway/estimate"
)

// Search locates, in an offset-paged list that is sorted by id, the first
// offset whose id is greater than a cursor id: the boundary. The zero
// value is not usable: Init sets a Search up.
//
// What it knows is a bracket: the boundary lies in (lo, hi], where lo is an
// offset whose id is at or below the cursor (-1: before the start) and hi
// an offset whose id is above it, or an offset at or past the list's end
// (-1: unknown). Bounds come from the hint and from fresh answers; when a
// fresh answer contradicts a bound, the bound was stale and is replaced.
type Search struct {
	order  cursor.Order
	cursor string

	lo, hi     int
	loID, hiID string // ids at lo and hi, "" when the bound is not a seen record
	end        int    // an offset at or past the end of the list; -1 unknown

	step     int  // gallop distance while the end is unknown
	backoff  int  // distance below hi to retry when lo proved stale
	interp   bool // whether the next probe may interpolate
	lastSpan int  // hi - lo before an interpolated probe; 0 after other probes

	// While the end is unknown, the gallop may leap to where the density
	// of ids seen so far puts the cursor: base is the lowest-offset record
	// seen, the far end of that density, and near the samples the hint
	// held just below lo, for the density close to the cursor. spread is
	// how irregular the gaps are, which sets how wide a leap's window is.
	baseOff      int
	baseID       string              // "" until a record is seen
	nearAt       [nearSamples]Sample // ascending; the first nNear in use
	nNear        int
	spread       estimate.Spread
	extrap       bool // whether the gallop may still extrapolate
	extrapolated bool // the window last planned was an extrapolated leap
	fellShort    bool // a leap found every record at or below the cursor
}

// Init sets s up to search for the boundary after the cursor id after,
// ordered by order, starting from what h knows.
func (s *Search) Init(order cursor.Order, after string, h *Hint) {
	*s = Search{order: order, cursor: after, lo: -1, hi: -1, end: h.End, interp: true, extrap: true, spread: h.Spread}
	if h.HasLo {
		s.lo, s.loID = h.Lo.Off, h.Lo.ID
		s.baseOff, s.baseID = h.Lo.Off, h.Lo.ID
	}
	if h.hasBase && h.base.Off < s.baseOff {
		s.baseOff, s.baseID = h.base.Off, h.base.ID
		s.nearAt = h.near
		s.nNear = h.nNear
	}
	if h.HasHi && h.Hi.Off > s.lo {
		s.hi, s.hiID = h.Hi.Off, h.Hi.ID
	}
}

// After returns the cursor id the boundary is searched after.
func (s *Search) After() string { return s.cursor }

// Lo returns the bracket's lower end: an offset whose record is at or
// below the cursor, or -1.
func (s *Search) Lo() int { return s.lo }

// End returns an offset at or past the list's end, or -1 when unknown.
func (s *Search) End() int { return s.end }

// nearSamples returns the samples the hint held just below lo.
func (s *Search) nearSamples() []Sample { return s.nearAt[:s.nNear] }

// Exact reports whether the record at lo is the cursor record itself.
func (s *Search) Exact() bool {
	return s.loID != "" && s.order.Compare(s.loID, s.cursor) == 0
}

// Found reports whether the boundary is known: right after lo.
func (s *Search) Found() bool {
	return s.lo >= 0 && (s.Exact() || s.upper() == s.lo+1)
}

// upper returns the bracket's upper end, combining hi and the list's end.
func (s *Search) upper() int {
	switch {
	case s.hi < 0:
		return s.end
	case s.end >= 0 && s.end < s.hi:
		return s.end
	}
	return s.hi
}

// Window returns the offsets [from, to) the next call should cover for a
// page of need records after the cursor; the caller fits them to the
// windows its backend serves. Every window includes an offset where a
// record at or below the cursor is expected, so that an answer proves
// where the boundary is.
func (s *Search) Window(need int) (from, to int) {
	probe := 2*need + 1
	lo, hi := s.lo, s.upper()
	s.lastSpan = 0
	s.extrapolated = false
	switch {
	case s.Found():
		// The boundary is right after lo: fetch it and the page in one call.
		return lo, lo + 1 + need
	case hi < 0:
		// The end is unknown: gallop, doubling the distance at each step.
		if lo < 0 {
			return 0, probe
		}
		from = lo + s.step
		if first, last, ok := s.leap(); ok && (last > from || !s.fellShort) {
			// Short of the doubling only until a leap fell short, so a
			// poor guess costs no more than the gallop it replaces, and a
			// good one saves the gallop's overshoot. The window holds the
			// record before the first place the boundary may be, and
			// the page after the last.
			s.extrapolated = true
			return max(first-1, lo), last + need
		}
		return from, from + probe
	case hi+need-max(lo, 0) <= probe:
		// One call covers every place the boundary can be, with its page.
		return max(lo, 0), hi + need
	}
	guess := lo + (hi-lo)/2
	if g, ok := s.interpolate(lo, hi); ok {
		guess = g
		s.lastSpan = hi - lo
	}
	from = min(max(guess-need/2-1, lo, 0), hi+need-probe)
	return from, from + probe
}

// interpolate guesses the boundary from the numeric ids at the bracket's
// ends, as a reader opens a dictionary near the right letter. It stands down
// for one probe whenever a guess failed to halve the bracket, so that
// uneven ids cost at most about twice a bisection.
func (s *Search) interpolate(lo, hi int) (int, bool) {
	if !s.interp || s.loID == "" || s.hiID == "" || hi != s.hi {
		return 0, false
	}
	l, ok1 := numericValue(s.order, s.loID)
	h, ok2 := numericValue(s.order, s.hiID)
	x, ok3 := numericValue(s.order, s.cursor)
	if !ok1 || !ok2 || !ok3 || h <= l {
		return 0, false
	}
	frac := (x - l) / (h - l)
	if frac < 0 || frac >= 1 {
		return 0, false
	}
	return lo + 1 + int(frac*float64(hi-lo-1)), true
}

// numericValue maps a numeric id onto a float for interpolation. Precision
// loss on huge ids only makes a guess less sharp, never a result wrong.
func numericValue(o cursor.Order, id string) (float64, bool) {
	if o != cursor.Numeric {
		return 0, false
	}
	f, err := strconv.ParseFloat(id, 64)
	return f, err == nil
}

// maxLeap bounds the offset an extrapolated leap may probe: past it a
// guess says more about an odd cursor id than about the list, and a
// backend should not be asked for absurd offsets.
const maxLeap = math.MaxInt32

// leap guesses, while the list's end is unknown, the offsets first..last
// where the boundary lies, from the density of the ids between base and lo
// and from the density just below lo (see nearGuess), for lists whose ids
// thin out or crowd along the list. The range is as wide as the guess is
// uncertain: on evenly spread ids a cold cursor costs a
// call or two instead of a gallop and a bisection, and behind a
// round-robin balancer a page after another instance's costs one.
func (s *Search) leap() (first, last int, ok bool) {
	if !s.extrap || s.loID == "" || s.baseID == "" || s.lo <= s.baseOff {
		return 0, 0, false
	}
	ids := make([]string, 0, 3+len(s.nearSamples()))
	ids = append(ids, s.baseID, s.loID, s.cursor)
	for _, n := range s.nearSamples() {
		ids = append(ids, n.ID)
	}
	r := s.spread.Reading(s.order == cursor.Lexical, ids...)
	b, ok1 := r.Value(s.baseID)
	l, ok2 := r.Value(s.loID)
	x, ok3 := r.Value(s.cursor)
	if !ok1 || !ok2 || !ok3 {
		return 0, 0, false
	}
	cv2 := s.spread.CV2()
	spanFar := s.lo - s.baseOff
	d, sigma, ok := estimate.Extrapolation(b, l, x, spanFar, cv2)
	if !ok {
		return 0, 0, false
	}
	low, high := d-estimate.Z*sigma, d+estimate.Z*sigma
	if near, ok := s.nearGuess(&r, l, x, d, sigma, cv2); ok {
		low, high = near[0], near[1]
	}
	low, high = max(low, 0), max(high, 0)
	if high > maxLeap {
		return maxLeap, maxLeap, true
	}
	return s.lo + 1 + int(low), s.lo + 1 + int(math.Ceil(high)), true
}

// nearGuess widens the guess d (± sigma), from the density of the whole
// span below lo, to cover the guess from the density just below lo: ids
// may thin out or crowd along the list. When the two differ beyond chance,
// the density drifts, and the range also covers the near density carried
// on along its trend.
func (s *Search) nearGuess(r *estimate.Reading, l, x, d, sigma, cv2 float64) ([2]float64, bool) {
	near := s.nearSamples()
	if len(near) == 0 {
		return [2]float64{}, false
	}
	spanFar := s.lo - s.baseOff
	// The nearest Sample at least half the guessed distance below lo,
	// chosen again from the near guess when the two differ.
	pick := func(d float64) int {
		for k := len(near) - 1; k >= 0; k-- {
			if n := near[k]; n.Off > s.baseOff && s.lo-n.Off >= max(int(d/2), 8) && s.lo-n.Off < spanFar {
				return k
			}
		}
		return -1
	}
	k := pick(d)
	if k < 0 {
		k = 0
		if near[0].Off <= s.baseOff || s.lo-near[0].Off >= spanFar {
			return [2]float64{}, false
		}
	}
	var n1 Sample
	var span int
	var v1, dn, sn float64
	for range 2 {
		n1 = near[k]
		span = s.lo - n1.Off
		var ok1, ok2 bool
		v1, ok1 = r.Value(n1.ID)
		dn, sn, ok2 = estimate.Extrapolation(v1, l, x, span, cv2)
		if !ok1 || !ok2 {
			return [2]float64{}, false
		}
		k2 := pick(dn)
		if k2 < 0 || k2 == k {
			break
		}
		k = k2
	}
	low, high := min(d-estimate.Z*sigma, dn-estimate.Z*sn), max(d+estimate.Z*sigma, dn+estimate.Z*sn)
	if math.Abs(dn-d) <= estimate.Z*math.Hypot(sigma, sn) {
		return [2]float64{low, high}, true
	}
	// The density drifts: trust the near one, and carry it on along the
	// trend from the farthest near Sample to n1 and from n1 to lo.
	low, high = dn-estimate.Z*sn, dn+estimate.Z*sn
	// n2: the nearest Sample at least twice as far below lo as n1.
	n2 := near[0]
	for j := k - 1; j >= 0; j-- {
		if s.lo-near[j].Off >= 2*span {
			n2 = near[j]
			break
		}
	}
	if n2.Off > s.baseOff && n1.Off-n2.Off >= max(span/2, 8) {
		v2, ok := r.Value(n2.ID)
		if ok && v1 > v2 && l > v1 {
			rhoA := float64(n1.Off-n2.Off) / (v1 - v2)
			rhoB := float64(span) / (l - v1)
			slope := (rhoB - rhoA) / (float64(s.lo-n2.Off) / 2)
			trend := (x - l) * (rhoB + slope*(float64(span)+dn)/2)
			if trend > 0 && !math.IsInf(trend, 0) {
				low, high = min(low, trend-estimate.Z*sn), max(high, trend+estimate.Z*sn)
			}
		}
	}
	return [2]float64{low, high}, true
}

// Observe narrows the bracket with an answer that did not settle the
// boundary: ids, at offsets from start, are all at or below the cursor
// (below == len(ids)), or all above it (below == 0), or there are none.
// It reports whether the answer contradicted a bound, that is, whether a
// hint or an earlier answer had gone stale. The ids it keeps are copies:
// the answer may be released as soon as it returns.
func (s *Search) Observe(start int, ids []string, below int) (stale bool) {
	if len(ids) > 0 && (s.baseID == "" || start < s.baseOff) {
		s.baseOff, s.baseID = start, strings.Clone(ids[0])
	}
	s.spread.Learn(s.order == cursor.Lexical, ids)
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
		s.fellShort = s.fellShort || s.extrapolated
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
func (s *Search) dropLo(hi int) {
	s.backoff = max(2*s.backoff, 16)
	s.lo, s.loID = max(hi-s.backoff, -1), ""
}
