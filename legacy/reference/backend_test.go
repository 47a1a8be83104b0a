package reference

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDefaults(t *testing.T) {
	b := New(Config{})
	for _, l := range Lists() {
		assert.Equal(t, 1000, b.Len(l), l)
	}
	assert.Equal(t, 1000, b.cfg.MaxPerPage)
	assert.Equal(t, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), b.cfg.DataEpoch)
	assert.NotNil(t, b.cfg.Now)
	assert.Len(t, get(t, b, "/calls").recs, 10, "default _perPage")
	assert.Len(t, get(t, b, "/calls?_perPage=5000").recs, 1000, "clamped to the default MaxPerPage")

	for base, want := range map[string]string{"": "", "/": "", "/api/v3": "/api/v3", "/api/v3/": "/api/v3", "api": "/api"} {
		assert.Equal(t, want, New(Config{Records: 1, BasePath: base}).cfg.BasePath, "%q", base)
	}
}

func TestLists(t *testing.T) {
	assert.Equal(t, []string{"calls", "grid/reports/time", "phone_numbers", "tickets/history", "tickets"}, Lists())
	l := Lists()
	l[0] = "changed"
	assert.Equal(t, "calls", Lists()[0], "callers get a copy")
}

func TestMutations(t *testing.T) {
	b := New(Config{Seed: 1, Records: 10, RecordDeletions: true})
	for _, name := range Lists() {
		t.Run(name, func(t *testing.T) {
			ids := b.IDs(name)
			require.Len(t, ids, 10)
			below, between, above := ids[0]-1, ids[4]+1, ids[9]+100
			if below < 1 {
				below = ids[9] + 1
			}
			for _, id := range []int64{below, between, above} {
				require.NoError(t, b.Insert(name, id))
			}
			assert.ErrorContains(t, b.Insert(name, between), fmt.Sprintf("%s has a record with id %d already", name, between))
			assert.Equal(t, 13, b.Len(name))

			assert.True(t, b.Delete(name, ids[5]))
			assert.False(t, b.Delete(name, ids[5]), "already gone")
			assert.False(t, b.Delete(name, above+1), "never there")
			assert.True(t, b.Deleted(name, ids[5]))
			assert.False(t, b.Deleted(name, ids[6]))

			got := b.IDs(name)
			assert.Len(t, got, 12)
			assert.True(t, slices.IsSorted(got))
			assert.Subset(t, got, []int64{below, between, above})
			assert.NotContains(t, got, ids[5])

			// An inserted record is served like the others.
			a := get(t, b, fmt.Sprintf("/%s?_sortField=id&_sortDir=DESC&_perPage=1", name))
			assert.Equal(t, []int64{above}, a.ids())
			assert.Len(t, a.recs[0], len(get(t, b, fmt.Sprintf("/%s?_sortField=id&_perPage=1", name)).recs[0]))
		})
	}

	assert.ErrorContains(t, b.Insert("calls", 0), "ids are whole numbers of at least 1")
	assert.ErrorContains(t, b.Insert("nope", 1), `no list "nope"; the lists are calls, grid/reports/time`)
	assert.False(t, b.Delete("nope", 1))
	assert.Nil(t, b.IDs("nope"))
	assert.Zero(t, b.Len("nope"))
	assert.False(t, b.Deleted("nope", 1))
	assert.False(t, New(Config{Records: 3}).Deleted("calls", 1), "without RecordDeletions")
}

func TestIDsIsASnapshot(t *testing.T) {
	b := New(Config{Seed: 1, Records: 5})
	ids := b.IDs("calls")
	ids[0] = -1
	assert.Positive(t, b.IDs("calls")[0])
}

func TestServedCountsRecordsSent(t *testing.T) {
	b := New(Config{Seed: 1, Records: 25})
	for _, tc := range []struct {
		query string
		sent  int64
	}{
		{"/calls?_perPage=10", 10},
		{"/calls?_page=3&_perPage=10", 5}, // the short last page
		{"/calls?_page=4&_perPage=10", 0}, // past the end
		{"/calls?_perPage=x", 0},          // refused
	} {
		before := b.Served("calls")
		get(t, b, tc.query)
		assert.Equal(t, tc.sent, b.Served("calls")-before, tc.query)
	}
	assert.Zero(t, b.Served("phone_numbers"), "counted per list")
	assert.Zero(t, b.Served("nope"))
}
