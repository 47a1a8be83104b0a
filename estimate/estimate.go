// Package estimate guesses where a cursor lies in a list from ids read as
// numbers: how a list's ids map onto a line (Reading), how irregular the
// gaps between them are (Spread, learned from the backend's answers), and
// how many records lie between two ids, with the guess's uncertainty
// (Extrapolation). The paging engine's search (package locate) asks it
// where to leap; it keeps no state of its own and knows ids only as
// strings, numeric or lexical, so it imports nothing of the engine.
//
// It also holds what a walk by offset costs the backend (cost.go): the rows
// stepped over per record served, and when backend_keyset pays, which
// the admin endpoint reports at run time and the rollout check (verify)
// before.
//
// A gateway instance behind a round-robin balancer meets most cursors cold:
// the page before went to another instance. What it knows of the list
// (samples of earlier answers, how irregular the gaps between ids are)
// must then put the cursor in one call. An estimate is therefore a range
// of offsets, as wide as the uncertainty of the guess and no wider: a
// window narrower than that misses, and a miss costs a call; a wider one
// costs records.
package estimate

import (
	"math"
	"strconv"
)

// Reading maps ids onto numbers in their order, so that offsets can be
// interpolated and extrapolated from them. Numeric ids are their value.
// Lexical ids are read, after the common prefix of the ids the reading was
// made for, as a fraction in a mixed radix: each position's digits are the
// character classes seen there (digits, lower- or upper-case letters, and
// any other byte as itself; only a to f when every letter is one, as in
// hex ids). So zero-padded numbers read as numbers and random letters and
// digits as evenly spread values, where a plain
// base-256 reading would leave most of each byte's range empty and make
// the density jump at every carry.
type Reading struct {
	lexical bool
	prefix  int // bytes every id shares, for lexical ids
	depth   int // positions read after the prefix
	pos     [readDepth]alphabet
}

// readDepth bounds the positions a lexical reading looks at: a float64
// holds about ten positions of 36 symbols, and positions further down say
// nothing about where a cursor lies among thousands of ids.
const readDepth = 10

// byteSet is a set of bytes.
type byteSet [4]uint64

func (s *byteSet) add(b byte)      { s[b>>6] |= 1 << (b & 63) }
func (s *byteSet) has(b byte) bool { return s[b>>6]&(1<<(b&63)) != 0 }
func (s *byteSet) empty() bool     { return s[0]|s[1]|s[2]|s[3] == 0 }
func (s *byteSet) addAll(id string) {
	for i := range len(id) {
		s.add(id[i])
	}
}

// alphabet is the symbols of one position: a set of bytes and whether an
// id may end there (which sorts before every byte).
type alphabet struct {
	set    byteSet
	hasEnd bool
}

func (a *alphabet) add(b byte) { a.set.add(b) }

// addClass adds the bytes lo to hi that the list's ids use (all of them
// when that is not known).
func (a *alphabet) addClass(lo, hi byte, used *byteSet) {
	for b := lo; b <= hi; b++ {
		if used == nil || used.has(b) {
			a.add(b)
		}
	}
}

// rank is the number of symbols of a below b, the end included.
func (a *alphabet) rank(b byte) int {
	n := 0
	if a.hasEnd {
		n = 1
	}
	for w := range int(b >> 6) {
		n += popcount(a.set[w])
	}
	return n + popcount(a.set[b>>6]&(1<<(b&63)-1))
}

func (a *alphabet) radix() int { return a.rank(255) + popcount(a.set[3]>>63) }

func popcount(x uint64) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

// newReading makes a reading for ids. Every id an estimate compares must
// be among them, so that the reading keeps their order. used, when known,
// holds the bytes the list's ids use: a class then stands for those of its
// members only (Crockford's base32 has no I, L, O or U).
func newReading(lexical bool, used *byteSet, ids ...string) Reading {
	r := Reading{lexical: lexical}
	if !lexical || len(ids) == 0 {
		return r
	}
	r.prefix = len(ids[0])
	for _, id := range ids[1:] {
		n := 0
		for n < r.prefix && n < len(id) && id[n] == ids[0][n] {
			n++
		}
		r.prefix = n
	}
	// Hex ids (UUIDs, hashes, object ids) use six letters of each case:
	// read as if the class held all 26, most of each position's range
	// would be empty and the density would jump at every carry.
	lastLower, lastUpper := byte('z'), byte('Z')
	var maxLower, maxUpper byte
	for _, id := range ids {
		for i := r.prefix; i < len(id); i++ {
			switch c := id[i]; {
			case c >= 'a' && c <= 'z':
				maxLower = max(maxLower, c)
			case c >= 'A' && c <= 'Z':
				maxUpper = max(maxUpper, c)
			}
		}
	}
	if used != nil && used.empty() {
		used = nil
	}
	if maxLower != 0 && maxLower <= 'f' {
		lastLower = 'f'
	}
	if maxUpper != 0 && maxUpper <= 'F' {
		lastUpper = 'F'
	}
	radix := 1.0
	for k := range readDepth {
		a := &r.pos[k]
		for _, id := range ids {
			i := r.prefix + k
			switch {
			case i >= len(id):
				a.hasEnd = true
			case id[i] >= '0' && id[i] <= '9':
				a.addClass('0', '9', used)
			case id[i] >= 'a' && id[i] <= 'z':
				a.addClass('a', lastLower, used)
			case id[i] >= 'A' && id[i] <= 'Z':
				a.addClass('A', lastUpper, used)
			}
			if i < len(id) {
				a.add(id[i])
			}
		}
		r.depth = k + 1
		if radix *= float64(a.radix()); radix > 1<<52 {
			break
		}
	}
	return r
}

