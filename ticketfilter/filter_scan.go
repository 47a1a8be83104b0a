package ticketfilter

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// filterScanner reads the two shapes of _filters: a strict subset of JSON
// made of strings, arrays of string triples and objects of string members.
// A purpose-built reader costs a fraction of encoding/json and allocates
// only the result and the strings that hold escapes.
type filterScanner struct {
	s     string
	i     int    // next byte
	max   int    // MaxFilters
	pos   int    // filter being read, 1-based; 0 outside any
	param string // its parameter,
	named bool   // once read
}

// scan reads the whole value and says whether it is the object form.
func (sc *filterScanner) scan() (filters []Filter, object bool, err error) {
	sc.space()
	switch sc.peek() {
	case '[':
		filters, err = sc.list()
	case '{':
		object = true
		filters, err = sc.object()
	default:
		if sc.i == len(sc.s) {
			return nil, false, sc.fail("the value is empty")
		}
		return nil, false, sc.fail("expected an object or a list, found %s", sc.found())
	}
	if err != nil {
		return nil, false, err
	}
	sc.space()
	if sc.i < len(sc.s) {
		return nil, false, sc.fail("found %s after the end of the value", sc.found())
	}
	return filters, object, nil
}

// list reads [["<parameter>","<operator>","<value>"], ...].
func (sc *filterScanner) list() ([]Filter, error) {
	sc.i++
	sc.space()
	if sc.peek() == ']' {
		sc.i++
		return nil, nil
	}
	filters := make([]Filter, 0, min(strings.Count(sc.s, "["), sc.max))
	for {
		if err := sc.start(len(filters) + 1); err != nil {
			return nil, err
		}
		f, err := sc.triple()
		if err != nil {
			return nil, err
		}
		filters = append(filters, f)
		if done, err := sc.next(']'); done || err != nil {
			return filters, err
		}
	}
}

// triple reads ["<parameter>","<operator>","<value>"].
func (sc *filterScanner) triple() (Filter, error) {
	switch sc.peek() {
	case '[':
	case '"':
		return Filter{}, sc.fail(`each filter is a triple in its own array, the whole value a list of them: [["status","E","C"]]`)
	default:
		return Filter{}, sc.fail("expected a triple %s, found %s", filterTripleDescription, sc.found())
	}
	sc.i++
	var parts [3]string
	for n := 0; ; n++ {
		sc.space()
		switch {
		case n == 0 && sc.peek() == ']':
			return Filter{}, sc.fail("a filter is a triple %s; this one is empty", filterTripleDescription)
		case n == 3:
			return Filter{}, sc.fail("a filter is a triple %s; this one has more than 3 items", filterTripleDescription)
		}
		s, err := sc.str(filterTripleParts[n])
		if err != nil {
			return Filter{}, err
		}
		parts[n] = s
		if n == 0 {
			sc.param, sc.named = s, true
		}
		sc.space()
		switch sc.peek() {
		case ',':
			sc.i++
			continue
		case ']':
			sc.i++
			if n < 2 {
				return Filter{}, sc.fail("a filter is a triple %s; this one has %d items", filterTripleDescription, n+1)
			}
			return Filter{Param: parts[0], Op: parts[1], Value: parts[2]}, nil
		}
		return Filter{}, sc.fail(`expected "," or "]" in the triple, found %s`, sc.found())
	}
}

// filterTripleParts name the items of a triple in messages.
var filterTripleParts = [3]string{"parameter", "operator", "value"}

// object reads {"<parameter>":"<value>", ...}.
func (sc *filterScanner) object() ([]Filter, error) {
	sc.i++
	sc.space()
	if sc.peek() == '}' {
		sc.i++
		return nil, nil
	}
	filters := make([]Filter, 0, min(strings.Count(sc.s, ":"), sc.max))
	for {
		if err := sc.start(len(filters) + 1); err != nil {
			return nil, err
		}
		param, err := sc.str("parameter name")
		if err != nil {
			return nil, err
		}
		sc.param, sc.named = param, true
		sc.space()
		if sc.peek() != ':' {
			return nil, sc.fail(`expected ":" after the parameter name, found %s`, sc.found())
		}
		sc.i++
		sc.space()
		value, err := sc.str("value")
		if err != nil {
			return nil, err
		}
		filters = append(filters, Filter{Param: param, Value: value})
		if done, err := sc.next('}'); done || err != nil {
			return filters, err
		}
	}
}

// start begins the filter at pos, enforcing MaxFilters.
func (sc *filterScanner) start(pos int) error {
	if pos > sc.max {
		return &FilterError{Reason: filterReasonTooMany,
			Message: fmt.Sprintf("_filters has more than %d filters; the limit is %d", sc.max, sc.max)}
	}
	sc.pos, sc.param, sc.named = pos, "", false
	sc.space()
	return nil
}

// next reads the "," between filters or the closing bracket, reporting
// whether the container ended.
func (sc *filterScanner) next(closing byte) (bool, error) {
	sc.space()
	switch sc.peek() {
	case ',':
		sc.i++
		return false, nil
	case closing:
		sc.i++
		sc.pos, sc.param, sc.named = 0, "", false
		return true, nil
	}
	return false, sc.fail("expected %q or %q after the filter, found %s", ",", string(closing), sc.found())
}

