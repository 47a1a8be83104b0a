package legacy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPageInPlace: where the page can be cut out of the answer itself it
// is byte for byte AppendPage's page, and the answer's ids are untouched;
// elsewhere nothing changes and AppendPage serves.
func TestPageInPlace(t *testing.T) {
	const three = `[{"id":1},{"id":"2","a":[1,2]},{"id":3}]`
	for _, tc := range []struct {
		name, body, path string
		from, to         int
		ok               bool
	}{
		{"all", three, "", 0, 3, true},
		{"first", three, "", 0, 1, true},
		{"middle", three, "", 1, 2, true},
		{"last two", three, "", 1, 3, true},
		{"empty page", three, "", 1, 1, false},
		{"white space before the array", " " + three, "", 0, 2, false},
		{"white space after the array", three + "\n", "", 0, 2, false},
		{"white space between records", `[{"id":1}, {"id":2}]`, "", 0, 2, false},
		{"white space before a record", `[ {"id":1},{"id":2}]`, "", 0, 1, false},
		{"white space after a record", `[{"id":1},{"id":2} ]`, "", 1, 2, false},
		{"one record not next to white space", `[{"id":1}, {"id":2}]`, "", 0, 1, true},
		{"envelope", `{"data":[{"id":1},{"id":2}]}`, "data", 0, 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := ParseBody([]byte(tc.body), tc.path, "id")
			require.NoError(t, err)
			page := string(want.AppendPage(nil, want.Records[tc.from:tc.to]))

			raw := []byte(tc.body)
			b, err := ParseBody(raw, tc.path, "id")
			require.NoError(t, err)
			got, ok := b.PageInPlace(b.Records[tc.from:tc.to])
			assert.Equal(t, tc.ok, ok)
			if !ok {
				assert.Equal(t, tc.body, string(raw), "nothing changed")
				return
			}
			assert.Equal(t, page, string(got))
			assert.Equal(t, want.IDs, b.IDs, "ids lie inside records, untouched")
		})
	}
}

// TestPageInPlaceRefusesOtherAnswers: a page stitched from two answers, or
// records from another answer, is not cut out of this one.
func TestPageInPlaceRefusesOtherAnswers(t *testing.T) {
	const body = `[{"id":1},{"id":2}]`
	a, err := ParseBody([]byte(body), "", "id")
	require.NoError(t, err)
	b, err := ParseBody([]byte(body), "", "id")
	require.NoError(t, err)
	for name, records := range map[string][][]byte{
		"stitched":       {a.Records[1], b.Records[0]},
		"other answer":   b.Records,
		"an empty slice": {a.Records[0][:0]},
	} {
		_, ok := a.PageInPlace(records)
		assert.False(t, ok, name)
	}
	assert.Equal(t, body, string(a.raw))
}
