// Package cursor is what a cursor id is: the codec of the _cursor value a
// client sends back (base64 of {"id":"<last id you have>"}) and the order
// of record ids under the backend's id sort, which says whether an id can
// be carried in a cursor at all and where it falls against another.
//
// It lies apart from package translate so that the engine, which only asks
// ids to be checked and compared, can be read without the codec's fast
// path, and the codec fuzzed without the engine. It holds no state, and
// imports no package of the gateway's but internal/jsonstr.
package cursor

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/helpdesk-gateway/gateway/internal/jsonstr"
)

// MaxIDLength bounds a record id, in bytes, in a cursor and in a backend
// answer: an id costs memory in the position index and length in every
// cursor, and an id past it is not what a help desk makes.
const MaxIDLength = 512

// MaxLength bounds the _cursor value a client may send, in bytes of
// its base64 text. It is the length of the longest cursor Encode
// makes, an id of MaxIDLength bytes that all need a six-byte JSON escape,
// so every next_page_cursor the gateway sends is accepted back.
const MaxLength = (len(`{"id":""}`) + 6*MaxIDLength + 2) / 3 * 4

// Error says why a _cursor value was refused; its text is meant for
// the client.
type Error struct{ Reason string }

func (e *Error) Error() string {
	return "invalid _cursor: " + e.Reason + `; a cursor is base64 of {"id":"<last id you have>"}`
}

// Decode returns the id carried by a _cursor value as it came out of
// the query decoder.
//
// It is lenient where clients commonly slip: the standard and URL-safe
// alphabets are accepted, with or without padding, and a '+' that the query
// decoder turned into a space counts as '+'. The JSON must be an object
// whose "id" member is a non-empty string or a whole number (taken as its
// decimal text); other members are ignored.
func Decode(value string) (string, error) {
	if id, ok := exactCursorID(value); ok {
		return id, nil
	}
	return decode(value)
}

// decode is Decode for every input: the lenient decoding, with
// gjson reading the JSON.
func decode(value string) (string, error) {
	if value == "" {
		return "", &Error{"it is empty"}
	}
	if len(value) > MaxLength {
		return "", &Error{fmt.Sprintf("it is longer than %d bytes", MaxLength)}
	}
	text := strings.TrimRight(strings.ReplaceAll(value, " ", "+"), "=")
	enc := base64.RawStdEncoding
	if strings.ContainsAny(text, "-_") {
		enc = base64.RawURLEncoding
	}
	raw, err := enc.DecodeString(text)
	if err != nil {
		return "", &Error{"it is not base64"}
	}
	if !gjson.ValidBytes(raw) || !utf8.Valid(raw) {
		return "", &Error{"it does not decode to JSON"}
	}
	doc := gjson.ParseBytes(raw)
	if !doc.IsObject() {
		return "", &Error{"it does not decode to a JSON object"}
	}
	id := doc.Get("id")
	switch id.Type {
	case gjson.String:
		switch {
		case id.Str == "":
			return "", &Error{"its id is empty"}
		case len(id.Str) > MaxIDLength:
			return "", &Error{fmt.Sprintf("its id is longer than %d bytes", MaxIDLength)}
		}
		return id.Str, nil
	case gjson.Number:
		if len(id.Raw) > MaxIDLength {
			return "", &Error{fmt.Sprintf("its id is longer than %d bytes", MaxIDLength)}
		}
		if !isWholeNumber(id.Raw) {
			return "", &Error{"its id is a number but not a whole number"}
		}
		return id.Raw, nil
	case gjson.Null:
		if !id.Exists() {
			return "", &Error{`it has no "id" member`}
		}
	}
	return "", &Error{"its id is not a string"}
}

// maxExactCursor is the longest cursor exactCursorID decodes: ids of up
// to 150 bytes, past any id a help desk makes; longer ones take the full
// path.
const maxExactCursor = 212

// exactPrefix and exactSuffix are the JSON around the id of a cursor
// Encode makes.
const exactPrefix, exactSuffix = `{"id":"`, `"}`

// stdDecode maps each byte of the standard base64 alphabet to its value,
// and every other byte to 0xFF.
var stdDecode = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xFF
	}
	for i, c := range "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/" {
		t[c] = byte(i)
	}
	return t
}()

// exactCursorID is Decode's fast path, for the cursors clients send
// back most: exactly what Encode makes, standard padded base64 of
// {"id":"<id>"} with an id that needs no JSON escape. It decodes into a
// stack buffer and checks the JSON's few bytes itself, where the full path
// decodes into the heap and has gjson validate and read the object (about
// 0.8 µs a page in the gateway's profile, against 0.1 µs). It reports
// false for anything else, which the full path then reads, so every input
// gets the answer decode gives it (FuzzDecodeCursor holds them to
// each other).
func exactCursorID(value string) (string, bool) {
	if len(value) == 0 || len(value)%4 != 0 || len(value) > maxExactCursor {
		return "", false
	}
	var buf [maxExactCursor / 4 * 3]byte
	n := 0
	for i := 0; i < len(value); i += 4 {
		a, b, c, d := stdDecode[value[i]], stdDecode[value[i+1]], stdDecode[value[i+2]], stdDecode[value[i+3]]
		last := i+4 == len(value)
		switch {
		case a|b|c|d < 64:
			buf[n], buf[n+1], buf[n+2] = a<<2|b>>4, b<<4|c>>2, c<<6|d
			n += 3
		case last && a|b|c < 64 && value[i+3] == '=':
			buf[n], buf[n+1] = a<<2|b>>4, b<<4|c>>2
			n += 2
		case last && a|b < 64 && value[i+2] == '=' && value[i+3] == '=':
			buf[n] = a<<2 | b>>4
			n++
		default:
			return "", false
		}
	}
	raw := buf[:n]
	if len(raw) <= len(exactPrefix)+len(exactSuffix) || string(raw[:len(exactPrefix)]) != exactPrefix ||
		string(raw[len(raw)-len(exactSuffix):]) != exactSuffix {
		return "", false
	}
	id := raw[len(exactPrefix) : len(raw)-len(exactSuffix)]
	for _, c := range id {
		if c == '"' || c == '\\' || c < ' ' {
			return "", false
		}
	}
	if !utf8.Valid(id) {
		return "", false
	}
	return string(id), true
}

// Encode returns the next_page_cursor value for id: standard padded
// base64 of exactly {"id":"<id>"}.
func Encode(id string) string {
	buf := make([]byte, 0, len(id)+16)
	buf = append(buf, `{"id":`...)
	buf = jsonstr.Append(buf, id)
	buf = append(buf, '}')
	return base64.StdEncoding.EncodeToString(buf)
}

// isWholeNumber reports whether s is an optionally negative run of digits.
func isWholeNumber(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// errEmptyID is returned by Order.Check for an empty id.
var errEmptyID = errors.New("the id is empty")

// AppendJSONMessage appends {"message":"<message>"}, the body of every
// error the gateway answers with.
func AppendJSONMessage(dst []byte, message string) []byte {
	dst = append(dst, `{"message":`...)
	dst = jsonstr.Append(dst, message)
	return append(dst, '}')
}
