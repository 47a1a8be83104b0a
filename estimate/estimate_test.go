package estimate

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadingKeepsOrder: a reading never puts ids out of their order, and
// reads zero-padded numbers behind a prefix in proportion to the numbers.
func TestReadingKeepsOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = "-_0123456789ABCDEFabcdefz~é"
	for range 500 {
		ids := make([]string, 2+r.IntN(8))
		for i := range ids {
			b := []byte("TK")
			for range r.IntN(12) {
				b = append(b, alphabet[r.IntN(len(alphabet))])
			}
			ids[i] = string(b)
		}
		slices.Sort(ids)
		rd := newReading(true, nil, ids...)
		for i := 1; i < len(ids); i++ {
			a, okA := rd.Value(ids[i-1])
			b, okB := rd.Value(ids[i])
			require.True(t, okA && okB)
			require.LessOrEqual(t, a, b, "%q before %q", ids[i-1], ids[i])
		}
	}
	rd := newReading(true, nil, "TK-00001000", "TK-00002000", "TK-00004000")
	v := func(id string) float64 { f, ok := rd.Value(id); require.True(t, ok); return f }
	assert.InDelta(t, 2.0, (v("TK-00004000")-v("TK-00002000"))/(v("TK-00002000")-v("TK-00001000")), 1e-9)
	_, ok := rd.Value("TK")
	assert.False(t, ok, "an id outside the reading's prefix has no value in it")
	// Hex ids read in radix 16, and a list's own symbols are the radix
	// when known: Crockford's base32 skips I, L, O and U.
	hex := newReading(true, nil, "0a", "f0", "a5")
	h := func(id string) float64 { f, ok := hex.Value(id); require.True(t, ok); return f }
	assert.InDelta(t, 16*h("10"), h("f0")+h("10"), 1e-9, "f0 is 15 times 10")
	var used byteSet
	used.addAll("0123456789ABCDEFGHJKMNPQRSTVWXYZ")
	crock := newReading(true, &used, "0", "H", "J", "Z")
	c := func(id string) float64 { f, ok := crock.Value(id); require.True(t, ok); return f }
	assert.InDelta(t, c("1")-c("0"), c("J")-c("H"), 1e-9, "H and J are neighbours")
	n := newReading(false, nil)
	f, ok := n.Value("12345")
	assert.True(t, ok)
	assert.Equal(t, 12345.0, f)
}

func TestGapSpread(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	ids := func(gap func() float64) []string {
		out := make([]string, 1000)
		x := 1000.0
		for i := range out {
			x += gap()
			out[i] = strconv.FormatInt(int64(x), 10)
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		ids      []string
		low, top float64
	}{
		{"even", ids(func() float64 { return 10 }), 0, 0.001},
		{"uniform 1 to 20", ids(func() float64 { return float64(1 + r.IntN(20)) }), 0.15, 0.55},
		{"exponential", ids(func() float64 { return 1 + 100*r.ExpFloat64() }), 0.5, 1.8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s Spread
			for k := 0; k+100 <= len(tc.ids); k += 100 {
				s.Learn(false, tc.ids[k:k+100])
			}
			assert.GreaterOrEqual(t, s.cv2, tc.low, fmt.Sprint(s))
			assert.LessOrEqual(t, s.cv2, tc.top, fmt.Sprint(s))
		})
	}
}
