package caddymodule_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// TestLoadUnderChurnWithReload runs many concurrent walkers for a bounded
// time against the reference backend while it churns, reloads the config
// several times meanwhile, and checks every walk, that every request got a
// 200 (none lost to a reload, no 5xx) and, after shutdown, that no
// goroutine was left behind.
func TestLoadUnderChurnWithReload(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	// Start and stop Caddy once, so the baseline holds what Caddy keeps
	// for the life of the process.
	warm := gatewaytest.Start(t, "http://:0 {\n\trespond ok\n}\n", "")
	warm.Stop(t)
	gatewaytest.Client.CloseIdleConnections()
	time.Sleep(100 * time.Millisecond)
	baseline := runtime.NumGoroutine()

	// 1,000 records a list at 300 mutations a second: a walk meets as much
	// of its list changed as one of the 3,000 this test first walked (it
	// is a third as long), and the last walks, begun after the last
	// reload, end three times as soon.
	b := reference.New(reference.Config{Seed: 9, Records: 1000, ChurnPerSecond: 300, RecordDeletions: true})
	b.Start()
	srv := httptest.NewServer(b)
	lists := []string{"calls", "grid/reports/time", "phone_numbers", "tickets/history"}
	initial := map[string][]int64{}
	for _, l := range lists {
		initial[l] = b.IDs(l)
	}
	// A fixed port, so the reloaded config keeps the listener.
	site := "http://" + gatewaytest.FreeLoopbackAddr(t)[len("127.0.0.1"):] + " {\n\thelpdesk_gateway {\n\t\tindex_size %d\n\t}\n\treverse_proxy {backend}\n}\n"
	c := gatewaytest.Start(t, fmt.Sprintf(site, 1000), srv.URL, gatewaytest.Options{Admin: true})

	// The load is bounded by counts, not by time: reloads come after so
	// many requests, and every walker ends with one whole walk begun after
	// the last reload, so a slow machine slows the test, never fails it.
	// The deadline only stops a run that hangs.
	const walkers, reloads, requestsPerReload = 16, 3, 150
	deadline := time.Now().Add(2 * time.Minute)
	var (
		wg               sync.WaitGroup
		requests, faults atomic.Int64
		reloaded         atomic.Bool // the last reload is done
		mu               sync.Mutex
		walks            = map[string][]loadWalkResult{}
	)
	for w := range walkers {
		list := lists[w%len(lists)]
		perPage := []int{10, 25, 100, 250}[w/len(lists)%4] // every size on every list
		wg.Go(func() {
			for {
				last := reloaded.Load() // this walk starts after the last reload
				walk, ok := loadWalk(c.URL, list, perPage, deadline, &requests, &faults)
				if !ok {
					return
				}
				mu.Lock()
				walks[list] = append(walks[list], walk)
				mu.Unlock()
				if last || time.Now().After(deadline) {
					return
				}
			}
		})
	}
	// Reload while walkers run; each config differs, so each reload makes
	// a new gateway instance with a fresh index.
	var atReload []int64
	for i := range reloads {
		for requests.Load() < int64(i+1)*requestsPerReload && faults.Load() == 0 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		c.Reload(t, fmt.Sprintf(site, 2000+i), srv.URL)
		atReload = append(atReload, requests.Load())
	}
	reloaded.Store(true)
	wg.Wait()
	require.True(t, time.Now().Before(deadline), "the load did not finish within %v", 2*time.Minute)
	for i, n := range atReload {
		assert.Greater(t, requests.Load(), n, "requests were served after reload %d", i+1)
	}

	assert.Zero(t, faults.Load(), "requests that failed or were not 200")
	assert.Greater(t, requests.Load(), int64(50), "the load ran")
	assert.Greater(t, b.Len("calls")+b.Len("phone_numbers"), 0)
	for list, ws := range walks {
		require.NotEmpty(t, ws, list)
		assert.True(t, slices.ContainsFunc(ws, func(w loadWalkResult) bool { return w.complete }), "%s: some walk reached the end", list)
		for _, walk := range ws {
			ids := walk.ids
			for i := 1; i < len(ids); i++ {
				require.Less(t, ids[i-1], ids[i], "%s: ids strictly increase, no duplicate", list)
			}
			for _, id := range initial[list] {
				if !walk.complete && (len(ids) == 0 || id > ids[len(ids)-1]) {
					break // a walk cut at the deadline answers for what it reached
				}
				if _, found := slices.BinarySearch(ids, id); !found {
					require.True(t, b.Deleted(list, id), "%s: record %d existed throughout but was skipped", list, id)
				}
			}
		}
	}
	t.Logf("%d requests, %d walks with %d reloads", requests.Load(), len(walks["calls"])+len(walks["phone_numbers"])+len(walks["grid/reports/time"])+len(walks["tickets/history"]), reloads)

	c.Stop(t)
	srv.Close()
	b.Close()
	gatewaytest.Client.CloseIdleConnections()
	end := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > baseline && time.Now().Before(end) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > baseline {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines after shutdown, %d before:\n%s", n, baseline, buf[:runtime.Stack(buf, true)])
	}
}

// loadWalkResult is one walk: the ids served, and whether it reached the
// end of the list or was cut at the deadline.
type loadWalkResult struct {
	ids      []int64
	complete bool
}

// loadWalk walks list once by cursor, or until the deadline (which only
// stops a run that hangs); it counts
// requests and faults and gives up on the first fault.
func loadWalk(base, list string, perPage int, deadline time.Time, requests, faults *atomic.Int64) (loadWalkResult, bool) {
	var ids []int64
	cursor := ""
	for {
		if cursor != "" && time.Now().After(deadline) {
			return loadWalkResult{ids: ids}, true
		}
		q := url.Values{"_perPage": {strconv.Itoa(perPage)}}
		if cursor != "" {
			q.Set("_cursor", cursor)
		}
		requests.Add(1)
		resp, err := gatewaytest.Client.Get(base + "/" + list + "?" + q.Encode())
		if err != nil {
			faults.Add(1)
			return loadWalkResult{}, false
		}
		var page []struct {
			ID int64 `json:"id"`
		}
		err = decodeJSON(resp, &page)
		if err != nil || resp.StatusCode != http.StatusOK {
			faults.Add(1)
			return loadWalkResult{}, false
		}
		for _, r := range page {
			ids = append(ids, r.ID)
		}
		if cursor = resp.Header.Get("next_page_cursor"); cursor == "" {
			return loadWalkResult{ids: ids, complete: true}, true
		}
	}
}
