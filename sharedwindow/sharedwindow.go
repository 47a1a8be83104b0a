// Package sharedwindow is how a window's backend answer travels through
// the shared read-ahead store (readahead_store) between instances: what
// composing pages from it needs beside its records, which the store keeps
// itself. Any instance decodes what any other encoded, so the encoding is
// versioned, and bytes it cannot read whole are no window at all: the page
// is then read from the backend.
//
// The bytes: a version byte, the backend headers a page passes on, each
// name and value framed by its length (package frame), then the
// envelope's split (4 bytes, big-endian) and the envelope (legacy's
// AppendEnvelope). The headers go by name, sorted, so that an answer
// encodes to the same bytes each time. Only backend response headers and
// body bytes: never a query or a request header, so nothing of the
// caller's credentials.
package sharedwindow

import (
	"encoding/binary"
	"net/http"
	"slices"
	"strings"

	"github.com/helpdesk-gateway/gateway/frame"
	"github.com/helpdesk-gateway/gateway/pageheader"
)

// Version is the first byte of every encoding; another one decodes to no
// window.
const Version = 1

// Answer is a window's answer as the store gave it back: its headers and
// envelope. It is read by every request the window serves, so nothing of
// it is ever written: its header values are slices of one string, capped
// so that an append copies them.
type Answer struct {
	Header http.Header
	Env    string // the envelope, its records left out
	At     int    // where the records array goes in Env
}

// Encode encodes an answer's header, envelope and split. The headers a
// page never carries (drop, the canonical names of drop_backend_headers;
// the answer's own; its trailers: pageheader.Keeps) are left out: they
// cost the store bytes and change nothing.
func Encode(header http.Header, drop map[string]bool, env []byte, at int) []byte {
	var room [16]string
	names := room[:0]
	size := 64 + len(env)
	for k, v := range header {
		if pageheader.Keeps(k, drop) {
			names = append(names, k)
			size += len(k) + 8
			for _, s := range v {
				size += len(s) + 4
			}
		}
	}
	slices.Sort(names) // the same answer, the same bytes
	out := make([]byte, 0, size)
	out = append(out, Version)
	out = binary.AppendUvarint(out, uint64(len(names)))
	for _, k := range names {
		out = frame.AppendValues(frame.AppendField(out, k), header[k])
	}
	out = binary.BigEndian.AppendUint32(out, uint32(at))
	return append(out, env...)
}

// Decode reads Encode's bytes, from one copy of them (the store's bytes
// are its own, and the answer lives as long as the window serves). Bytes
// it cannot read whole (another version, or damaged), or holding a header
// no backend answer could have carried, give false.
func Decode(data []byte) (Answer, bool) {
	d := frame.Reader{Data: string(data)}
	if d.Byte() != Version {
		return Answer{}, false
	}
	// Each header takes two bytes at least, each value one.
	n := d.Uvarint()
	if n > uint64(len(d.Data)/2) {
		return Answer{}, false
	}
	// Most headers have one value: one array holds them all, and one
	// with more grows it (slices of the old array stay as they are).
	values := make([]string, 0, n+2)
	a := Answer{Header: make(http.Header, n)}
	for range n {
		k := d.Field()
		m := d.Uvarint()
		if m > uint64(len(d.Data)) {
			return Answer{}, false
		}
		if !pageheader.ValidName(k) {
			return Answer{}, false // not a header a backend sent
		}
		from := len(values)
		for range m {
			v := d.Field()
			if strings.ContainsAny(v, "\r\n\x00") {
				return Answer{}, false
			}
			values = append(values, v)
		}
		a.Header[k] = values[from:len(values):len(values)]
	}
	at := d.Uint32()
	if d.Bad || at > uint64(len(d.Data)) {
		return Answer{}, false
	}
	a.Env, a.At = d.Data, int(at)
	return a, true
}
