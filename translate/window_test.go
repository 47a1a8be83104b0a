package translate

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPlanWindow(t *testing.T) {
	for _, tc := range []struct {
		name            string
		from, to, max   int
		want            Window
		coversWholeSpan bool
	}{
		{"first records", 0, 11, 1000, Window{Start: 0, Size: 11}, true},
		{"aligned", 20, 30, 1000, Window{Start: 20, Size: 10}, true},
		{"smallest size that fits", 5, 8, 1000, Window{Start: 4, Size: 4}, true},
		{"one record", 7, 8, 1000, Window{Start: 7, Size: 1}, true},
		{"empty range is one record", 7, 7, 1000, Window{Start: 7, Size: 1}, true},
		{"negative from is 0", -3, 4, 1000, Window{Start: 0, Size: 4}, true},
		{"at the limit", 0, 25, 25, Window{Start: 0, Size: 25}, true},
		{"wider than the limit: the start and as much after it", 0, 40, 25, Window{Start: 0, Size: 25}, false},
		{"no size fits: as many records from the start as any size", 5, 7, 3, Window{Start: 5, Size: 1}, false},
		{"no size fits, a larger size reaches further", 58, 61, 4, Window{Start: 58, Size: 2}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := PlanWindow(tc.from, tc.to, tc.max)
			assert.Equal(t, tc.want, w)
			assert.Equal(t, tc.coversWholeSpan, covers(w, max(tc.from, 0), max(tc.to, max(tc.from, 0)+1)))
		})
	}
}

func covers(w Window, from, to int) bool {
	return w.Start <= from && to <= w.Start+w.Size
}

// TestPlanWindowProperties checks PlanWindow against a brute force over
// every page size: when some size up to the limit puts [from, to) in one
// page, the window does so with the smallest such size; otherwise it holds
// from and as many records after it as any size can. It never exceeds the
// limit.
func TestPlanWindowProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for range 20000 {
		maxSize := 1 + r.IntN(120)
		from := r.IntN(5000)
		if r.IntN(4) == 0 {
			from = r.IntN(1 << 30)
		}
		to := from + 1 + r.IntN(2*maxSize)
		w := PlanWindow(from, to, maxSize)

		assert.True(t, w.Aligned() && w.Size >= 1 && w.Size <= maxSize, "%d..%d max %d: %+v", from, to, maxSize, w)
		assert.True(t, w.Start <= from && from < w.Start+w.Size, "%d..%d max %d: %+v must hold from", from, to, maxSize, w)

		smallest, bestCover := 0, 0
		for s := 1; s <= maxSize; s++ {
			start := from / s * s
			if smallest == 0 && start+s >= to {
				smallest = s
			}
			bestCover = max(bestCover, start+s-from)
		}
		if smallest > 0 {
			assert.Equal(t, smallest, w.Size, "%d..%d max %d: smallest size covering the range", from, to, maxSize)
			assert.True(t, covers(w, from, to))
		} else {
			assert.Equal(t, bestCover, w.Start+w.Size-from, "%d..%d max %d: best coverage after from", from, to, maxSize)
		}
	}
}

func TestPlanOffsetWindow(t *testing.T) {
	for _, tc := range []struct {
		name          string
		from, to, max int
		want          Window
	}{
		{"exactly the range", 9, 21, 1000, Window{Start: 9, Size: 12}},
		{"from 0", 0, 11, 1000, Window{Start: 0, Size: 11}},
		{"cut to the limit", 5, 80, 25, Window{Start: 5, Size: 25}},
		{"empty range is one record", 7, 7, 1000, Window{Start: 7, Size: 1}},
		{"negative from is 0", -3, 4, 1000, Window{Start: 0, Size: 4}},
		{"no limit is one record", 3, 9, 0, Window{Start: 3, Size: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := PlanOffsetWindow(tc.from, tc.to, tc.max)
			assert.Equal(t, tc.want, w)
			assert.Equal(t, tc.want.Start%tc.want.Size == 0, w.Aligned())
		})
	}
	assert.Equal(t, 3, Window{Start: 50, Size: 25}.Page())
	assert.False(t, Window{Start: 50, Size: 0}.Aligned())
}
