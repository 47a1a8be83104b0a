package caddymodule_test

import (
	"fmt"
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

// mischief changes a list right where each backend call looks: before the
// call is served it deletes records at and around the window's start,
// inserts records just below it, and now and then inserts a burst of
// records far before it. It remembers what it deleted, so a test knows
// which records existed throughout.
type mischief struct {
	b    *reference.Backend
	next http.Handler

	mu      sync.Mutex
	r       *rand.Rand
	deleted map[string]map[int64]bool
}

func (m *mischief) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	list := strings.TrimPrefix(r.URL.Path, "/")
	page, _ := strconv.Atoi(r.URL.Query().Get("_page"))
	size, _ := strconv.Atoi(r.URL.Query().Get("_perPage"))
	if page > 0 && m.b.Len(list) > 0 {
		m.strike(list, (page-1)*size)
	}
	m.next.ServeHTTP(w, r)
}

func (m *mischief) strike(list string, start int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ids := m.b.IDs(list)
	at := min(start, len(ids)-1)
	for range m.r.IntN(3) {
		switch m.r.IntN(4) {
		case 0: // delete the record at the window start or a neighbour
			i := min(max(at+m.r.IntN(3)-1, 0), len(ids)-1)
			if m.b.Delete(list, ids[i]) {
				m.deleted[list][ids[i]] = true
			}
		case 1: // insert just below the window start
			_ = m.b.Insert(list, ids[at]-1-m.r.Int64N(2))
		case 2: // a burst of inserts anywhere before it
			for range 10 {
				if at > 0 {
					_ = m.b.Insert(list, ids[m.r.IntN(at)]+1)
				}
			}
		default: // insert right after the start
			_ = m.b.Insert(list, ids[at]+1)
		}
	}
}

func TestConsistencyUnderChurn(t *testing.T) {
	b := reference.New(reference.Config{Seed: 3, Records: 1500})
	m := &mischief{b: b, next: b, r: rand.New(rand.NewPCG(1, 1)), deleted: map[string]map[int64]bool{}}
	lists := []string{"calls", "grid/reports/time", "phone_numbers", "tickets/history"}
	initial := map[string][]int64{}
	for _, l := range lists {
		initial[l] = b.IDs(l)
		m.deleted[l] = map[int64]bool{}
	}
	c := gatewaytest.StartBehind(t, fmt.Sprintf(gatewaySite, "backend_max_per_page 40"), m)

	type walk struct {
		list string
		ids  []string
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		walks []walk
	)
	for _, l := range lists {
		for client := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				perPage := []int{7, 25, 60}[client] // 60 needs stitched calls
				ids, _ := walkCursorRetrying(t, c.URL, "/"+l, perPage, "", 5)
				mu.Lock()
				walks = append(walks, walk{l, ids})
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	require.Equal(t, 12, len(walks), "every walk finished")

	m.mu.Lock()
	defer m.mu.Unlock()
	for _, w := range walks {
		nums := toInts(t, w.ids)
		for i := 1; i < len(nums); i++ {
			require.Less(t, nums[i-1], nums[i], "%s: ids must strictly increase (no duplicate)", w.list)
		}
		missing := 0
		for _, id := range initial[w.list] {
			if _, found := slices.BinarySearch(nums, id); !found && !m.deleted[w.list][id] {
				missing++
			}
		}
		assert.Zero(t, missing, "%s: records that existed throughout were skipped", w.list)
	}
	// The mischief really happened.
	for _, l := range lists {
		assert.NotEmpty(t, m.deleted[l], l)
		assert.NotEqual(t, initial[l], b.IDs(l), l)
	}
}
