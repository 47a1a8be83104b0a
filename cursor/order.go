package cursor

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Order is the order of record ids under the backend's id sort.
type Order uint8

const (
	// Numeric ids are whole numbers of any length, compared by value.
	Numeric Order = iota
	// Lexical ids are compared byte by byte (UTF-8 code point order).
	Lexical
)

// ParseOrder reads an id_order value: "numeric" or "lexical".
func ParseOrder(s string) (Order, error) {
	switch s {
	case "numeric":
		return Numeric, nil
	case "lexical":
		return Lexical, nil
	}
	return 0, fmt.Errorf("id order %q: want numeric or lexical", s)
}

func (o Order) String() string {
	if o == Lexical {
		return "lexical"
	}
	return "numeric"
}

// Check reports whether id can be ordered and carried in a cursor: numeric
// ids must be whole numbers, lexical ids valid UTF-8 (a cursor is JSON, so
// other bytes would not come back as they went), and no id may be longer
// than MaxIDLength.
func (o Order) Check(id string) error {
	switch {
	case id == "":
		return errEmptyID
	case len(id) > MaxIDLength:
		return fmt.Errorf("id %.40q... is longer than %d bytes", id, MaxIDLength)
	case o == Numeric && !isWholeNumber(id):
		return fmt.Errorf("id %.40q is not a whole number", id)
	case o == Lexical && !utf8.ValidString(id):
		return fmt.Errorf("id %.40q is not valid UTF-8", id)
	}
	return nil
}

// Compare returns -1, 0 or +1 as a sorts before, with or after b. Numeric
// ids must have passed Check; they are compared without conversion, so ids
// longer than any machine integer still order correctly.
func (o Order) Compare(a, b string) int {
	if o == Lexical {
		return strings.Compare(a, b)
	}
	// Most ids are positive with no leading zero: compare them at once.
	// It is the engine's inner loop, once per id of every answer.
	if a[0] > '0' && b[0] > '0' {
		return compareDigits(a, b)
	}
	negA, negB := a[0] == '-', b[0] == '-'
	if negA != negB {
		if isZero(a) && isZero(b) {
			return 0
		}
		if negA {
			return -1
		}
		return 1
	}
	c := compareDigits(trimSignAndZeros(a), trimSignAndZeros(b))
	if negA {
		return -c
	}
	return c
}

// trimSignAndZeros drops a leading minus sign and leading zeros:
// strings.TrimLeft(s, "-0") without building its cut set on every call.
func trimSignAndZeros(s string) string {
	i := 0
	for i < len(s) && (s[i] == '-' || s[i] == '0') {
		i++
	}
	return s[i:]
}

func compareDigits(a, b string) int {
	if len(a) != len(b) {
		if len(a) < len(b) {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}

func isZero(s string) bool { return trimSignAndZeros(s) == "" }
