package caddymodule_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule"
	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// TestReadaheadHeapSoak runs the same soak twice, read-ahead off and on:
// a thousand callers (each its own API key) walking a churning list with
// random page sizes, a few dozen at a time, and a reload half way. The
// live heap, sampled through the run, may exceed the soak's without
// read-ahead by at most readahead_memory and the per-caller state (a few
// hundred bytes a list), each phase measured from the live heap it began
// with: the bound holds under the load it is for.
func TestReadaheadHeapSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("soak")
	}
	if caddymodule.RaceEnabled { // raceEnabled: .ci/run runs it again without -race
		t.Skip("the race detector holds small allocations, so the live heap is not the gateway's; .ci/run runs this test without -race")
	}
	const (
		callers, atOnce = 1000, 24
		memory          = 1 << 20
		// Windows evicted while pages in flight still read them (up to
		// atOnce of them), per-caller state, and the sampling of a live
		// heap known only as of the last collection. The same soak with
		// readahead_memory 64MiB rises by about 80 MiB more than without.
		slack = 4 << 20
	)
	// soak returns how far the live heap rose above where it stood when
	// the phase began, its backend made.
	soak := func(readahead string) (rise uint64) {
		b := reference.New(reference.Config{Seed: 5, Records: 3000, ChurnPerSecond: 200, RecordDeletions: true})
		b.Start()
		defer b.Close()
		srv := httptest.NewServer(b)
		defer srv.Close()
		base := liveHeapNow()
		site := "http://" + gatewaytest.FreeLoopbackAddr(t)[len("127.0.0.1"):] +
			" {\n\thelpdesk_gateway {\n\t\t" + readahead + "\n\t\tindex_size %d\n\t}\n\treverse_proxy {backend}\n}\n"
		c := gatewaytest.Start(t, fmt.Sprintf(site, 10_000), srv.URL, gatewaytest.Options{Admin: true})
		defer c.Stop(t)

		var (
			next    atomic.Int64
			done    atomic.Int64
			stop    = make(chan struct{})
			sampled = make(chan uint64)
		)
		go func() { sampled <- sampleLiveHeap(stop) }()
		var wg sync.WaitGroup
		reloaded := false
		for range atOnce {
			wg.Go(func() {
				for {
					i := next.Add(1)
					if i > callers {
						return
					}
					soakWalk(t, c.URL, i)
					done.Add(1)
				}
			})
		}
		for !reloaded {
			if done.Load() >= callers/2 {
				c.Reload(t, fmt.Sprintf(site, 20_000), srv.URL)
				reloaded = true
			}
			time.Sleep(10 * time.Millisecond)
		}
		wg.Wait()
		close(stop)
		peak := <-sampled
		return peak - min(base, peak)
	}
	off := soak("readahead_ttl 0")
	on := soak("readahead_memory 1MiB")
	t.Logf("live heap rose by %d KiB without read-ahead, %d KiB with (bound %d KiB)", off>>10, on>>10, memory>>10)
	assert.LessOrEqual(t, on, off+memory+slack, "the heap stays within readahead_memory of the soak without read-ahead")
}

// liveHeapNow returns the live heap after two collections: a sync.Pool
// keeps what it held through one (its victim cache), so a single one
// would count the buffers earlier tests pooled in the base, and the rise
// above it would shrink by what the soak's own first collections free.
func liveHeapNow() uint64 {
	runtime.GC()
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// soakWalk is caller i's walk: up to 30 pages of a random size, with its
// own API key; it checks each page and returns the records served.
func soakWalk(t *testing.T, base string, i int64) int64 {
	r := rand.New(rand.NewPCG(uint64(i), 7))
	size := 1 + r.IntN(60)
	key := "soak-" + strconv.FormatInt(i, 10)
	cursor, last, served := "", int64(0), int64(0)
	for range 1 + r.IntN(30) {
		u := base + "/calls?_perPage=" + strconv.Itoa(size)
		if cursor != "" {
			u += "&_cursor=" + cursor
		}
		req, err := http.NewRequest(http.MethodGet, u, nil)
		require.NoError(t, err)
		req.Header.Set("X-Api-Key", key)
		resp, err := gatewaytest.Client.Do(req)
		if !assert.NoError(t, err) {
			return served
		}
		var page []struct {
			ID int64 `json:"id"`
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if !assert.Equal(t, http.StatusOK, resp.StatusCode) || !assert.NoError(t, err) {
			return served
		}
		for _, rec := range page {
			if !assert.Greater(t, rec.ID, last, "ids strictly increase") {
				return served
			}
			last = rec.ID
		}
		served += int64(len(page))
		if cursor = resp.Header.Get("next_page_cursor"); cursor == "" {
			return served
		}
	}
	return served
}

// sampleLiveHeap returns the largest live heap (as of the last GC) seen
// every 20ms until stop is closed.
func sampleLiveHeap(stop <-chan struct{}) uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var peak uint64
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		metrics.Read(s)
		peak = max(peak, s[0].Value.Uint64())
		select {
		case <-stop:
			runtime.GC()
			metrics.Read(s)
			return max(peak, s[0].Value.Uint64())
		case <-tick.C:
		}
	}
}
