package reference

import (
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestChurn(t *testing.T) {
	b := New(Config{Seed: 1, Records: 500})
	before := map[string][]int64{}
	for _, l := range Lists() {
		before[l] = b.IDs(l)
	}
	b.Churn(200)
	for _, l := range Lists() {
		after := b.IDs(l)
		assert.True(t, slices.IsSorted(after), l)
		assert.Len(t, slices.Compact(slices.Clone(after)), len(after), "%s: ids stay unique", l)
		assert.InDelta(t, 500, len(after), 60, "%s: about as many inserts as deletes", l)

		var inserted, deleted []int64
		for _, id := range after {
			if !slices.Contains(before[l], id) {
				inserted = append(inserted, id)
			}
		}
		for _, id := range before[l] {
			if !slices.Contains(after, id) {
				deleted = append(deleted, id)
			}
		}
		assert.InDelta(t, 100, len(inserted), 30, l)
		assert.InDelta(t, 100, len(deleted), 30, l)
		max := before[l][len(before[l])-1]
		assert.True(t, slices.ContainsFunc(inserted, func(id int64) bool { return id < max }), "%s: inserts between records", l)
		assert.True(t, slices.ContainsFunc(inserted, func(id int64) bool { return id > max }), "%s: inserts past the end", l)
	}
}

func TestChurnIsDeterministic(t *testing.T) {
	run := func() map[string][]byte {
		b := New(Config{Seed: 2, Records: 100})
		b.Churn(30)
		require.NoError(t, b.Insert("calls", 1_000_000))
		b.Churn(30)
		out := map[string][]byte{}
		for _, l := range Lists() {
			out[l] = get(t, b, "/"+l+"?_sortField=id&_perPage=1000").body
		}
		return out
	}
	assert.Equal(t, run(), run())
}

func TestChurnEmptiesNothingForever(t *testing.T) {
	b := New(Config{Seed: 3, Records: 1})
	for _, l := range Lists() {
		b.Delete(l, b.IDs(l)[0])
	}
	b.Churn(1)
	for _, l := range Lists() {
		assert.Equal(t, 1, b.Len(l), "%s: an empty list can only grow", l)
	}
}

// TestConcurrentReadsUnderChurn reads pages while the churn runs; run it
// with -race. Each answer is a snapshot: its ids strictly ascend.
func TestConcurrentReadsUnderChurn(t *testing.T) {
	b := New(Config{Seed: 5, Records: 2000, ChurnPerSecond: 2000})
	b.Start()
	defer b.Close()
	var wg sync.WaitGroup
	for _, l := range []string{"calls", "tickets", "tickets/history"} {
		wg.Go(func() {
			for page := 1; page <= 40; page++ {
				a := get(t, b, fmt.Sprintf("/%s?_page=%d&_perPage=50&_sortField=id", l, page))
				if !assert.Equal(t, http.StatusOK, a.code) {
					return
				}
				ids := a.ids()
				assert.True(t, slices.IsSorted(ids) && len(slices.Compact(slices.Clone(ids))) == len(ids), "%s page %d: %v", l, page, ids)
			}
		})
	}
	wg.Go(func() {
		for i := range 50 {
			b.Churn(2)
			_ = b.Insert("calls", int64(3*i))
			b.Delete("tickets", int64(2*i))
		}
	})
	wg.Wait()
	assert.EqualValues(t, 40, b.Requests("calls"))
}

func TestChurnRate(t *testing.T) {
	b := New(Config{Seed: 1, Records: 1000, ChurnPerSecond: 400, RecordDeletions: true})
	before := b.IDs("phone_numbers")
	b.Start()
	time.Sleep(500 * time.Millisecond)
	b.Close()
	after := b.IDs("phone_numbers")
	changed := 0
	for _, id := range before {
		if b.Deleted("phone_numbers", id) {
			changed++
		}
	}
	for _, id := range after {
		if !slices.Contains(before, id) {
			changed++
		}
	}
	// About 200 mutations in half a second; the bounds leave room for a
	// slow, shared machine.
	assert.Greater(t, changed, 50)
	assert.Less(t, changed, 300)
	assert.Equal(t, after, b.IDs("phone_numbers"), "no churn after Close")
}

func TestStartClose(t *testing.T) {
	// settle waits for goroutines that are ending (those of New, of other
	// tests) to be gone, and returns how many are left.
	settle := func() int {
		for range 200 {
			n := runtime.NumGoroutine()
			time.Sleep(10 * time.Millisecond)
			if runtime.NumGoroutine() == n {
				return n
			}
		}
		return runtime.NumGoroutine()
	}
	b := New(Config{Seed: 1, Records: 100, ChurnPerSecond: 1000})
	quiet := New(Config{Seed: 1, Records: 10})
	before := settle()

	b.Close() // before Start: nothing to stop
	b.Start()
	b.Start()
	assert.Equal(t, before+1, runtime.NumGoroutine(), "one churn goroutine, however often started")
	b.Close()
	b.Close()
	assert.Equal(t, before, settle(), "no goroutine left behind")

	b.Start() // after Close it starts anew
	assert.Equal(t, before+1, runtime.NumGoroutine())
	var wg sync.WaitGroup
	for range 4 { // concurrent Close calls all return once the churn stopped
		wg.Go(b.Close)
	}
	wg.Wait()
	assert.Equal(t, before, settle())

	quiet.Start()
	assert.Equal(t, before, runtime.NumGoroutine(), "no churn configured, no goroutine")
	quiet.Close()
}