// Value reads id as a number; ok is false for numeric ids a float cannot
// hold and for lexical ids outside the reading's prefix.
func (r *Reading) Value(id string) (float64, bool) {
	if !r.lexical {
		f, err := strconv.ParseFloat(id, 64)
		return f, err == nil && !math.IsInf(f, 0)
	}
	if len(id) < r.prefix {
		return 0, false
	}
	v, scale := 0.0, 1.0
	for k := range r.depth {
		a := &r.pos[k]
		scale /= float64(a.radix())
		i := r.prefix + k
		if i >= len(id) {
			break // the end ranks 0
		}
		v += float64(a.rank(id[i])) * scale
	}
	return v, true
}

// gapSpread measures how irregular the gaps between consecutive ids are:
// the squared coefficient of variation of up to gapPairs gaps spread over
// ids, each against the mean gap of the whole run. Evenly spread ids give
// 0, random gaps of 1 to 20 about 0.3, gaps of a Poisson stream about 1.
// It returns the number of gaps measured (0: none), and adds the bytes of
// the ids it read to used.
func gapSpread(lexical bool, ids []string, used *byteSet) (cv2 float64, n int) {
	if len(ids) < 3 {
		return 0, 0
	}
	pairs := min(gapPairs, len(ids)-1)
	at := func(k int) int { return k * (len(ids) - 2) / max(pairs-1, 1) }
	var picked [2*gapPairs + 2]string
	m := 0
	picked[m], picked[m+1] = ids[0], ids[len(ids)-1]
	m += 2
	for k := range pairs {
		picked[m], picked[m+1] = ids[at(k)], ids[at(k)+1]
		m += 2
	}
	if lexical {
		for _, id := range picked[:m] {
			used.addAll(id)
		}
	}
	r := newReading(lexical, used, picked[:m]...)
	first, ok1 := r.Value(ids[0])
	last, ok2 := r.Value(ids[len(ids)-1])
	mean := (last - first) / float64(len(ids)-1)
	if !ok1 || !ok2 || !(mean > 0) {
		return 0, 0
	}
	sum := 0.0
	for k := range pairs {
		a, okA := r.Value(ids[at(k)])
		b, okB := r.Value(ids[at(k)+1])
		if !okA || !okB {
			return 0, 0
		}
		d := (b-a)/mean - 1
		sum += d * d
	}
	return sum / float64(pairs), pairs
}

// gapPairs is how many gaps of one answer gapSpread measures: enough for
// a stable figure, few enough that it costs little next to the answer.
const gapPairs = 16

// Spread is what a list's answers showed of its ids: how irregular the
// gaps between them are, and which bytes lexical ids use. Its zero value
// has measured nothing.
type Spread struct {
	cv2  float64 // as gapSpread measures it
	n    float64 // gaps it stands for, capped at spreadMemory
	used byteSet
}

// spreadMemory caps the weight of what was learned, so that a list whose
// gaps change character is followed, and bounds how often a list that is
// well known is measured again.
const spreadMemory = 512

// Learn measures the answer ids, lexical or numeric.
func (s *Spread) Learn(lexical bool, ids []string) {
	cv2, n := gapSpread(lexical, ids, &s.used)
	if n == 0 {
		return
	}
	w := float64(n)
	s.cv2 = (s.cv2*s.n + cv2*w) / (s.n + w)
	s.n = min(s.n+w, spreadMemory)
}

// Learning reports whether s stands for fewer gaps than it remembers at
// most: a list that is well known needs measuring only now and then.
func (s *Spread) Learning() bool { return s.n < spreadMemory }

// CV2 is the squared coefficient of variation of the gaps (as gapSpread
// measures it), or unknownSpread before any was measured.
func (s *Spread) CV2() float64 {
	if s.n > 0 {
		return s.cv2
	}
	return unknownSpread
}

// unknownSpread stands for the irregularity of gaps nobody has measured:
// that of a Poisson stream of inserts, wider than most lists need.
const unknownSpread = 1.0

// Reading makes a reading for ids, lexical or numeric, whose classes of
// symbols are those the list's ids were seen to use. Every id an estimate
// compares must be among ids, so that the reading keeps their order.
func (s *Spread) Reading(lexical bool, ids ...string) Reading {
	return newReading(lexical, &s.used, ids...)
}

// Z is how many standard deviations either side of a guess a window
// covers: about 95 in 100 guesses then land in one call.
const Z = 2.0

// Extrapolation guesses how many records lie after a record with value l
// up to and including value x, from the density measured between a record
// below with value b, span records lower, and l. It returns the guess and
// its standard deviation: for gaps of squared variation cv2, the count of
// records in a stretch of d expected ones varies by cv2·d, and the density
// measured over span records by a relative cv2/span.
func Extrapolation(b, l, x float64, span int, cv2 float64) (d, sigma float64, ok bool) {
	if span < 1 || !(l > b) || x < l {
		return 0, 0, false
	}
	d = (x - l) * float64(span) / (l - b)
	if math.IsInf(d, 0) || math.IsNaN(d) {
		return 0, 0, false
	}
	return d, math.Sqrt(cv2 * d * (1 + d/float64(span))), true
}
