package translate

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// FilterConfig holds the configurable parts of the filter rules.
type FilterConfig struct {
	MaxFilters   int      // default 50 when 0
	MaxLength    int      // bytes of the raw _filters value; default 8192 when 0
	StatusCodes  []string // allowed status codes; empty = any code
	ChannelTypes []string // allowed channel_type codes; empty = any code
	PeriodCodes  []string // allowed DP codes; empty = any short code
}

// Defaults of FilterConfig's limits.
const (
	filterDefaultMaxFilters = 50
	filterDefaultMaxLength  = 8192
)

// Filter is one validated condition.
type Filter struct{ Param, Op, Value string }

// FilterError says what is wrong with a _filters value, in words a client
// can act on.
type FilterError struct {
	Position int    // 1-based position of the offending filter; 0 when the whole value is at fault
	Param    string // parameter at fault, "" when unknown
	Reason   string // short machine-friendly reason: "syntax", "too_long", "too_many", "unknown_parameter", "not_filterable", "operator" or "value"
	Message  string // full sentence naming the position, the parameter and what is allowed
}

func (e *FilterError) Error() string { return e.Message }

// The values of FilterError.Reason.
const (
	filterReasonSyntax      = "syntax"            // not one of the two JSON shapes
	filterReasonTooLong     = "too_long"          // longer than MaxLength
	filterReasonTooMany     = "too_many"          // more than MaxFilters conditions
	filterReasonUnknown     = "unknown_parameter" // no such parameter
	filterReasonNotAccepted = "not_filterable"    // a field the spec excludes from filters
	filterReasonOperator    = "operator"          // operator not allowed for the parameter
	filterReasonValue       = "value"             // value not of the shape the operator takes
)

// Texts shared by several messages.
const (
	filterShapesHint        = `; send an object like {"status":"open"} or a list of triples like [["status","IN","open,pending"]]`
	filterTripleDescription = `["<parameter>","<operator>","<value>"]`
)

// FilterValidator checks _filters values; build once, safe for concurrent use.
type FilterValidator struct {
	maxFilters int
	maxLength  int
	params     map[string]*filterRule
	custom     *filterRule
	codes      [filterKindCount]filterCodes // allowed codes of the status and channel kinds
	periods    filterCodes
	paramList  string // every parameter, for the unknown-parameter message
}

// filterRule is a parameter's row of the grammar, ready for lookups.
type filterRule struct {
	ops      []string // allowed operators, in the spec's order
	opList   string   // the same for messages: "E, IN, NI"
	opChoice string   // and as a choice: "E, IN or NI"
	kind     filterKind
	objectOp string // operator of the object form; "" when there is none
	listOp   string // IN or CY when the parameter takes one, for hints
}

// NewFilterValidator returns a validator for cfg. It panics if the grammar
// tables name an operator they do not define, which a test rules out.
func NewFilterValidator(cfg FilterConfig) *FilterValidator {
	v := &FilterValidator{
		maxFilters: cfg.MaxFilters,
		maxLength:  cfg.MaxLength,
		params:     make(map[string]*filterRule, len(filterParams)),
		custom:     newFilterRule(filterCustomField),
		periods:    newFilterCodes(cfg.PeriodCodes),
	}
	if v.maxFilters <= 0 {
		v.maxFilters = filterDefaultMaxFilters
	}
	if v.maxLength <= 0 {
		v.maxLength = filterDefaultMaxLength
	}
	v.codes[filterStatus] = newFilterCodes(cfg.StatusCodes)
	v.codes[filterChannel] = newFilterCodes(cfg.ChannelTypes)
	names := make([]string, 0, len(filterParams))
	for _, p := range filterParams {
		v.params[p.name] = newFilterRule(p)
		names = append(names, p.name)
	}
	v.paramList = strings.Join(names, ", ") + " and " + filterCustomField.name + "<name>"
	return v
}

func newFilterRule(p filterParamSpec) *filterRule {
	r := &filterRule{ops: strings.Fields(p.ops), kind: p.kind}
	for _, op := range r.ops {
		if _, ok := filterOperators[op]; !ok {
			panic("translate: filter grammar: parameter " + p.name + " names unknown operator " + op)
		}
		if r.listOp == "" && (op == "IN" || op == "CY") {
			r.listOp = op
		}
	}
	r.opList = strings.Join(r.ops, ", ")
	r.opChoice = r.opList
	if n := len(r.ops); n > 1 {
		r.opChoice = strings.Join(r.ops[:n-1], ", ") + " or " + r.ops[n-1]
	}
	r.objectOp = filterObjectOp(r.ops)
	return r
}

