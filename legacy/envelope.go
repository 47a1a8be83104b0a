package legacy

import (
	"unsafe"

	"github.com/tidwall/gjson"
)

// An envelope's members that describe the backend's window (its page
// number, page size, offset, next link) are not true of a page the
// gateway composes from it, so a composed page leaves them out. Which
// names those are is the caller's (Members); the Body records, while it
// scans, the spans of the envelope's bytes to leave out (cuts), and
// AppendPage writes the envelope without them: the envelope is sliced,
// never decoded and encoded again, and the records' bytes stay exactly
// as the backend sent them.
//
// Only the envelope's top-level members are dropped: the siblings of the
// member that holds the records (or, for a nested records_path such as
// data.items, holds them further down). Members nested along the path,
// such as data.page beside data.items, are left as they came: a
// backend's nested paging block is rarer, and reading one would take a
// name's meaning from where it sits, which the gateway cannot know. The
// member that holds the records is never dropped, whatever its name.

// Members is a set of envelope member names, compared with the member's
// name as decoded from JSON (escapes resolved), case-sensitively.
type Members map[string]bool

// cutter records the cuts of one envelope object as its members are
// scanned in order: for each run of consecutive dropped members, the
// bytes from the end of the kept member before it (so its comma goes
// too), or, when the run starts the object, from its first member to the
// next kept one (so the comma after it goes). The records' member is
// kept, so every run has a kept member on one side.
type cutter struct {
	cuts     *[]span
	prevEnd  int // end of the last member's value; -1 before the first
	runStart int // start of the current run of dropped members; -1 when none
	runEnd   int // end of its last member's value
	runFirst bool
}

func newCutter(cuts *[]span) cutter {
	return cutter{cuts: cuts, prevEnd: -1, runStart: -1}
}

// member takes the member whose name starts at keyAt and whose value
// ends just before end.
func (c *cutter) member(keyAt, end int, drop bool) {
	switch {
	case drop && c.runStart < 0:
		c.runFirst = c.prevEnd < 0
		c.runStart = c.prevEnd
		if c.runFirst {
			c.runStart = keyAt
		}
		c.runEnd = end
	case drop:
		c.runEnd = end
	case c.runStart >= 0:
		if c.runFirst {
			*c.cuts = append(*c.cuts, span{c.runStart, keyAt - c.runStart})
		} else {
			*c.cuts = append(*c.cuts, span{c.runStart, c.runEnd - c.runStart})
		}
		c.runStart = -1
	}
	c.prevEnd = end
}

// end closes the object: a run that ends it goes from the kept member
// before it.
func (c *cutter) end() {
	if c.runStart >= 0 && !c.runFirst {
		*c.cuts = append(*c.cuts, span{c.runStart, c.runEnd - c.runStart})
	}
	c.runStart = -1
}

// dropped reports whether the quoted member name raw is in drop.
func (m Members) dropped(raw []byte, escaped bool) bool {
	if len(m) == 0 {
		return false
	}
	if !escaped {
		return m[string(raw[1:len(raw)-1])] // no copy: the compiler looks up the bytes
	}
	return m[gjson.Parse(unsafe.String(&raw[0], len(raw))).Str]
}

// cutMembers records the cuts of the object at i in a body already
// checked valid, for records paths the envelope scan does not follow
// itself (data.items): a pass over the top level only, each member's
// value skipped whole. The member whose value holds the records array is
// kept. A body that is not an object has no members to drop.
func (b *Body) cutMembers(drop Members) {
	s := &scanner{data: b.raw}
	i := s.space(0)
	if len(drop) == 0 || i >= len(s.data) || s.data[i] != '{' {
		return
	}
	if i = s.space(i + 1); i < len(s.data) && s.data[i] == '}' {
		return
	}
	c := newCutter(&b.cuts)
	for i < len(s.data) {
		keyAt := i
		end, escaped, ok := s.str(i)
		if !ok {
			break
		}
		name := s.data[keyAt:end]
		i = s.space(s.space(end) + 1) // past the colon
		valueAt := i
		if i, ok = s.value(i); !ok {
			break
		}
		holds := valueAt <= b.arrayStart && b.arrayEnd <= i
		c.member(keyAt, i, !holds && drop.dropped(name, escaped))
		var last bool
		if i, last, ok = s.next(i, '}'); !ok || last {
			break
		}
	}
	c.end()
}

// appendKept appends raw[from:to] to dst, less the cuts.
func (b *Body) appendKept(dst []byte, from, to int) []byte {
	for _, c := range b.cuts {
		if c.at+c.n <= from || c.at >= to {
			continue
		}
		dst = append(dst, b.raw[from:c.at]...)
		from = c.at + c.n
	}
	return append(dst, b.raw[from:to]...)
}

// cutBytes is the number of bytes the cuts leave out.
func (b *Body) cutBytes() int {
	n := 0
	for _, c := range b.cuts {
		n += c.n
	}
	return n
}

// AppendEnvelope appends to dst what AppendPage writes around the records
// array, less the dropped members: the body's bytes before the array,
// then those after it; at is where the array goes in out. A page composed
// from records kept apart from their answer (as a read-ahead store shared
// by several instances keeps them) is then out[:at], '[', the records
// joined by commas, ']' and out[at:]: byte for byte AppendPage's. A bare
// array has no envelope and appends nothing.
func (b *Body) AppendEnvelope(dst []byte) (out []byte, at int) {
	dst = b.appendKept(dst, 0, b.arrayStart)
	at = len(dst)
	return b.appendKept(dst, b.arrayEnd, len(b.raw)), at
}
