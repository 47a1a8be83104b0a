package translate

import (
	"strconv"

	"github.com/helpdesk-gateway/gateway/cursor"
)

// The cursor codec and the id order are package cursor's; these are the
// names they had here before they moved, so that the gateway's other
// packages need not import package cursor too. See there for each.
const (
	MaxIDLength     = cursor.MaxIDLength
	MaxCursorLength = cursor.MaxLength
	Numeric         = cursor.Numeric
	Lexical         = cursor.Lexical
)

type (
	Order       = cursor.Order
	CursorError = cursor.Error
)

// DecodeCursor is cursor.Decode.
func DecodeCursor(value string) (string, error) { return cursor.Decode(value) }

// EncodeCursor is cursor.Encode.
func EncodeCursor(id string) string { return cursor.Encode(id) }

// ParseOrder is cursor.ParseOrder.
func ParseOrder(s string) (Order, error) { return cursor.ParseOrder(s) }

// AppendJSONMessage is cursor.AppendJSONMessage.
func AppendJSONMessage(dst []byte, message string) []byte {
	return cursor.AppendJSONMessage(dst, message)
}

// allWholeNumbers reports whether every id would pass Numeric's Check:
// only then does a numeric order mean something for them.
func allWholeNumbers(ids []string) bool {
	for _, id := range ids {
		if Numeric.Check(id) != nil {
			return false
		}
	}
	return true
}

// numericValue maps a numeric id onto a float for interpolation. Precision
// loss on huge ids only makes a guess less sharp, never a result wrong.
func numericValue(o Order, id string) (float64, bool) {
	if o != Numeric {
		return 0, false
	}
	f, err := strconv.ParseFloat(id, 64)
	return f, err == nil
}
