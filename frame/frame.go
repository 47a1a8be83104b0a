// Package frame writes and reads length-framed fields: a uvarint length,
// then the bytes. The gateway frames whatever it hashes or stores from
// parts a client or a backend chose (a caller's headers, a deployment's
// options, a shared window's headers), so that no two sets of parts frame
// to the same bytes, and a reader knows where each part ends.
package frame

import "encoding/binary"

// AppendField appends s framed by its length.
func AppendField(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// AppendValues appends the values of a header, framed by their count and
// each by its length.
func AppendValues(b []byte, values []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(values)))
	for _, v := range values {
		b = AppendField(b, v)
	}
	return b
}

// Reader reads framed bytes from the front of Data; a read past their
// end sets Bad and gives a zero value, so a caller checks Bad once, at
// the end.
type Reader struct {
	Data string
	Bad  bool
}

// Byte reads one byte.
func (d *Reader) Byte() byte {
	if len(d.Data) == 0 {
		d.Bad = true
		return 0
	}
	b := d.Data[0]
	d.Data = d.Data[1:]
	return b
}

// Uvarint reads a uvarint, as a length or a count.
func (d *Reader) Uvarint() uint64 {
	var v uint64
	for i := 0; i < len(d.Data) && i < binary.MaxVarintLen64; i++ {
		c := d.Data[i]
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			d.Data = d.Data[i+1:]
			return v
		}
	}
	d.Bad = true
	return 0
}

// Uint32 reads four bytes, big-endian.
func (d *Reader) Uint32() uint64 {
	if len(d.Data) < 4 {
		d.Bad = true
		return 0
	}
	v := uint64(d.Data[0])<<24 | uint64(d.Data[1])<<16 | uint64(d.Data[2])<<8 | uint64(d.Data[3])
	d.Data = d.Data[4:]
	return v
}

// Field reads what AppendField wrote, as a slice of Data.
func (d *Reader) Field() string {
	n := d.Uvarint()
	if n > uint64(len(d.Data)) {
		d.Bad = true
		return ""
	}
	s := d.Data[:n]
	d.Data = d.Data[n:]
	return s
}
