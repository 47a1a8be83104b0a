package legacy

import (
	"bytes"
	"fmt"
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"
)

// Body is a backend list answer with its records located in it. Records
// are sub-slices of the answer's bytes: they are never decoded and encoded
// again, so a client gets each record exactly as the backend sent it.
type Body struct {
	raw        []byte
	arrayStart int // span of the records array in raw
	arrayEnd   int
	cuts       []span // envelope members a page leaves out, ascending; see Members

	IDs     []string // ids as text: a string id unquoted, a number as written
	Records [][]byte

	scan scanner // kept with the Body, so that its stack is reused too
}

// BodyError says why a backend answer cannot be used.
type BodyError struct{ Reason string }

func (e *BodyError) Error() string { return "unusable backend answer: " + e.Reason }

// ParseBody finds the records array in raw, at the gjson path recordsPath
// or, when that is empty, as the whole body, and the id of each record at
// idField. raw must not change while the Body is in use: the ids and
// records point into it.
func ParseBody(raw []byte, recordsPath, idField string) (*Body, error) {
	b := new(Body)
	if err := b.Parse(raw, recordsPath, idField); err != nil {
		return nil, err
	}
	return b, nil
}

// Parse is ParseBody into b, reusing the room of b's slices: a caller that
// parses many answers may keep Bodies for reuse. On error b holds nothing
// of use.
//
// The body is checked, its array found and each record and id sliced out
// in one pass, when the array is the body or at a plain key of it and the
// id is at a plain key of each record, as is usual; other gjson paths cost
// a pass more.
func (b *Body) Parse(raw []byte, recordsPath, idField string) error {
	return b.ParseWithout(raw, recordsPath, idField, nil)
}

// ParseWithout is Parse for a body whose envelope members named in drop
// (the backend's paging members: page, per_page, next, ...) are left out
// of the pages AppendPage writes. It costs a lookup per top-level member
// of an envelope, nothing for a bare array; a records path the scan does
// not follow itself (data.items) costs a pass over the top level more.
func (b *Body) ParseWithout(raw []byte, recordsPath, idField string, drop Members) error {
	*b = Body{raw: raw, IDs: b.IDs[:0], Records: b.Records[:0], cuts: b.cuts[:0], scan: scanner{data: raw, stack: b.scan.stack[:0], keys: b.scan.keys[:0]}}
	s := &b.scan
	i := s.space(0)
	var err error
	switch {
	case recordsPath == "" && i < len(raw) && raw[i] == '[':
		b.arrayStart = i
		i, err = b.records(s, i, idField)
		b.arrayEnd = i
	case simpleKey(recordsPath) && i < len(raw) && raw[i] == '{':
		i, err = b.envelope(s, i, recordsPath, idField, drop)
	default:
		if err := b.parseByPath(s, recordsPath, idField); err != nil {
			return err
		}
		b.cutMembers(drop)
		return nil
	}
	if err == nil && s.space(i) != len(raw) {
		err = errNotJSON
	}
	if err != nil {
		// An answer that is not JSON says so first, wherever the scan
		// stopped; only then what is wrong with its records.
		if err != errNotJSON {
			if full := (&scanner{data: raw}); !full.valid() {
				s = full
				err = errNotJSON
			}
		}
		if err == errNotJSON && s.deep {
			return &BodyError{fmt.Sprintf("the body nests deeper than %d levels", maxDepth)}
		}
		b.IDs, b.Records, b.cuts = b.IDs[:0], b.Records[:0], b.cuts[:0]
		return err
	}
	return nil
}

var errNotJSON = &BodyError{"the body is not JSON"}

