// Package jsonstr writes Go strings as JSON strings. It is the one encoder
// behind every string the gateway writes into JSON of its own making (a
// cursor's id, an error's message, a client's value quoted in a filter
// error), so they all escape alike and always give valid JSON.
package jsonstr

import "unicode/utf8"

// Append appends s as a JSON string. Control characters are escaped and
// invalid UTF-8 becomes U+FFFD, so the result is always valid JSON whatever
// bytes s holds.
func Append(buf []byte, s string) []byte {
	const hex = "0123456789abcdef"
	buf = append(buf, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				buf = append(buf, '\\', c)
			case c < 0x20:
				buf = append(buf, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				buf = append(buf, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf = append(buf, `\ufffd`...)
		} else {
			buf = append(buf, s[i:i+size]...)
		}
		i += size
	}
	return append(buf, '"')
}
