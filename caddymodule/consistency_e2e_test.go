package caddymodule_test

import (
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// TestConsistencyAroundTheCursor changes every list between a walker's
// pages exactly where it hurts: it deletes the cursor's record and the one
// after it, inserts records right below, at and right after the cursor
// position, and inserts a hundred records before it, which moves every
// offset the gateway has learned. Readers walk the same lists at the same
// time, all under -race. The walker that changes the list checks each page
// against the list as it was: exactly the next records after the cursor.
// Every walk: no duplicate, strictly increasing ids, and no record that
// existed throughout skipped.
func TestConsistencyAroundTheCursor(t *testing.T) {
	b := reference.New(reference.Config{Seed: 11, Records: 600, RecordDeletions: true})
	srv := httptest.NewServer(b)
	t.Cleanup(srv.Close)
	// mutatingWalk holds each page to the list as it was when the page
	// was asked for: that is the guarantee of a page read from the
	// backend, so read-ahead, whose windows may serve what the backend
	// held up to readahead_ttl before, is off here; TestReadaheadUnderChurn
	// walks the same churn with it on.
	c := gatewaytest.Start(t, `
http://:0 {
	helpdesk_gateway {
		backend_max_per_page 40
		index_size 5000
		readahead_ttl 0
	}
	reverse_proxy {backend}
}
`, srv.URL)

	initial := map[string][]int64{}
	for _, list := range cursorEndpoints {
		initial[list] = b.IDs(list)
	}
	type walk struct {
		list string
		ids  []int64
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		walks []walk
	)
	record := func(list string, ids []int64) {
		mu.Lock()
		walks = append(walks, walk{list, ids})
		mu.Unlock()
	}
	for i, list := range cursorEndpoints {
		perPage := []int{11, 25, 60, 17}[i] // 60 needs stitched backend calls
		wg.Go(func() { record(list, mutatingWalk(t, c.URL, b, list, perPage, uint64(i))) })
		for _, readerPerPage := range []int{13, 50} {
			wg.Go(func() {
				ids, _ := walkCursor(t, c.URL, "/"+list, readerPerPage, "")
				record(list, toInts(t, ids))
			})
		}
	}
	wg.Wait()
	require.Equal(t, 3*len(cursorEndpoints), len(walks), "every walk finished")

	for _, w := range walks {
		for i := 1; i < len(w.ids); i++ {
			require.Less(t, w.ids[i-1], w.ids[i], "%s: ids strictly increase, no duplicate", w.list)
		}
		for _, id := range initial[w.list] {
			if _, found := slices.BinarySearch(w.ids, id); !found {
				assert.True(t, b.Deleted(w.list, id), "%s: record %d existed throughout but was skipped", w.list, id)
			}
		}
	}
	for _, list := range cursorEndpoints {
		assert.Greater(t, b.Len(list), len(initial[list]), "%s: the inserts happened", list)
	}
}

// mutatingWalk walks list by cursor and, after each page, changes the list
// around the cursor through the backend's own methods. Each page must be
// exactly the records after the cursor as the list held them, since
// nothing else changes the list.
func mutatingWalk(t *testing.T, base string, b *reference.Backend, list string, perPage int, seed uint64) []int64 {
	r := rand.New(rand.NewPCG(seed, 77))
	var served []int64
	cursor := ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, 10000, "the walk does not end")
		var after int64
		if cursor != "" {
			after = served[len(served)-1]
		}
		want, more := nextAfter(b.IDs(list), after, perPage)
		u := base + "/" + list + "?_perPage=" + strconv.Itoa(perPage)
		if cursor != "" {
			u += "&_cursor=" + cursor
		}
		a := get(t, u)
		require.Equal(t, http.StatusOK, a.status, string(a.body))
		got := toInts(t, a.ids(t))
		require.Equal(t, want, got, "%s: the page after %d is the next %d records as the list held them", list, after, perPage)
		cursor = a.header.Get("next_page_cursor")
		require.Equal(t, more, cursor != "", "%s: a next cursor exactly when more records followed", list)
		served = append(served, got...)
		if cursor == "" {
			return served
		}
		strikeAround(b, list, served[len(served)-1], r)
	}
}

// strikeAround changes list around id, the cursor of the next page.
func strikeAround(b *reference.Backend, list string, id int64, r *rand.Rand) {
	ids := b.IDs(list)
	i, _ := slices.BinarySearch(ids, id)
	b.Delete(list, id) // the cursor's own record
	if i+1 < len(ids) && r.IntN(3) == 0 {
		b.Delete(list, ids[i+1]) // the record that would come next
	}
	for _, near := range []int64{id - 1, id + 1, id + 2} { // right below and after it
		_ = b.Insert(list, near) // fails harmlessly when taken
	}
	if i > 0 {
		for range 100 { // many before it: every learned offset moves
			_ = b.Insert(list, 1+r.Int64N(id-1))
		}
	}
}

// nextAfter returns the first n ids of ids above after, and whether more
// follow.
func nextAfter(ids []int64, after int64, n int) ([]int64, bool) {
	i, found := slices.BinarySearch(ids, after)
	if found {
		i++
	}
	rest := ids[i:]
	if len(rest) > n {
		return rest[:n], true
	}
	return rest, false
}

func toInts(t *testing.T, ids []string) []int64 {
	t.Helper()
	out := make([]int64, len(ids))
	for i, s := range ids {
		n, err := strconv.ParseInt(s, 10, 64)
		require.NoError(t, err)
		out[i] = n
	}
	return out
}
