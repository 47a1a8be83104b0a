package reference

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testList(ids ...int64) *list {
	l := &list{kind: &kinds[0]}
	for _, id := range ids {
		l.recs = append(l.recs, &record{id: id, keys: sortKeys{id % 3}})
	}
	return l
}

func recIDs(recs []*record) []int64 {
	out := make([]int64, len(recs))
	for i, r := range recs {
		out[i] = r.id
	}
	return out
}

func TestOrdered(t *testing.T) {
	l := testList(1, 2, 3, 4, 5, 6, 7)
	// keys: 1 b, 2 c, 3 a, 4 b, 5 c, 6 a, 7 b
	assert.Equal(t, []int64{1, 2, 3, 4, 5, 6, 7}, recIDs(ordered(l.recs, -1, false)))
	assert.Same(t, &l.recs[0], &ordered(l.recs, -1, false)[0], "id order is the store's own, not a copy")
	assert.Equal(t, []int64{7, 6, 5, 4, 3, 2, 1}, recIDs(ordered(l.recs, -1, true)))
	assert.Equal(t, []int64{3, 6, 1, 4, 7, 2, 5}, recIDs(ordered(l.recs, 0, false)), "ties by ascending id")
	assert.Equal(t, []int64{2, 5, 1, 4, 7, 3, 6}, recIDs(ordered(l.recs, 0, true)), "ties by ascending id, descending too")
	assert.Equal(t, []int64{1, 2, 3, 4, 5, 6, 7}, recIDs(l.recs), "the store is left alone")
}

func TestInsertRemove(t *testing.T) {
	l := testList(10, 20, 30)
	l.deleted = map[int64]struct{}{}
	assert.True(t, l.insert(&record{id: 15}))
	assert.True(t, l.insert(&record{id: 5}))
	assert.True(t, l.insert(&record{id: 35}))
	assert.False(t, l.insert(&record{id: 20}))
	assert.Equal(t, []int64{5, 10, 15, 20, 30, 35}, l.ids())
	assert.True(t, l.remove(5))
	assert.True(t, l.remove(35))
	assert.False(t, l.remove(36))
	assert.Equal(t, []int64{10, 15, 20, 30}, l.ids())
	assert.Equal(t, map[int64]struct{}{5: {}, 35: {}}, l.deleted)
}

func TestFreeID(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	l := testList(1, 2, 3, 5, 6, 9)
	below, between, above := 0, 0, 0
	for range 2000 {
		id := l.freeID(r)
		_, taken := l.find(id)
		require.False(t, taken, id)
		require.Positive(t, id)
		require.LessOrEqual(t, id, int64(9+maxGap))
		switch {
		case id < 9:
			between++
		default:
			above++
		}
	}
	assert.Positive(t, between)
	assert.Positive(t, above)

	l = testList(5, 6)
	for range 200 {
		if l.freeID(r) < 5 {
			below++
		}
	}
	assert.Positive(t, below, "below the first record too")
	assert.LessOrEqual(t, (&list{}).freeID(r), int64(maxGap), "an empty list")
	assert.Positive(t, (&list{}).freeID(r))
}