// envelope scans the object at i, whose member named key holds the
// records. gjson takes the first member of that name, and so does this.
// The other members named in drop are recorded as cuts.
func (b *Body) envelope(s *scanner, i int, key, idField string, drop Members) (int, error) {
	found := false
	c := newCutter(&b.cuts)
	if !s.enter() {
		return i, errNotJSON
	}
	i = s.space(i + 1)
	if i < len(s.data) && s.data[i] == '}' {
		return i + 1, notAnArray(key)
	}
	for {
		if i >= len(s.data) || s.data[i] != '"' {
			return i, errNotJSON
		}
		keyAt := i
		var escaped, ok, end bool
		if i, escaped, ok = s.str(i); !ok {
			return i, errNotJSON
		}
		match := !found && keyIs(s.data[keyAt:i], escaped, key)
		cut := !match && drop.dropped(s.data[keyAt:i], escaped)
		if i = s.space(i); i >= len(s.data) || s.data[i] != ':' {
			return i, errNotJSON
		}
		i = s.space(i + 1)
		if match {
			found = true
			if i >= len(s.data) || s.data[i] != '[' {
				return i, notAnArray(key)
			}
			b.arrayStart = i
			var err error
			if i, err = b.records(s, i, idField); err != nil {
				return i, err
			}
			b.arrayEnd = i
		} else if i, ok = s.value(i); !ok {
			return i, errNotJSON
		}
		c.member(keyAt, i, cut)
		if i, end, ok = s.next(i, '}'); !ok {
			return i, errNotJSON
		}
		if end {
			if !found {
				return i, notAnArray(key)
			}
			c.end()
			s.depth--
			return i, nil
		}
	}
}

func notAnArray(recordsPath string) error {
	where := "the body"
	if recordsPath != "" {
		where = fmt.Sprintf("records_path %q", recordsPath)
	}
	return &BodyError{where + " is not an array of records"}
}

// bodyIsAnEnvelope explains a body that is an object where records_path
// is unset: when a member (or a member of a member) holds an array of
// objects, it names the records_path that would read it.
func bodyIsAnEnvelope(body gjson.Result) error {
	var path string
	var find func(obj gjson.Result, prefix string, depth int)
	find = func(obj gjson.Result, prefix string, depth int) {
		obj.ForEach(func(k, v gjson.Result) bool {
			name := prefix + k.Str
			switch {
			case !simpleKey(k.Str) || len(name) > 64: // a message quotes it
			case v.IsArray() && (len(v.Array()) == 0 || v.Array()[0].IsObject()):
				path = name
			case v.IsObject() && depth > 0:
				find(v, name+".", depth-1)
			}
			return path == ""
		})
	}
	find(body, "", 1)
	if path == "" {
		return &BodyError{"the body is an object, not an array of records, and no member of it holds records"}
	}
	return &BodyError{fmt.Sprintf("the body is an object, not an array of records; set records_path %s to read the records it holds there", path)}
}

// parseByPath serves paths the scanner cannot follow itself: it checks
// the body, lets gjson find the array, then scans the array.
func (b *Body) parseByPath(s *scanner, recordsPath, idField string) error {
	if !s.valid() {
		if s.deep {
			return &BodyError{fmt.Sprintf("the body nests deeper than %d levels", maxDepth)}
		}
		return errNotJSON
	}
	raw := b.raw
	text := unsafe.String(unsafe.SliceData(raw), len(raw))
	var arr gjson.Result
	if recordsPath == "" {
		arr = gjson.Parse(strings.TrimSpace(text))
		arr.Index = strings.IndexByte(text, arr.Raw[0])
	} else {
		arr = gjson.Get(text, recordsPath)
	}
	if !arr.IsArray() {
		if recordsPath == "" && arr.IsObject() {
			return bodyIsAnEnvelope(arr)
		}
		return notAnArray(recordsPath)
	}
	if arr.Index <= 0 && recordsPath != "" || arr.Index+len(arr.Raw) > len(raw) || text[arr.Index:arr.Index+len(arr.Raw)] != arr.Raw {
		return &BodyError{fmt.Sprintf("records_path %q does not name an array inside the body", recordsPath)}
	}
	b.arrayStart, b.arrayEnd = arr.Index, arr.Index+len(arr.Raw)
	if _, err := b.records(&scanner{data: raw}, arr.Index, idField); err != nil {
		b.IDs, b.Records = b.IDs[:0], b.Records[:0]
		if err == errNotJSON {
			// The body is valid, so gjson found its "array" where none
			// starts, as it can inside a string.
			return &BodyError{fmt.Sprintf("records_path %q does not name an array inside the body", recordsPath)}
		}
		return err
	}
	return nil
}

