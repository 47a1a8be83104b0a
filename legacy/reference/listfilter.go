package reference

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// This file applies _filters on the four cursor lists. The spec shows no
// filters for them, but LiveAgent takes them there, in the ticket list's
// two forms, and published clients rely on it: Keboola's extractor pages
// /calls by cursor with [["dateCreated",">=","<date-time>"],
// ["dateCreated","<=","<date-time>"]]. A condition the backend cannot
// apply (an unknown field, an operator the field's type has no use for, a
// value of the wrong shape) is refused with a 400, never ignored: a
// client must not take a whole list for a filtered one.

// fieldType says how _filters compares a field of a cursor list's records.
type fieldType uint8

const (
	fieldText     fieldType = iota // codes, names, numbers written as text: compared as text
	fieldNumber                    // whole numbers, as JSON numbers or strings of digits: compared as numbers
	fieldDateTime                  // "YYYY-MM-DD hh:mm:ss", or null: compared in time order
)

// fieldTypeNames name the types in messages.
var fieldTypeNames = [...]string{fieldText: "text", fieldNumber: "number", fieldDateTime: "date-time"}

// listField is a field of a cursor list's records that _filters may name.
type listField struct {
	name string
	typ  fieldType
}

// listOperators are the operators each field type takes: the spec's, on
// the types they make sense for, and the plain comparisons =, >, <, >=
// and <=, which Quality Unit's Gpf_SqlBuilder_Filter has for numbers and
// published clients send with date-times.
var listOperators = [...][]string{
	fieldText:     {"E", "NE", "IN", "NI", "L", "NL", "IE", "INE", "="},
	fieldNumber:   {"E", "NE", "IN", "NI", "IE", "INE", "=", ">", "<", ">=", "<="},
	fieldDateTime: {"D>", "D<", "D>=", "D<=", "DP", "IE", "INE", "=", ">", "<", ">=", "<="},
}

// listCondition is one condition of a _filters value, as the client wrote it.
type listCondition struct{ field, op, value string }

// compileListFilters returns whether a record of k matches every condition
// of the _filters value raw, with DP periods relative to now. "[]" and
// "{}" match every record.
//
// What the operators mean: E, = equal; NE not equal; IN, NI one of, none
// of a comma-separated list; L, NL contains, does not contain, ignoring
// case; IE, INE empty (or null), not empty; >, <, >=, <= and D>, D<, D>=,
// D<= compare numbers as numbers and date-times in time order; DP is
// within one of LiveAgent's periods (see period). A date-time value may be
// a date alone, which means its first second, except with D< and D<=,
// where it means its last, as in Gpf_SqlBuilder_Filter. An empty or null
// field matches no comparison.
func compileListFilters(k *kind, raw string, now time.Time) (func(*record) bool, error) {
	conds, err := parseListFilters(raw)
	if err != nil {
		return nil, err
	}
	tests := make([]func(*record) bool, len(conds))
	for i, c := range conds {
		if tests[i], err = compileListCondition(k, c, now); err != nil {
			return nil, fmt.Errorf("filter %d (%q): %w", i+1, c.field, err)
		}
	}
	return func(r *record) bool {
		for _, test := range tests {
			if !test(r) {
				return false
			}
		}
		return true
	}, nil
}

// listFiltersShapes says what _filters looks like, for messages.
const listFiltersShapes = `send an object {"<field>":"<value>"} or a list of triples [["<field>","<operator>","<value>"]]`

// parseListFilters reads the two forms of _filters. The object form means
// equality, E, for each field.
func parseListFilters(raw string) ([]listCondition, error) {
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return nil, fmt.Errorf("not JSON (%v); %s", err, listFiltersShapes)
	}
	var conds []listCondition
	switch v := v.(type) {
	case map[string]any:
		for _, field := range slices.Sorted(maps.Keys(v)) {
			value, ok := v[field].(string)
			if !ok {
				return nil, fmt.Errorf("the value of %q is not a string; values are always strings", field)
			}
			conds = append(conds, listCondition{field, "E", value})
		}
	case []any:
		for i, item := range v {
			triple, ok := item.([]any)
			if !ok || len(triple) != 3 {
				return nil, fmt.Errorf("filter %d is not a triple [\"<field>\",\"<operator>\",\"<value>\"]", i+1)
			}
			var parts [3]string
			for j, part := range triple {
				if parts[j], ok = part.(string); !ok {
					return nil, fmt.Errorf("filter %d: the field, the operator and the value are strings", i+1)
				}
			}
			conds = append(conds, listCondition{parts[0], parts[1], parts[2]})
		}
	default:
		return nil, fmt.Errorf("neither an object nor a list; %s", listFiltersShapes)
	}
	return conds, nil
}

// lookupField finds the field a condition names, in either spelling: a
// list's own (date_created, or dateCreated on /calls, whose LiveAgent keys
// are camelCase) or the other one clients send (Keboola's extractor sends
// dateCreated; Gpf-style filters date_created).
func lookupField(k *kind, name string) (listField, bool) {
	for _, f := range k.fields {
		if sameField(f.name, name) {
			return f, true
		}
	}
	return listField{}, false
}

// sameField reports whether two names spell one field: equal, or equal
// once camelCase is written as snake_case.
func sameField(a, b string) bool { return a == b || snakeCase(a) == snakeCase(b) }

