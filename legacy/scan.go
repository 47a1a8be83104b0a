package legacy

import (
	"encoding/binary"
	"math/bits"
)

// A validating JSON scanner, so that a backend answer is checked, its
// records array found, and each record and id sliced out in one pass over
// its bytes instead of three (gjson.Valid, then ForEach, then Get on each
// record). It accepts exactly what gjson.Valid accepts (RFC 8259 syntax;
// strings are not checked for UTF-8), except values nested deeper than
// maxDepth: gjson.Valid recurses once per level, so a hostile answer of
// max_body_size opening brackets could exhaust the Go stack.

// maxDepth bounds the nesting of arrays and objects in an answer. Records
// nest a few levels; a thousand is far past any real one.
const maxDepth = 1000

// scanner walks data. Every method takes the index of the first byte of
// what it scans and returns the index just past it, or ok false.
type scanner struct {
	data  []byte
	depth int    // levels entered by the caller, outside walk's own
	deep  bool   // the scan failed because of maxDepth, not syntax
	stack []byte // walk's open containers, '{' or '[', kept for reuse

	// keys are the member names of the last record walk read with a key,
	// in order, as spans of data without escapes: records of one answer
	// mostly repeat them, and bytes equal to a string already found
	// valid are a valid string, so a repeated name is checked with one
	// comparison instead of a scan. A span of length 0 matches nothing.
	keys []span
}

// span is a run of data: [at, at+n).
type span struct{ at, n int }

// class sorts bytes for the scanner's hot loops: one table load instead
// of a chain of comparisons for each byte looked at.
var class = func() (t [256]uint8) {
	for _, c := range " \t\n\r" {
		t[c] |= classSpace
	}
	for c := '0'; c <= '9'; c++ {
		t[c] |= classDigit
	}
	return t
}()

const (
	classSpace = 1 << iota
	classDigit
)

func isSpace(c byte) bool { return class[c]&classSpace != 0 }

// space skips white space.
func (s *scanner) space(i int) int {
	for i < len(s.data) && isSpace(s.data[i]) {
		i++
	}
	return i
}

// valid reports whether all of data is one JSON value.
func (s *scanner) valid() bool {
	i, ok := s.value(s.space(0))
	return ok && s.space(i) == len(s.data)
}

// value scans any JSON value.
func (s *scanner) value(i int) (int, bool) {
	end, _, _, ok := s.walk(i, "")
	return end, ok
}

// walk scans the value at i, without recursion: one loop over the bytes,
// the open containers on a stack. White space is looked for only where
// the byte found is not the one expected: answers are mostly compact, and
// skipping none before every token was a fifth of the scan. When key is set and the value is an
// object, it also returns the span [at, atEnd) of the value of its first
// member named key, or -1s when there is none.
func (s *scanner) walk(i int, key string) (end, at, atEnd int, ok bool) {
	d := s.data
	stack := s.stack[:0]
	at, atEnd = -1, -1
	var (
		keyAt   int
		esc     bool
		idOpen  bool // the value being scanned is key's
		members int  // the record's members so far, when key is set
	)
value:
	if i >= len(d) {
		goto fail
	}
	switch c := d[i]; {
	case c == '"':
		if i, _, ok = s.str(i); !ok {
			goto fail
		}
	case c == '{' || c == '[':
		if s.depth+len(stack) >= maxDepth {
			s.deep = true
			goto fail
		}
		stack = append(stack, c)
		i = s.space(i + 1)
		if i < len(d) && d[i] == c+2 { // '}' and ']' follow '{' and '[' by two
			stack = stack[:len(stack)-1]
			i++
			break
		}
		if c == '{' {
			goto member
		}
		goto value
	case c == '-' || isDigit(c):
		if j := shortInt(d, i); j >= 0 {
			i = j
		} else if i, ok = s.number(i); !ok {
			goto fail
		}
	case c == 't':
		if i, ok = s.literal(i, "true"); !ok {
			goto fail
		}
	case c == 'f':
		if i, ok = s.literal(i, "false"); !ok {
			goto fail
		}
	case c == 'n':
		if i, ok = s.literal(i, "null"); !ok {
			goto fail
		}
	case isSpace(c):
		i = s.space(i)
		goto value
	default:
		goto fail
	}
after: // a value ended just before i
	if idOpen && len(stack) == 1 {
		atEnd, idOpen = i, false
	}
	if len(stack) == 0 {
		s.stack = stack
		return i, at, atEnd, true
	}
separator: // after a value inside a container
	if i >= len(d) {
		goto fail
	}
	switch c := d[i]; {
	case c == ',':
		i++
		if stack[len(stack)-1] == '{' {
			goto member
		}
		goto value
	case c == stack[len(stack)-1]+2:
		stack = stack[:len(stack)-1]
		i++
		goto after
	case isSpace(c):
		i = s.space(i)
		goto separator
	}
	goto fail
member:
	if i >= len(d) {
		goto fail
	}
	if d[i] != '"' {
		if isSpace(d[i]) {
			i = s.space(i)
			goto member
		}
		goto fail
	}
	keyAt = i
	if key != "" && len(stack) == 1 {
		// A record's own member: its name is most likely the one at the
		// same place in the record before.
		if members < len(s.keys) {
			if k := s.keys[members]; k.n > 0 && i+k.n <= len(d) && string(d[i:i+k.n]) == string(d[k.at:k.at+k.n]) {
				i, esc = i+k.n, false
				goto named
			}
		}
		if i, esc, ok = s.str(i); !ok {
			goto fail
		}
		s.remember(members, keyAt, i, esc)
	named:
		members++
		if at < 0 && keyIs(d[keyAt:i], esc, key) {
			idOpen = true
		}
	} else if i, esc, ok = s.str(i); !ok {
		goto fail
	}
colon:
	if i >= len(d) {
		goto fail
	}
	if d[i] != ':' {
		if isSpace(d[i]) {
			i = s.space(i)
			goto colon
		}
		goto fail
	}
	i++
	if idOpen && len(stack) == 1 {
		// The id's own value starts here; a member of an object inside
		// it must not move the span.
		i = s.space(i)
		at = i
	}
	goto value
fail:
	s.stack = stack
	return i, -1, -1, false
}

