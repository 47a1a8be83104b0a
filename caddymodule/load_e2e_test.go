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

	"github.com/helpdesk-gateway/gateway/internal/harness"
	"github.com/helpdesk-gateway/gateway/legacy"
)

// TestLoadUnderChurnWithReload runs many concurrent walkers for a bounded
// time against the reference backend while it churns, reloads the config
// in the middle, and checks every walk, every status and, after shutdown,
// that no goroutine was left behind.
func TestLoadUnderChurnWithReload(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	// Start and stop Caddy once, so the baseline holds what Caddy keeps
	// for the life of the process.
	warm := harness.Start(t, "http://:0 {\n\trespond ok\n}\n", "")
	warm.Stop(t)
	harness.Client.CloseIdleConnections()
	time.Sleep(100 * time.Millisecond)
	baseline := runtime.NumGoroutine()

	b := legacy.New(legacy.Config{Seed: 9, Records: 3000, ChurnPerSecond: 300, RecordDeletions: true})
	b.Start()
	srv := httptest.NewServer(b)
	lists := []string{"calls", "grid/reports/time", "phone_numbers", "tickets/history"}
	initial := map[string][]int64{}
	for _, l := range lists {
		initial[l] = b.IDs(l)
	}
	// A fixed port, so the reloaded config keeps the listener.
	site := "http://" + harness.FreeLoopbackAddr(t)[len("127.0.0.1"):] + " {\n\thelpdesk_gateway {\n\t\tindex_size %d\n\t}\n\treverse_proxy {backend}\n}\n"
	c := harness.Start(t, fmt.Sprintf(site, 1000), srv.URL, harness.Options{Admin: true})

	const walkers, duration = 8, 3 * time.Second
	deadline := time.Now().Add(duration)
	var (
		wg               sync.WaitGroup
		requests, faults atomic.Int64
		mu               sync.Mutex
		walks            = map[string][][]int64{}
	)
	for w := range walkers {
		list := lists[w%len(lists)]
		perPage := []int{5, 20, 100, 250}[w%4]
		wg.Go(func() {
			for n := 0; n < 1000 && time.Now().Before(deadline); n++ {
				ids, ok := loadWalk(c.URL, list, perPage, &requests, &faults)
				if !ok {
					return
				}
				mu.Lock()
				walks[list] = append(walks[list], ids)
				mu.Unlock()
			}
		})
	}
	time.Sleep(duration / 3)
	c.Reload(t, fmt.Sprintf(site, 2000), srv.URL) // a real change: a new gateway instance
	wg.Wait()

	assert.Zero(t, faults.Load(), "requests that failed or were not 200")
	assert.Greater(t, requests.Load(), int64(50), "the load ran")
	assert.Greater(t, b.Len("calls")+b.Len("phone_numbers"), 0)
	for list, ws := range walks {
		require.NotEmpty(t, ws, list)
		for _, ids := range ws {
			for i := 1; i < len(ids); i++ {
				require.Less(t, ids[i-1], ids[i], "%s: ids strictly increase, no duplicate", list)
			}
			for _, id := range initial[list] {
				if _, found := slices.BinarySearch(ids, id); !found {
					require.True(t, b.Deleted(list, id), "%s: record %d existed throughout but was skipped", list, id)
				}
			}
		}
	}
	t.Logf("%d requests, %d walks over %v with a reload", requests.Load(), len(walks["calls"])+len(walks["phone_numbers"])+len(walks["grid/reports/time"])+len(walks["tickets/history"]), duration)

	c.Stop(t)
	srv.Close()
	b.Close()
	harness.Client.CloseIdleConnections()
	end := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > baseline && time.Now().Before(end) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > baseline {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines after shutdown, %d before:\n%s", n, baseline, buf[:runtime.Stack(buf, true)])
	}
}

// loadWalk walks list once by cursor; it counts requests and faults and
// gives up on the first fault.
func loadWalk(base, list string, perPage int, requests, faults *atomic.Int64) ([]int64, bool) {
	var ids []int64
	cursor := ""
	for {
		q := url.Values{"_perPage": {strconv.Itoa(perPage)}}
		if cursor != "" {
			q.Set("_cursor", cursor)
		}
		requests.Add(1)
		resp, err := harness.Client.Get(base + "/" + list + "?" + q.Encode())
		if err != nil {
			faults.Add(1)
			return nil, false
		}
		var page []struct {
			ID int64 `json:"id"`
		}
		err = decodeJSON(resp, &page)
		if err != nil || resp.StatusCode != http.StatusOK {
			faults.Add(1)
			return nil, false
		}
		for _, r := range page {
			ids = append(ids, r.ID)
		}
		if cursor = resp.Header.Get("next_page_cursor"); cursor == "" {
			return ids, true
		}
	}
}