// snakeCase turns dateCreated into date_created.
func snakeCase(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// compileListCondition returns the test of one condition on k's records.
func compileListCondition(k *kind, c listCondition, now time.Time) (func(*record) bool, error) {
	f, ok := lookupField(k, c.field)
	if !ok {
		names := make([]string, len(k.fields))
		for i, f := range k.fields {
			names[i] = f.name
		}
		return nil, fmt.Errorf("%s has no such field; it filters on %s", k.name, strings.Join(names, ", "))
	}
	ops := listOperators[f.typ]
	if !slices.Contains(ops, c.op) {
		return nil, fmt.Errorf("operator %q does not apply to %s, a %s field; use %s",
			c.op, f.name, fieldTypeNames[f.typ], strings.Join(ops, ", "))
	}
	value := func(r *record) string { return gjson.GetBytes(r.json, f.name).String() }
	not := func(test func(*record) bool) func(*record) bool { return func(r *record) bool { return !test(r) } }

	switch c.op {
	case "IE", "INE":
		if c.value != "" {
			return nil, fmt.Errorf(`%s takes the empty value "", not %q`, c.op, c.value)
		}
		empty := func(r *record) bool { return value(r) == "" }
		if c.op == "INE" {
			return not(empty), nil
		}
		return empty, nil
	case "L", "NL":
		if c.value == "" {
			return nil, fmt.Errorf("%s takes the text to look for; the value is empty", c.op)
		}
		sub := strings.ToLower(c.value)
		contains := func(r *record) bool { return strings.Contains(strings.ToLower(value(r)), sub) }
		if c.op == "NL" {
			return not(contains), nil
		}
		return contains, nil
	case "IN", "NI":
		items := strings.Split(c.value, ",")
		tests := make([]func(string) bool, len(items))
		for i, item := range items {
			if item == "" {
				return nil, fmt.Errorf("item %d of the %s list %q is empty", i+1, c.op, c.value)
			}
			var err error
			if tests[i], err = equalTo(f, item); err != nil {
				return nil, fmt.Errorf("item %d of the %s list: %w", i+1, c.op, err)
			}
		}
		in := func(r *record) bool {
			v := value(r)
			return slices.ContainsFunc(tests, func(eq func(string) bool) bool { return eq(v) })
		}
		if c.op == "NI" {
			return not(in), nil
		}
		return in, nil
	case "E", "NE", "=":
		eq, err := equalTo(f, c.value)
		if err != nil {
			return nil, err
		}
		test := func(r *record) bool { return eq(value(r)) }
		if c.op == "NE" {
			return not(test), nil
		}
		return test, nil
	case "DP":
		from, to, err := period(c.value, now)
		if err != nil {
			return nil, err
		}
		return func(r *record) bool { v := value(r); return v != "" && from <= v && v < to }, nil
	}

	// The comparisons: >, <, >=, <= and D>, D<, D>=, D<=.
	op := strings.TrimPrefix(c.op, "D")
	order := listOrders[op]
	if f.typ == fieldNumber {
		n, err := strconv.ParseFloat(c.value, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number; %s compares numbers", c.value, c.op)
		}
		return func(r *record) bool {
			v, err := strconv.ParseFloat(value(r), 64)
			return err == nil && order(compareFloat(v, n))
		}, nil
	}
	dayEnd := c.op == "D<" || c.op == "D<="
	at, err := listDateTime(c.value, dayEnd)
	if err != nil {
		return nil, fmt.Errorf("%w; %s takes a date-time \"YYYY-MM-DD hh:mm:ss\", e.g. \"2024-01-31 13:45:00\"", err, c.op)
	}
	return func(r *record) bool { v := value(r); return v != "" && order(strings.Compare(v, at)) }, nil
}

// listOrders says, for each comparison, which results of comparing the
// record's value with the filter's match.
var listOrders = map[string]func(int) bool{
	">":  func(c int) bool { return c > 0 },
	"<":  func(c int) bool { return c < 0 },
	">=": func(c int) bool { return c >= 0 },
	"<=": func(c int) bool { return c <= 0 },
}

func compareFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// equalTo returns a test of whether a record's value of f equals want: as
// numbers for a number field, as text otherwise.
func equalTo(f listField, want string) (func(string) bool, error) {
	switch f.typ {
	case fieldNumber:
		n, err := strconv.ParseFloat(want, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number, and %s is a number field", want, f.name)
		}
		return func(s string) bool { v, err := strconv.ParseFloat(s, 64); return err == nil && v == n }, nil
	case fieldDateTime:
		at, err := listDateTime(want, false)
		if err != nil {
			return nil, fmt.Errorf("%w, and %s is a date-time field", err, f.name)
		}
		return func(s string) bool { return s == at }, nil
	}
	return func(s string) bool { return s == want }, nil
}

// listDateTime checks a date-time value, "YYYY-MM-DD hh:mm:ss" or a date
// alone, and returns it as a date-time: a date alone at its first second,
// or at its last when dayEnd.
func listDateTime(value string, dayEnd bool) (string, error) {
	s := value
	if len(s) == len(time.DateOnly) {
		s += " 00:00:00"
		if dayEnd {
			s = value + " 23:59:59"
		}
	}
	t, err := time.Parse(time.DateTime, s)
	if err != nil || dateTime(t) != s {
		return "", fmt.Errorf("%q is not a real date-time", value)
	}
	return s, nil
}