// remember keeps the name of a record's member n, in data[at:end], for
// the next record; a name with escapes is not kept.
func (s *scanner) remember(n, at, end int, escaped bool) {
	k := span{at, end - at}
	if escaped {
		k.n = 0
	}
	if n < len(s.keys) {
		s.keys[n] = k
	} else {
		s.keys = append(s.keys, k)
	}
}

// enter counts one more level of nesting and reports whether it is
// allowed; whoever enters takes the level off again when done. A failed
// scan is abandoned, so it need not.
func (s *scanner) enter() bool {
	s.depth++
	if s.depth > maxDepth {
		s.deep = true
		return false
	}
	return true
}

// next scans what follows a member or element: a comma and the start of
// the next one (end false), or the closing byte (end true).
func (s *scanner) next(i int, closing byte) (int, bool, bool) {
	i = s.space(i)
	if i >= len(s.data) {
		return i, false, false
	}
	switch s.data[i] {
	case ',':
		return s.space(i + 1), false, true
	case closing:
		return i + 1, true, true
	}
	return i, false, false
}

// str scans a string and reports whether it has escapes. Most of an
// answer is strings, so it steps over eight plain bytes at a time.
func (s *scanner) str(i int) (int, bool, bool) {
	d := s.data
	escaped := false
	for i++; ; {
		for i+8 <= len(d) {
			x := binary.LittleEndian.Uint64(d[i:])
			if m := special(x); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i >= len(d) {
			return i, false, false
		}
		switch c := d[i]; {
		case c == '"':
			return i + 1, escaped, true
		case c < ' ':
			return i, false, false
		case c == '\\':
			escaped = true
			i++
			if i == len(d) {
				return i, false, false
			}
			switch d[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(d) || !isHex(d[i+1]) || !isHex(d[i+2]) || !isHex(d[i+3]) || !isHex(d[i+4]) {
					return i, false, false
				}
				i += 4
			default:
				return i, false, false
			}
		}
		i++
	}
}

// special flags the high bit of each byte of x that is a quote, a
// backslash or a control character. Above the lowest flagged byte a flag
// may be false, never below it, so the lowest is the first such byte.
func special(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q := x ^ (ones * '"')
	b := x ^ (ones * '\\')
	return ((q-ones)&^q | (b-ones)&^b | (x-ones*' ')&^x) & highs
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func isDigit(c byte) bool { return class[c]&classDigit != 0 }

// shortInt returns the end of the number at i when it is plain digits
// followed by a byte that cannot continue a number; else -1, and number
// must scan it. A sign or a leading zero is left to number, which
// refuses "01".
func shortInt(d []byte, i int) int {
	if d[i]-'1' > 8 { // a sign or a leading zero
		return -1
	}
	for i < len(d) && isDigit(d[i]) {
		i++
	}
	if i < len(d) && (d[i] == '.' || d[i] == 'e' || d[i] == 'E') {
		return -1
	}
	return i
}

// number scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number(i int) (int, bool) {
	d := s.data
	if d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && isDigit(d[i]):
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	default:
		return i, false
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || !isDigit(d[i]) {
			return i, false
		}
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || !isDigit(d[i]) {
			return i, false
		}
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	}
	return i, true
}

func (s *scanner) literal(i int, word string) (int, bool) {
	if len(s.data)-i >= len(word) && string(s.data[i:i+len(word)]) == word {
		return i + len(word), true
	}
	return i, false
}

// simpleKey reports whether a gjson path is one plain object key, which
// the scanner can match itself: gjson gives such a path no other meaning.
func simpleKey(path string) bool {
	if path == "" {
		return false
	}
	for i := 0; i < len(path); i++ {
		c := path[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || isDigit(c) || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