// records scans the array at i, appending each record and its id.
func (b *Body) records(s *scanner, i int, idField string) (int, error) {
	if !s.enter() {
		return i, errNotJSON
	}
	i = s.space(i + 1)
	if i < len(s.data) && s.data[i] == ']' {
		s.depth--
		return i + 1, nil
	}
	plain := simpleKey(idField)
	for n := 0; ; n++ {
		if i >= len(s.data) {
			return i, errNotJSON
		}
		if s.data[i] != '{' {
			if _, ok := s.value(i); !ok {
				return i, errNotJSON
			}
			return i, &BodyError{fmt.Sprintf("record %d is not an object", n)}
		}
		start := i
		var id gjson.Result
		if plain {
			end, at, atEnd, ok := s.walk(i, idField)
			if !ok {
				return end, errNotJSON
			}
			if i = end; at >= 0 {
				id = rawValue(s.data[at:atEnd])
			}
		} else {
			var ok bool
			if i, ok = s.value(i); !ok {
				return i, errNotJSON
			}
			id = gjson.Get(unsafe.String(&s.data[start], i-start), idField)
		}
		text, err := idOf(id, n, idField)
		if err != nil {
			return i, err
		}
		b.IDs = append(b.IDs, text)
		b.Records = append(b.Records, s.data[start:i:i])
		var ok, end bool
		if i, end, ok = s.next(i, ']'); !ok {
			return i, errNotJSON
		}
		if end {
			s.depth--
			return i, nil
		}
	}
}

// rawValue wraps a scanned value for idOf. A string without escapes and a
// number point into the body, as gjson's would; only an escaped string is
// decoded.
func rawValue(v []byte) gjson.Result {
	text := unsafe.String(unsafe.SliceData(v), len(v))
	switch c := v[0]; {
	case c == '"':
		if bytes.IndexByte(v[1:len(v)-1], '\\') < 0 {
			return gjson.Result{Type: gjson.String, Raw: text, Str: text[1 : len(text)-1]}
		}
		return gjson.Parse(text)
	case c == '-' || isDigit(c):
		return gjson.Result{Type: gjson.Number, Raw: text}
	case c == 'n':
		return gjson.Result{Type: gjson.Null, Raw: text}
	}
	return gjson.Result{Type: gjson.JSON, Raw: text} // true, false, an object or an array
}

// idOf reads a record's id as text: a string unquoted, a number as written.
func idOf(id gjson.Result, n int, idField string) (string, error) {
	switch id.Type {
	case gjson.String:
		return id.Str, nil
	case gjson.Number:
		return id.Raw, nil
	}
	if id.Exists() {
		return "", &BodyError{fmt.Sprintf("record %d has an id at %q that is neither a string nor a number; set id_field if it names the wrong field", n, idField)}
	}
	return "", &BodyError{fmt.Sprintf("record %d has no id at %q; set id_field to the field (a gjson path) that holds each record's id", n, idField)}
}

// keyIs reports whether the quoted key string raw is key, comparing a key
// with escapes as gjson does, once decoded.
func keyIs(raw []byte, escaped bool, key string) bool {
	if !escaped {
		return len(raw) == len(key)+2 && string(raw[1:len(raw)-1]) == key
	}
	return gjson.Parse(unsafe.String(&raw[0], len(raw))).Str == key
}

// AppendPage appends to dst the body with its records array replaced by
// records, keeping everything around the array as the backend sent it but
// the envelope members ParseWithout was told to drop.
func (b *Body) AppendPage(dst []byte, records [][]byte) []byte {
	dst = b.appendKept(dst, 0, b.arrayStart)
	dst = AppendArray(dst, records)
	return b.appendKept(dst, b.arrayEnd, len(b.raw))
}

// AppendArray appends records to dst as a JSON array: each record is
// already JSON, as the backend sent it.
func AppendArray(dst []byte, records [][]byte) []byte {
	dst = append(dst, '[')
	for i, r := range records {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, r...)
	}
	return append(dst, ']')
}

// PageSize returns the length of AppendPage's output for records, so that
// the caller can size its buffer once.
func (b *Body) PageSize(records [][]byte) int {
	n := len(b.raw) - (b.arrayEnd - b.arrayStart) + 2 + max(len(records)-1, 0) - b.cutBytes()
	for _, r := range records {
		n += len(r)
	}
	return n
}
