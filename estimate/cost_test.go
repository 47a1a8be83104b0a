package estimate

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestKeysetAdvice: the advice names the rows stepped over per record
// served, N/(2w), and backend_keyset, from LargeListStepped on only.
func TestKeysetAdvice(t *testing.T) {
	for _, tc := range []struct {
		records, window int
		stepped         float64
		advice          string
	}{
		{100_000, 1000, 50, "this list's walks step over 50 rows per record served (100000 records read by offset in windows of 1000); if the backend can filter by id, backend_keyset \"id_gt={id}\""},
		{1_000_000, 1000, 500, "step over 500 rows per record served"},
		{99_999, 1000, 49.9995, ""},
		{20_000, 1000, 10, ""},
		{0, 1000, 0, ""},
		{5000, 0, 0, ""},
	} {
		assert.InDelta(t, tc.stepped, OffsetStepped(tc.records, tc.window), 1e-9, "%d in windows of %d", tc.records, tc.window)
		got := KeysetAdvice(tc.records, tc.window)
		if tc.advice == "" {
			assert.Empty(t, got, "%d in windows of %d", tc.records, tc.window)
		} else {
			assert.Contains(t, got, tc.advice)
		}
	}
}
