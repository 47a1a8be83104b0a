package frame

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestRoundTrip: what AppendField and AppendValues write, Reader reads
// back, and two sets of parts that join to the same text frame apart.
func TestRoundTrip(t *testing.T) {
	b := AppendValues(AppendField(nil, "Vary"), []string{"Origin", ""})
	d := Reader{Data: string(b)}
	assert.Equal(t, "Vary", d.Field())
	assert.Equal(t, uint64(2), d.Uvarint())
	assert.Equal(t, "Origin", d.Field())
	assert.Equal(t, "", d.Field())
	assert.False(t, d.Bad)
	assert.Empty(t, d.Data)

	assert.NotEqual(t, AppendField(AppendField(nil, "ab"), "c"), AppendField(AppendField(nil, "a"), "bc"))
}

// TestReaderPastEnd: a read past the bytes sets Bad and gives zero.
func TestReaderPastEnd(t *testing.T) {
	for name, read := range map[string]func(d *Reader) any{
		"byte":    func(d *Reader) any { return d.Byte() },
		"uvarint": func(d *Reader) any { return d.Uvarint() },
		"uint32":  func(d *Reader) any { return d.Uint32() },
		"field":   func(d *Reader) any { return d.Field() },
	} {
		d := Reader{Data: "\xff"}
		if name == "byte" {
			d.Data = ""
		}
		v := read(&d)
		assert.True(t, d.Bad, name)
		assert.Zero(t, v, name)
	}
	d := Reader{Data: "\x05ab"}
	assert.Equal(t, "", d.Field(), "a length past the end")
	assert.True(t, d.Bad)
}
