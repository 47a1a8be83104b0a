package reference

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"time"
)

// object writes one JSON object, member by member, in the order written.
// Records are encoded with it rather than with json.Marshal because
// encoding is most of the cost of making a large data set; a test checks
// that a ticket comes out as json.Marshal would write it.
type object struct{ b []byte }

func newObject(size int) *object { return &object{b: append(make([]byte, 0, size), '{')} }

func (o *object) key(k string) *object {
	if len(o.b) > 1 {
		o.b = append(o.b, ',')
	}
	o.b = append(appendString(o.b, k), ':')
	return o
}

func (o *object) str(k, v string) *object {
	o.key(k).b = appendString(o.b, v)
	return o
}

func (o *object) int(k string, v int64) *object {
	o.key(k).b = strconv.AppendInt(o.b, v, 10)
	return o
}

func (o *object) bool(k string, v bool) *object {
	o.key(k).b = strconv.AppendBool(o.b, v)
	return o
}

// intText writes v as a JSON string of digits, as LiveAgent writes many
// numbers, without making the string first.
func (o *object) intText(k string, v int64) *object {
	o.key(k).b = append(strconv.AppendInt(append(o.b, '"'), v, 10), '"')
	return o
}

// dateTime writes t as "YYYY-MM-DD hh:mm:ss" (see dateTime), or null when
// set is false.
func (o *object) dateTime(k string, t time.Time, set bool) *object {
	if !set {
		o.key(k).b = append(o.b, "null"...)
		return o
	}
	o.key(k).b = append(appendDateTime(append(o.b, '"'), t), '"')
	return o
}

// optional writes v, or null when it is empty.
func (o *object) optional(k, v string) *object {
	if v == "" {
		o.key(k).b = append(o.b, "null"...)
		return o
	}
	return o.str(k, v)
}

// stringList writes a list of strings, or null for a nil one.
func (o *object) stringList(k string, v []string) *object {
	if v == nil {
		o.key(k).b = append(o.b, "null"...)
		return o
	}
	o.key(k).b = append(o.b, '[')
	for i, s := range v {
		if i > 0 {
			o.b = append(o.b, ',')
		}
		o.b = appendString(o.b, s)
	}
	o.b = append(o.b, ']')
	return o
}

// customFields writes m as LiveAgent's Ticket model has custom fields: a
// list of {"code": ..., "value": ...}, in code order.
func (o *object) customFields(k string, m CustomFields) *object {
	o.key(k).b = appendCustomFields(o.b, m)
	return o
}

// appendCustomFields appends m as customFields writes it.
func appendCustomFields(b []byte, m CustomFields) []byte {
	b = append(b, '[')
	for i, code := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b = append(b, ',')
		}
		field := newObject(32).str("code", code).str("value", m[code])
		b = append(b, field.json()...)
	}
	return append(b, ']')
}

// json returns the finished object.
func (o *object) json() []byte { return append(o.b, '}') }

// appendString appends s as a JSON string. Plain text, the common case, is
// copied as is; anything else is left to encoding/json, so the escaping is
// always its own.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			quoted, _ := json.Marshal(s) // a string always encodes
			return append(b, quoted...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
