package cursor

import (
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNumericCompareAgreesWithBigInt holds Compare, fast path included,
// to the values of the ids, on whole numbers with signs, leading zeros and
// more digits than any machine integer.
func TestNumericCompareAgreesWithBigInt(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	id := func() string {
		var sb strings.Builder
		if r.IntN(4) == 0 {
			sb.WriteByte('-')
		}
		for range r.IntN(3) {
			sb.WriteByte('0')
		}
		n := 1 + r.IntN(25)
		for range n {
			sb.WriteByte(byte('0' + r.IntN(10)))
		}
		return sb.String()
	}
	ids := []string{"0", "-0", "00", "1", "-1", "9", "10", "007", strconv.FormatInt(1<<40, 10)}
	for range 2000 {
		ids = append(ids, id())
	}
	for i := range ids {
		for j := range 40 {
			a, b := ids[i], ids[(i*31+j)%len(ids)]
			x, _ := new(big.Int).SetString(a, 10)
			y, _ := new(big.Int).SetString(b, 10)
			require.Equal(t, x.Cmp(y), Numeric.Compare(a, b), "%s vs %s", a, b)
		}
	}
}
