package caddymodule_test

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// quirkyBackend is the reference backend bending the page-size contract
// the ways real ones do, each list its own way, all below the gateway's
// default backend_max_per_page of 1000.
func quirkyBackend(seed uint64, records int) reference.Config {
	return reference.Config{
		Seed: seed, Records: records,
		ListMaxPerPage: map[string]int{
			"calls":             100, // the round clamp most help desks use
			"tickets/history":   137, // an odd one
			"grid/reports/time": 500,
		},
		FixedPerPage: map[string]int{"phone_numbers": 40}, // ignores _perPage
	}
}

// quirkyLimits is each list's real page limit in quirkyBackend.
var quirkyLimits = map[string]int{"calls": 100, "tickets/history": 137, "grid/reports/time": 500, "phone_numbers": 40}

// TestClampingBackendServesEveryRecord walks every list of a backend that
// clamps or ignores _perPage, through a real Caddy with the gateway's
// defaults, concurrently: every cursor walk, client-built cursor and _page
// request at page sizes below, at and above the list's limit is complete
// and exact; the gauge shows the limits learned once callers agree.
func TestClampingBackendServesEveryRecord(t *testing.T) {
	b := reference.New(quirkyBackend(11, 1200))
	c := gatewaytest.StartBehind(t, fmt.Sprintf(gatewaySite, ""), b, gatewaytest.Options{Admin: true})

	var wg sync.WaitGroup
	for list, limit := range quirkyLimits {
		all := strIDs(b.IDs(list))
		for walker, sizes := range [][]int{{7, limit - 1}, {limit, limit + 1}, {min(2*limit+3, 1000), 999}} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(limit), uint64(walker)))
				for _, size := range sizes {
					name := fmt.Sprintf("/%s (limit %d) at %d per page", list, limit, size)
					ids, _ := walkCursor(t, c.URL, "/"+list, size, "")
					if !assert.Equal(t, all, ids, "%s: cursor walk", name) {
						return
					}
					for range 4 {
						i := r.IntN(len(all))
						id, _ := strconv.ParseInt(all[i], 10, 64)
						id += r.Int64N(2) // the record's own id, or one above
						a := get(t, fmt.Sprintf("%s/%s?_perPage=%d&_cursor=%s", c.URL, list, size, cursorFor(strconv.FormatInt(id, 10))))
						require.Equal(t, http.StatusOK, a.status, string(a.body))
						from := i + 1
						if id > mustInt(all[i]) && i+1 < len(all) && mustInt(all[i+1]) == id {
							from = i + 2
						}
						assert.Equal(t, all[from:min(from+size, len(all))], a.ids(t), "%s: after %d", name, id)
					}
					last := (len(all)+size-1)/size + 1 // past the end
					for _, page := range []int{1, 2, 3, r.IntN(last) + 1, last - 1, last} {
						a := get(t, fmt.Sprintf("%s/%s?_perPage=%d&_page=%d", c.URL, list, size, page))
						require.Equal(t, http.StatusOK, a.status, string(a.body))
						from := min((page-1)*size, len(all))
						assert.Equal(t, all[from:min(from+size, len(all))], a.ids(t), "%s: _page %d", name, page)
					}
				}
			}()
		}
	}
	wg.Wait()

	// Two more callers meet each list's limit: the callers agree, and the
	// gauge shows it (one caller's limit is its own).
	for list := range quirkyLimits {
		for _, key := range []string{"k1", "k2"} {
			for _, size := range []int{7, 1000} {
				a := get(t, fmt.Sprintf("%s/%s?_perPage=%d", c.URL, list, size), "X-Api-Key", key)
				require.Equal(t, http.StatusOK, a.status, string(a.body))
			}
		}
	}
	resp, err := gatewaytest.Client.Get("http://" + c.Admin + "/metrics")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for list, limit := range quirkyLimits {
		assert.Contains(t, string(body), fmt.Sprintf("helpdesk_gateway_backend_page_limit{endpoint=\"/%s\"} %d\n", list, limit))
	}
}

func mustInt(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// TestClampingBackendUnderChurn is TestConsistencyUnderChurn on the quirky
// backend: while records are inserted and deleted around every backend
// call, concurrent walks at sizes below, at and above each clamp serve no
// record twice and skip none that existed throughout. The list with fixed
// pages is left out: no answer of such a backend holds the record that
// ends one of its pages and the next, so at those edges the overlap that
// proves nothing moved cannot be had (see docs/backends.md, Verify).
func TestClampingBackendUnderChurn(t *testing.T) {
	b := reference.New(quirkyBackend(12, 1200))
	m := &mischief{b: b, next: b, r: rand.New(rand.NewPCG(2, 2)), deleted: map[string]map[int64]bool{}}
	lists := []string{"calls", "tickets/history", "grid/reports/time"}
	initial := map[string][]int64{}
	for _, l := range lists {
		initial[l] = b.IDs(l)
		m.deleted[l] = map[int64]bool{}
	}
	c := gatewaytest.StartBehind(t, fmt.Sprintf(gatewaySite, ""), m)

	type walk struct {
		list, name string
		ids        []string
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		walks []walk
	)
	for _, l := range lists {
		for _, perPage := range []int{9, quirkyLimits[l], quirkyLimits[l] + 30} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ids, _ := walkCursorRetrying(t, c.URL, "/"+l, perPage, "", 5)
				mu.Lock()
				walks = append(walks, walk{l, fmt.Sprintf("/%s at %d per page", l, perPage), ids})
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	require.Len(t, walks, 3*len(lists), "every walk finished")

	m.mu.Lock()
	defer m.mu.Unlock()
	for _, w := range walks {
		nums := toInts(t, w.ids)
		require.True(t, slices.IsSorted(nums), w.name)
		require.Len(t, slices.Compact(slices.Clone(nums)), len(nums), "%s: no duplicate", w.name)
		var missing []string
		for _, id := range initial[w.list] {
			if _, found := slices.BinarySearch(nums, id); !found && !m.deleted[w.list][id] {
				missing = append(missing, strconv.FormatInt(id, 10))
			}
		}
		assert.Empty(t, missing, "%s: records that existed throughout were skipped: %s", w.name, strings.Join(missing, " "))
	}
}
