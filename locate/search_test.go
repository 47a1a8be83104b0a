package locate

import (
	"sort"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/cursor"
)

// run searches ids (ascending, numeric) for the boundary after the id
// after, as the engine does with the answers of a backend that pages by
// offset, and returns where the search settled it and the calls it took.
func run(t *testing.T, ids []string, after string, h Hint, need int) (boundary, calls int) {
	t.Helper()
	var s Search
	s.Init(cursor.Numeric, after, &h)
	for calls = 1; calls <= 64; calls++ {
		from, to := s.Window(need)
		require.GreaterOrEqual(t, from, 0)
		require.Greater(t, to, from)
		answer := ids[min(from, len(ids)):min(to, len(ids))]
		ended := to > len(ids)
		below := sort.Search(len(answer), func(i int) bool { return cursor.Numeric.Compare(answer[i], s.After()) > 0 })
		if (below > 0 || from == 0) && (below < len(answer) || ended) {
			return from + below, calls
		}
		s.Observe(from, answer, below)
	}
	t.Fatalf("no boundary after %d calls", calls)
	return 0, 0
}

// TestSearchSettles: the search settles the boundary (the first offset
// whose id is above the cursor) from any hint, a stale one too, and in
// few calls where the hint knows the cursor's neighbourhood.
func TestSearchSettles(t *testing.T) {
	const n = 100_000
	ids := make([]string, n)
	for i := range ids {
		ids[i] = strconv.Itoa(10 * (i + 1)) // evenly spread: 10, 20, ...
	}
	sample := func(off int) Sample { return Sample{Off: off, ID: ids[off]} }
	withBelow := func(h Hint, offs ...int) Hint {
		below := make([]Sample, 0, len(offs))
		for _, off := range offs {
			below = append(below, sample(off))
		}
		h.Below(below)
		return h
	}
	for _, tc := range []struct {
		name     string
		after    string
		hint     Hint
		maxCalls int
	}{
		{"cold, at the start", "5", Hint{End: -1}, 1},
		{"cold, deep", "777775", Hint{End: -1}, 3},
		{"past the end", "2000000", Hint{End: -1}, 25},
		{"the cursor's own record", ids[5000], Hint{Lo: sample(5000), HasLo: true, End: -1}, 1},
		{"bracketed", "500005", Hint{Lo: sample(49_000), HasLo: true, Hi: sample(51_000), HasHi: true, End: -1}, 3},
		{"a leap from the density below", "900005", withBelow(Hint{Lo: sample(60_000), HasLo: true, End: -1}, 0, 30_000, 59_000, 59_900, 60_000), 3},
		{"a stale lo: its record moved since", "100005", Hint{Lo: Sample{Off: 10_200, ID: "100000"}, HasLo: true, End: -1}, 12},
		{"a stale end", "500005", Hint{End: 10}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := sort.Search(n, func(i int) bool { return cursor.Numeric.Compare(ids[i], tc.after) > 0 })
			got, calls := run(t, ids, tc.after, tc.hint, 10)
			assert.Equal(t, want, got, "the boundary")
			assert.LessOrEqual(t, calls, tc.maxCalls, "calls")
			t.Logf("%d calls", calls)
		})
	}
}
