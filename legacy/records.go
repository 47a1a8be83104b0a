package legacy

import (
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

	IDs     []string // ids as text: a string id unquoted, a number as written
	Records [][]byte
}

// BodyError says why a backend answer cannot be used.
type BodyError struct{ Reason string }

func (e *BodyError) Error() string { return "unusable backend answer: " + e.Reason }

// ParseBody finds the records array in raw, at the gjson path recordsPath
// or, when that is empty, as the whole body, and the id of each record at
// idField. raw must not change while the Body is in use: the ids and
// records point into it.
func ParseBody(raw []byte, recordsPath, idField string) (*Body, error) {
	if len(raw) == 0 || !gjson.ValidBytes(raw) {
		return nil, &BodyError{"the body is not JSON"}
	}
	text := unsafe.String(unsafe.SliceData(raw), len(raw))
	var arr gjson.Result
	if recordsPath == "" {
		arr = gjson.Parse(strings.TrimSpace(text))
		arr.Index = strings.IndexByte(text, arr.Raw[0])
	} else {
		arr = gjson.Get(text, recordsPath)
	}
	if !arr.IsArray() {
		where := "the body"
		if recordsPath != "" {
			where = fmt.Sprintf("records_path %q", recordsPath)
		}
		return nil, &BodyError{where + " is not an array of records"}
	}
	if arr.Index <= 0 && recordsPath != "" || arr.Index+len(arr.Raw) > len(raw) || text[arr.Index:arr.Index+len(arr.Raw)] != arr.Raw {
		return nil, &BodyError{fmt.Sprintf("records_path %q does not name an array inside the body", recordsPath)}
	}
	b := &Body{raw: raw, arrayStart: arr.Index, arrayEnd: arr.Index + len(arr.Raw)}
	var err error
	arr.ForEach(func(_, rec gjson.Result) bool {
		n := len(b.IDs)
		if !rec.IsObject() {
			err = &BodyError{fmt.Sprintf("record %d is not an object", n)}
			return false
		}
		id := rec.Get(idField)
		switch id.Type {
		case gjson.String:
			b.IDs = append(b.IDs, id.Str)
		case gjson.Number:
			b.IDs = append(b.IDs, id.Raw)
		default:
			if id.Exists() {
				err = &BodyError{fmt.Sprintf("record %d has an id at %q that is neither a string nor a number", n, idField)}
			} else {
				err = &BodyError{fmt.Sprintf("record %d has no id at %q", n, idField)}
			}
			return false
		}
		b.Records = append(b.Records, raw[rec.Index:rec.Index+len(rec.Raw):rec.Index+len(rec.Raw)])
		return true
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

// AppendPage appends to dst the body with its records array replaced by
// records, keeping everything around the array as the backend sent it.
func (b *Body) AppendPage(dst []byte, records [][]byte) []byte {
	dst = append(dst, b.raw[:b.arrayStart]...)
	dst = append(dst, '[')
	for i, r := range records {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, r...)
	}
	dst = append(dst, ']')
	return append(dst, b.raw[b.arrayEnd:]...)
}

// PageSize returns the length of AppendPage's output for records, so that
// the caller can size its buffer once.
func (b *Body) PageSize(records [][]byte) int {
	n := len(b.raw) - (b.arrayEnd - b.arrayStart) + 2 + max(len(records)-1, 0)
	for _, r := range records {
		n += len(r)
	}
	return n
}
