package legacy

import "unsafe"

// PageInPlace returns the page of records as bytes of the answer itself:
// when the answer is a bare array whose records lie in a row, separated
// by single commas, the byte before the first becomes '[' and the byte
// after the last ']', and the page is the slice between them. Writing a
// page then copies nothing and needs no buffer of its own; the bytes are
// exactly AppendPage's. The answer's records other than these must not be
// used afterwards (their separators may have changed; ids, inside the
// records, do not). It reports false, changing nothing, when the page
// cannot be cut so: an envelope, white space between records, records
// from another answer, or none.
func (b *Body) PageInPlace(records [][]byte) ([]byte, bool) {
	raw := b.raw
	if len(records) == 0 || b.arrayStart != 0 || b.arrayEnd != len(raw) {
		return nil, false
	}
	start, ok := b.offset(records[0])
	if !ok || start == 0 || raw[start-1] != ',' && raw[start-1] != '[' {
		return nil, false
	}
	end := start + len(records[0])
	for _, r := range records[1:] {
		at, ok := b.offset(r)
		if !ok || at != end+1 || raw[end] != ',' {
			return nil, false
		}
		end = at + len(r)
	}
	if end >= len(raw) || raw[end] != ',' && raw[end] != ']' {
		return nil, false
	}
	raw[start-1], raw[end] = '[', ']'
	return raw[start-1 : end+1], true
}

// offset returns where r, a record sliced from this answer, starts in it;
// false when r is not inside the answer's bytes.
func (b *Body) offset(r []byte) (int, bool) {
	if len(r) == 0 || len(b.raw) == 0 {
		return 0, false
	}
	// The difference of two addresses, never turned back into a pointer:
	// whether r lies inside raw, and where.
	d := uintptr(unsafe.Pointer(unsafe.SliceData(r))) - uintptr(unsafe.Pointer(unsafe.SliceData(b.raw)))
	if d >= uintptr(len(b.raw)) || uintptr(len(r)) > uintptr(len(b.raw))-d {
		return 0, false
	}
	return int(d), true
}