// Parse validates raw (the decoded _filters query value) and returns its
// conditions in order. "[]", "{}" mean no filter (nil, nil). Errors are
// *FilterError.
//
// In the object form each condition gets the parameter's equality-type
// operator (E, or IN or L for the parameters that have only that), so
// every returned Filter has its Op set. All syntax is checked before any
// condition, so a client fixes the JSON first.
func (v *FilterValidator) Parse(raw string) ([]Filter, error) {
	if len(raw) > v.maxLength {
		return nil, &FilterError{Reason: filterReasonTooLong,
			Message: fmt.Sprintf("_filters is %d bytes long; the limit is %d bytes", len(raw), v.maxLength)}
	}
	sc := filterScanner{s: raw, max: v.maxFilters}
	filters, object, err := sc.scan()
	if err != nil {
		return nil, err
	}
	for i := range filters {
		if err := v.check(i+1, filters[:i+1], object); err != nil {
			return nil, err
		}
	}
	return filters, nil
}

// check validates the last of filters, at position pos, in place: in the
// object form it sets the operator.
func (v *FilterValidator) check(pos int, filters []Filter, object bool) error {
	f := &filters[pos-1]
	rule, err := v.rule(pos, f.Param)
	if err != nil {
		return err
	}
	if object {
		if first := slices.IndexFunc(filters[:pos-1], func(g Filter) bool { return g.Param == f.Param }); first >= 0 {
			return filterFail(pos, f.Param, filterReasonSyntax,
				"%q appears twice in the object (filters %d and %d); the object form takes each parameter once, use the list form for several conditions on one parameter",
				f.Param, first+1, pos)
		}
		if rule.objectOp == "" {
			return filterFail(pos, f.Param, filterReasonOperator,
				"%s has no equality operator, so the object form cannot use it; use the list form with %s, e.g. [[%q,%q,%q]]",
				f.Param, rule.opChoice, f.Param, rule.ops[0], v.example(rule.kind, false))
		}
		f.Op = rule.objectOp
	}
	if !slices.Contains(rule.ops, f.Op) {
		hint := ""
		if upper := strings.ToUpper(f.Op); upper != f.Op && slices.Contains(rule.ops, upper) {
			hint = " (operators are upper case)"
		}
		return filterFail(pos, f.Param, filterReasonOperator,
			"operator %s is not allowed%s; %s takes %s", filterQuote(f.Op), hint, f.Param, rule.opList)
	}
	return v.checkValue(pos, rule, f)
}

// rule finds the grammar row of param.
func (v *FilterValidator) rule(pos int, param string) (*filterRule, error) {
	if r, ok := v.params[param]; ok {
		return r, nil
	}
	if name, ok := strings.CutPrefix(param, filterCustomField.name); ok {
		if name == "" {
			return nil, filterFail(pos, param, filterReasonUnknown,
				"a custom field filter needs the field's name after %q, e.g. %q", filterCustomField.name, "field_priority")
		}
		return v.custom, nil
	}
	if hint, ok := filterNotAccepted[param]; ok {
		if hint != "" {
			hint = "; " + hint
		}
		return nil, filterFail(pos, param, filterReasonNotAccepted, "%s cannot be used as a filter%s", param, hint)
	}
	hint := ""
	if lower := strings.ToLower(param); lower != param {
		if _, ok := v.params[lower]; ok {
			hint = fmt.Sprintf(" (parameter names are lower case: %q)", lower)
		}
	}
	return nil, filterFail(pos, param, filterReasonUnknown,
		"unknown parameter%s; the ticket list filters on %s", hint, v.paramList)
}

// filterFail builds the error for the filter at pos about param.
func filterFail(pos int, param, reason, format string, args ...any) *FilterError {
	return &FilterError{Position: pos, Param: param, Reason: reason,
		Message: fmt.Sprintf("filter %d (%s): ", pos, filterQuote(param)) + fmt.Sprintf(format, args...)}
}

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
		return Filter{}, sc.fail(`each filter is a triple in its own array, the whole value a list of them: [["status","E","open"]]`)
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
