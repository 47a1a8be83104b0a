package caddymodule_test

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// TestReadaheadMemoryBound runs hundreds of callers (each its own API
// key) walking concurrently with random page sizes through a gateway
// whose readahead_memory is 64KiB, a few windows' worth, and reloads the
// config while they walk. Every walk is exact, across the reload too; the
// bytes the windows hold, sampled from the admin endpoint's metrics all
// along, never exceed the bound; and windows were evicted for it.
func TestReadaheadMemoryBound(t *testing.T) {
	const (
		walkers = 200
		bound   = 64 << 10
		gauge   = `helpdesk_gateway_readahead_window_bytes`
		evicted = `helpdesk_gateway_readahead_windows_dropped_total{reason="evicted"}`
	)
	b := reference.New(reference.Config{Seed: 37, Records: 50})
	srv := httptest.NewServer(b)
	t.Cleanup(srv.Close)
	// A fixed port, so the reloaded config keeps the listener; the reload
	// changes index_size, so it makes a new gateway with empty windows.
	site := "http://" + gatewaytest.FreeLoopbackAddr(t)[len("127.0.0.1"):] +
		" {\n\thelpdesk_gateway {\n\t\treadahead_memory 64KiB\n\t\tindex_size %d\n\t}\n\treverse_proxy {backend}\n}\n"
	c := gatewaytest.Start(t, fmt.Sprintf(site, 1000), srv.URL, gatewaytest.Options{Admin: true})

	metric := func(name string) float64 {
		// Sampled while the config reloads: a connection that reaches the
		// old admin server as it closes is asked again.
		resp, err := gatewaytest.Client.Get("http://" + c.Admin + "/metrics")
		for try := 0; err != nil && try < 20; try++ {
			time.Sleep(10 * time.Millisecond)
			resp, err = gatewaytest.Client.Get("http://" + c.Admin + "/metrics")
		}
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		// The sample's own line: metricValue would match the gauge's
		// unlabelled name in its # HELP line.
		for line := range strings.SplitSeq(string(body), "\n") {
			if v, ok := strings.CutPrefix(line, name+" "); ok {
				f, err := strconv.ParseFloat(v, 64)
				require.NoError(t, err, line)
				return f
			}
		}
		return 0 // a counter not yet counted
	}
	evictedBefore := metric(evicted)

	// Sample the gauge until the walks end.
	var (
		samples atomic.Int64
		highest atomic.Int64
		stop    = make(chan struct{})
		sampled = make(chan struct{})
	)
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			v := int64(metric(gauge))
			samples.Add(1)
			for h := highest.Load(); v > h && !highest.CompareAndSwap(h, v); h = highest.Load() {
			}
		}
	}()

	lists := []string{"calls", "phone_numbers"}
	want := map[string][]string{}
	for _, l := range lists {
		want[l] = strIDs(b.IDs(l))
	}
	var (
		wg       sync.WaitGroup
		requests atomic.Int64
		mu       sync.Mutex
		walks    = map[string]memoryWalk{} // by key
	)
	for w := range walkers {
		key := "walker-" + strconv.Itoa(w)
		list := lists[w%len(lists)]
		perPage := 5 + rand.IntN(11)
		wg.Go(func() {
			var ids []string
			after := ""
			for pages := 0; ; pages++ {
				require.Less(t, pages, 1000)
				u := c.URL + "/" + list + "?_perPage=" + strconv.Itoa(perPage)
				if after != "" {
					u += "&_cursor=" + after
				}
				a := get(t, u, "X-Api-Key", key)
				requests.Add(1)
				require.Equal(t, 200, a.status, string(a.body))
				ids = append(ids, a.ids(t)...)
				if after = a.header.Get("next_page_cursor"); after == "" {
					break
				}
			}
			mu.Lock()
			walks[key] = memoryWalk{list, perPage, ids}
			mu.Unlock()
		})
	}
	// Reload in the middle of the walks.
	for requests.Load() < walkers*2 {
		time.Sleep(2 * time.Millisecond)
	}
	c.Reload(t, fmt.Sprintf(site, 2000), srv.URL)
	atReload := requests.Load()
	wg.Wait()
	close(stop)
	<-sampled

	require.Len(t, walks, walkers, "every walk finished")
	for key, w := range walks {
		require.Equal(t, want[w.list], w.ids, "%s: /%s by %d: the walk is exact", key, w.list, w.perPage)
	}
	assert.Greater(t, requests.Load(), atReload, "walks went on after the reload")
	assert.Greater(t, samples.Load(), int64(3), "the gauge was sampled during the walks")
	assert.LessOrEqual(t, highest.Load(), int64(bound), "window bytes never exceed readahead_memory")
	assert.Greater(t, metric(evicted)-evictedBefore, 0.0, "windows were evicted for the bound")
	t.Logf("%d requests (%d before the reload), %d samples, at most %d window bytes, %v windows evicted",
		requests.Load(), atReload, samples.Load(), highest.Load(), metric(evicted)-evictedBefore)
}

// memoryWalk is one walk of TestReadaheadMemoryBound.
type memoryWalk struct {
	list    string
	perPage int
	ids     []string
}