// str reads a JSON string, the what of a filter. Without escapes it is a
// substring of the input and costs no allocation.
func (sc *filterScanner) str(what string) (string, error) {
	if sc.peek() != '"' {
		return "", sc.fail("the %s must be a JSON string, found %s", what, sc.found())
	}
	start := sc.i + 1
	var buf []byte // the text so far, once an escape made it differ from the input
	for i := start; i < len(sc.s); {
		c, size := sc.s[i], 1
		switch {
		case c == '"':
			sc.i = i + 1
			if buf == nil {
				return sc.s[start:i], nil
			}
			return string(buf), nil
		case c == '\\':
			if buf == nil {
				buf = append(make([]byte, 0, len(sc.s)-start), sc.s[start:i]...)
			}
			sc.i = i
			r, n, err := sc.escape()
			if err != nil {
				return "", err
			}
			buf = utf8.AppendRune(buf, r)
			i += n
			continue
		case c < 0x20:
			sc.i = i
			return "", sc.fail("a control character in a string must be escaped")
		case c >= utf8.RuneSelf:
			var r rune
			if r, size = utf8.DecodeRuneInString(sc.s[i:]); r == utf8.RuneError && size == 1 {
				sc.i = i
				return "", sc.fail("the text is not valid UTF-8")
			}
		}
		if buf != nil {
			buf = append(buf, sc.s[i:i+size]...)
		}
		i += size
	}
	sc.i = len(sc.s)
	return "", sc.fail("a string is not closed")
}

// filterEscapes maps the letter of a one-letter escape to what it stands for.
var filterEscapes = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// escape reads the escape at the read position and returns its rune and
// length. A surrogate pair makes one rune; a lone surrogate stands for no
// character and is refused.
func (sc *filterScanner) escape() (rune, int, error) {
	i := sc.i
	switch {
	case i+1 == len(sc.s):
		return 0, 0, sc.fail("a string is not closed")
	case filterEscapes[sc.s[i+1]] != 0:
		return rune(filterEscapes[sc.s[i+1]]), 2, nil
	case sc.s[i+1] != 'u':
		return 0, 0, sc.fail(`invalid escape in a string; JSON has \", \\, \/, \b, \f, \n, \r, \t and \uXXXX`)
	}
	r, ok := filterHex4(sc.s, i)
	if !ok {
		return 0, 0, sc.fail(`invalid escape in a string: \u must be followed by 4 hex digits`)
	}
	if !utf16.IsSurrogate(r) {
		return r, 6, nil
	}
	if lo, ok := filterHex4(sc.s, i+6); ok && r < 0xdc00 {
		if pair := utf16.DecodeRune(r, lo); pair != utf8.RuneError {
			return pair, 12, nil
		}
	}
	return 0, 0, sc.fail(`invalid escape in a string: %s is half of a surrogate pair`, sc.s[i:i+6])
}

// filterHex4 decodes the \uXXXX escape at s[i:], if there is one.
func filterHex4(s string, i int) (rune, bool) {
	if i+6 > len(s) || s[i] != '\\' || s[i+1] != 'u' {
		return 0, false
	}
	n, err := strconv.ParseUint(s[i+2:i+6], 16, 32)
	return rune(n), err == nil
}

// space skips JSON whitespace.
func (sc *filterScanner) space() {
	for sc.i < len(sc.s) {
		switch sc.s[sc.i] {
		case ' ', '\t', '\n', '\r':
			sc.i++
		default:
			return
		}
	}
}

// peek returns the next byte, or 0 at the end.
func (sc *filterScanner) peek() byte {
	if sc.i < len(sc.s) {
		return sc.s[sc.i]
	}
	return 0
}

// found describes what is at the read position, for messages.
func (sc *filterScanner) found() string {
	if sc.i >= len(sc.s) {
		return "the end of the value"
	}
	switch c := sc.s[sc.i]; {
	case c == '{':
		return "an object"
	case c == '[':
		return "a list"
	case c == '"':
		return "a string"
	case c == 'n' && strings.HasPrefix(sc.s[sc.i:], "null"):
		return "null"
	case c == 't' && strings.HasPrefix(sc.s[sc.i:], "true"), c == 'f' && strings.HasPrefix(sc.s[sc.i:], "false"):
		return "a boolean"
	case c == '-' || c >= '0' && c <= '9':
		return "a number"
	case c < utf8.RuneSelf:
		return fmt.Sprintf("%q", string(c))
	}
	r, _ := utf8.DecodeRuneInString(sc.s[sc.i:])
	return fmt.Sprintf("%q", r)
}

// fail reports a syntax error at the read position, naming the filter and
// its parameter as far as they have been read.
func (sc *filterScanner) fail(format string, args ...any) *FilterError {
	prefix := "_filters: "
	switch {
	case sc.named:
		prefix = fmt.Sprintf("filter %d (%s): ", sc.pos, filterQuote(sc.param))
	case sc.pos > 0:
		prefix = fmt.Sprintf("filter %d: ", sc.pos)
	}
	return &FilterError{Position: sc.pos, Param: sc.param, Reason: filterReasonSyntax,
		Message: prefix + fmt.Sprintf(format, args...) + fmt.Sprintf(" (at byte %d)", sc.i+1) + filterShapesHint}
}
