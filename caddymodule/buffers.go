package caddymodule

import (
	"net/http"
	"sync"
	"unsafe"

	"github.com/helpdesk-gateway/gateway/legacy"
)

// A page reads one or more backend answers and writes one page; both are
// as large as the page. Their buffers are kept between requests, so that
// serving a page costs no allocation in proportion to its size, and
// memory in flight stays the page's own: the answers read (each at most
// max_body_size) and the page written.

// maxPooledBuffer is the largest buffer kept for reuse: an answer of a
// thousand records is well under it, and one near max_body_size should not
// stay in memory after its request.
const maxPooledBuffer = 1 << 20

// answerBuf is one backend answer's bytes and what was read out of them;
// the Body's ids and records point into raw.
type answerBuf struct {
	raw  []byte
	body legacy.Body

	// answer is the sub-request's writer, kept with the buffer so that
	// neither it nor its header map is made anew for each call.
	answer capture

	// kept says Keep handed the answer to a read-ahead window: its bytes
	// are shared from then on, and only read (see page).
	kept bool
}

// newCapture readies the buffer's capture for a call: the body appends to
// raw, and the header map of the last use is emptied and kept. Clearing
// it leaves alone the value slices a client's response took from it.
func (a *answerBuf) newCapture(limit int64) *capture {
	h := a.answer.header
	if h == nil {
		h = make(http.Header)
	}
	clear(h)
	a.answer = capture{header: h, limit: limit, body: a.raw[:0]}
	return &a.answer
}

var (
	answerPool = sync.Pool{New: func() any { return new(answerBuf) }}
	pagePool   = sync.Pool{New: func() any { return new([]byte) }}
)

// size is the memory the answer holds: the buffer itself, its bytes, the
// backing arrays of its ids and records (strings and slices are 16 and 24
// bytes each), each id the parser decoded into a string of its own, and
// the header map.
func (a *answerBuf) size() int {
	bytes := int(unsafe.Sizeof(*a)) + cap(a.raw) + cap(a.body.IDs)*16 + cap(a.body.Records)*24
	for _, id := range a.body.IDs {
		if !within(id, a.raw) {
			bytes += len(id)
		}
	}
	for k, v := range a.answer.header {
		bytes += len(k) + 64 // the map's entry and the value slice
		for _, s := range v {
			bytes += len(s)
		}
	}
	return bytes
}

// within reports whether s's bytes lie in raw's: an id read as written,
// not decoded into a string of its own.
func within(s string, raw []byte) bool {
	if len(s) == 0 || cap(raw) == 0 {
		return len(s) == 0
	}
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	b := uintptr(unsafe.Pointer(unsafe.SliceData(raw)))
	return p >= b && p < b+uintptr(cap(raw))
}

// page returns the client's page of records from this answer. The rule
// that keeps a shared answer intact lives here: the answer of a
// read-ahead window (kept) is read by other requests, so its page is
// composed in a pooled buffer, which the caller gives back with
// putPageBuffer once written; an answer this request alone reads may
// have the page's brackets written into its own bytes
// (legacy.Body.PageInPlace), and buf is then nil.
func (a *answerBuf) page(records [][]byte) (out []byte, buf *[]byte) {
	if !a.kept {
		if out, ok := a.body.PageInPlace(records); ok {
			return out, nil
		}
	}
	buf = pageBuffer(a.body.PageSize(records))
	*buf = a.body.AppendPage(*buf, records)
	return *buf, buf
}

// pageBuffer returns an empty buffer with room for n bytes, to be given
// back with putPageBuffer once written.
func pageBuffer(n int) *[]byte {
	p := pagePool.Get().(*[]byte)
	if cap(*p) < n {
		*p = make([]byte, 0, n)
	}
	*p = (*p)[:0]
	return p
}

func putPageBuffer(p *[]byte) {
	if cap(*p) <= maxPooledBuffer {
		pagePool.Put(p)
	}
}
