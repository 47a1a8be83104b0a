package caddymodule_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// TestVerifyCommandAgainstTheGateway runs `caddy helpdesk verify` against
// a real Caddy with the gateway in front of the reference backend.
func TestVerifyCommandAgainstTheGateway(t *testing.T) {
	t.Run("bare array", func(t *testing.T) {
		c, b, _ := startGateway(t, reference.Config{Seed: 5, Records: 1000}, "max_per_page 100")
		stdout, stderr, err := runHelpdesk(t, "verify", "--url", c.URL, "--endpoint", "/calls", "--per-page", "37")
		require.NoError(t, err, stdout+stderr)
		n := len(b.IDs("calls"))
		pages := n/37 + 1
		assert.Contains(t, stdout, fmt.Sprintf("_page walk: %d records in %d pages\ncursor walk: %d records in %d pages\nOK", n, pages, n, pages))
		assert.NotContains(t, stdout, "note:", "nothing changed during the walk")
	})
	t.Run("envelope, base path, another list", func(t *testing.T) {
		c, b, _ := startGateway(t, reference.Config{Seed: 6, Records: 300, Envelope: "data", BasePath: "/api/v3"},
			"base_path /api/v3\n\t\trecords_path data")
		stdout, stderr, err := runHelpdesk(t, "verify", "--url", c.URL+"/", "--endpoint", "/api/v3/tickets/history",
			"--per-page", "40", "--records-path", "data")
		require.NoError(t, err, stdout+stderr)
		n := len(b.IDs("tickets/history"))
		assert.Contains(t, stdout, fmt.Sprintf("cursor walk: %d records in %d pages\nOK", n, n/40+1))
	})
	t.Run("a gateway refused as too strict fails", func(t *testing.T) {
		c, _, _ := startGateway(t, reference.Config{Seed: 5, Records: 100}, "max_per_page 20")
		stdout, stderr, err := runHelpdesk(t, "verify", "--url", c.URL, "--endpoint", "/calls", "--per-page", "37")
		require.Error(t, err)
		assert.Contains(t, stdout, "400 Bad Request: ")
		assert.Contains(t, stdout, "FAIL: 2 problems (2 request)")
		assert.Contains(t, stderr, "verify found 2 problems")
	})
}

// TestVerifyCommandFindsNoGatewayInFront is verify against a Caddy that
// proxies straight to the backend: the backend ignores _cursor and lists
// newest first, and verify must say so.
func TestVerifyCommandFindsNoGatewayInFront(t *testing.T) {
	_, srv := gatewaytest.Backend(t, reference.Config{Seed: 7, Records: 120})
	c := gatewaytest.Start(t, "http://:0 {\n\treverse_proxy {backend}\n}\n", srv.URL)
	stdout, stderr, err := runHelpdesk(t, "verify", "--url", c.URL, "--endpoint", "/calls", "--per-page", "25")
	require.Error(t, err)
	assert.Contains(t, stdout, "cursor walk: 25 records in 1 page\n")
	assert.Contains(t, stdout, "a page must be in increasing id order")
	assert.Contains(t, stdout, "gap: ")
	assert.Contains(t, stderr, "verify found")
}

// TestVerifyCommandUnderChurn runs verify while records are inserted and
// deleted between backend calls: the gateway keeps its guarantee, so
// verify passes, while the _page walks show the churn.
func TestVerifyCommandUnderChurn(t *testing.T) {
	b := reference.New(reference.Config{Seed: 8, Records: 600})
	ch := &churner{b: b, r: rand.New(rand.NewPCG(8, 8)), used: map[int64]bool{}}
	for _, id := range b.IDs("calls") {
		ch.used[id] = true
	}
	c := gatewaytest.StartBehind(t, fmt.Sprintf(gatewaySite, "max_per_page 100"), ch)

	stdout, stderr, err := runHelpdesk(t, "verify", "--url", c.URL, "--endpoint", "/calls", "--per-page", "20")
	require.NoError(t, err, stdout+stderr)
	assert.Contains(t, stdout, "OK: no duplicates, gaps or order errors")
	assert.Contains(t, stdout, "note: the _page walk met", "the walks met the churn")
	assert.Contains(t, stdout, "of them gone by the recheck", "deleted records were rechecked")
	assert.Greater(t, ch.mutations(), 60)
}

// churner deletes a record and inserts one under an id never used before
// ahead of every backend call on /calls, so verify's assumption that ids
// are not reused holds.
type churner struct {
	b    *reference.Backend
	mu   sync.Mutex
	r    *rand.Rand
	used map[int64]bool
	n    int
}

func (c *churner) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/calls" {
		c.mu.Lock()
		ids := c.b.IDs("calls")
		c.b.Delete("calls", ids[c.r.IntN(len(ids))])
		for {
			id := 1 + c.r.Int64N(ids[len(ids)-1]+20)
			if !c.used[id] {
				c.used[id] = true
				_ = c.b.Insert("calls", id)
				break
			}
		}
		c.n += 2
		c.mu.Unlock()
	}
	c.b.ServeHTTP(w, r)
}

func (c *churner) mutations() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// TestVerifyCommandFailsOnABrokenGateway runs verify against a fake
// gateway on loopback that serves one record twice, then one that serves
// ids out of order: the command must exit non-zero.
func TestVerifyCommandFailsOnABrokenGateway(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault func(ids []int) []int // applied to the cursor page after id 20
		want  string
	}{
		{"a duplicate", func(ids []int) []int { return append([]int{20}, ids[:len(ids)-1]...) }, `duplicate: id "20" served twice by the cursor walk, on pages 2 and 3`},
		{"out of order", func(ids []int) []int { ids[0], ids[1] = ids[1], ids[0]; return ids }, `order: cursor page 3: id "21" follows "22"; ids must strictly increase`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				q := r.URL.Query()
				after := 0
				if c := q.Get("_cursor"); c != "" {
					id, err := cursor.Decode(c)
					require.NoError(t, err)
					after, _ = strconv.Atoi(id)
				} else if p, _ := strconv.Atoi(q.Get("_page")); p > 1 {
					after = (p - 1) * 10
				}
				var ids []int
				for id := after + 1; id <= min(after+10, 45); id++ {
					ids = append(ids, id)
				}
				if q.Has("_cursor") && after == 20 {
					ids = tc.fault(ids)
				}
				if after+10 < 45 {
					w.Header().Set("next_page_cursor", cursor.Encode(strconv.Itoa(ids[len(ids)-1])))
				}
				recs := make([]map[string]int, len(ids))
				for i, id := range ids {
					recs[i] = map[string]int{"id": id}
				}
				_ = json.NewEncoder(w).Encode(recs)
			}))
			t.Cleanup(srv.Close)
			require.True(t, strings.HasPrefix(srv.URL, "http://127.0.0.1:"))
			stdout, stderr, err := runHelpdesk(t, "verify", "--url", srv.URL, "--endpoint", "/calls", "--per-page", "10")
			require.Error(t, err)
			assert.Contains(t, stdout, tc.want)
			assert.Contains(t, stdout, "FAIL: 1 problem")
			assert.Contains(t, stderr, "verify found 1 problem")
		})
	}
}

// TestVerifyBackendFindsLostRecords runs verify --backend on two gateways
// in front of backends that clamp _perPage without saying so. One clamps
// to 100, which the gateway detects and plans within: verify passes and
// reports the clamp with its Caddyfile line. The other clamps to 10, below
// the 25 records per page the gateway's contract requires, so the gateway
// takes its short pages for the list's end: the walk through the gateway
// alone looks fine, and only the backend walk shows the lost records.
func TestVerifyBackendFindsLostRecords(t *testing.T) {
	t.Run("a clamp the gateway adapts to", func(t *testing.T) {
		b, srv := gatewaytest.Backend(t, reference.Config{Seed: 9, Records: 700, ListMaxPerPage: map[string]int{"calls": 100}})
		c := gatewaytest.Start(t, fmt.Sprintf(gatewaySite, ""), srv.URL)
		stdout, stderr, err := runHelpdesk(t, "verify", "--url", c.URL, "--endpoint", "/calls", "--per-page", "150", "--backend", srv.URL)
		require.NoError(t, err, stdout+stderr)
		n := len(b.IDs("calls"))
		assert.Contains(t, stdout, fmt.Sprintf("backend _page walk: %d records in %d pages\n", n, (n+99)/100))
		assert.Contains(t, stdout, fmt.Sprintf("cursor walk: %d records in %d pages\n", n, (n+149)/150))
		assert.Contains(t, stdout, "page size: clamps _perPage to 100 (asked for 1000)")
		assert.Contains(t, stdout, "first page: _page=1")
		assert.Contains(t, stdout, "id order: ascending numeric with _sortField=id&_sortDir=ASC")
		assert.Contains(t, stdout, "matching Caddyfile lines (helpdesk_gateway block):\n\tbackend_max_per_page 100\n\tid_order numeric\n\tbackend_sort _sortField=id&_sortDir=ASC\n")
		assert.Contains(t, stdout, "OK: no duplicates, gaps or order errors")
	})
	t.Run("a clamp below the contract loses records", func(t *testing.T) {
		b, srv := gatewaytest.Backend(t, reference.Config{Seed: 9, Records: 300, MaxPerPage: 10})
		c := gatewaytest.Start(t, fmt.Sprintf(gatewaySite, ""), srv.URL)

		// Through the gateway alone, both walks end at the same early page.
		stdout, stderr, err := runHelpdesk(t, "verify", "--url", c.URL, "--endpoint", "/calls", "--per-page", "20")
		require.NoError(t, err, stdout+stderr)
		assert.Contains(t, stdout, "cursor walk: 10 records in 1 page\nOK")

		stdout, stderr, err = runHelpdesk(t, "verify", "--url", c.URL, "--endpoint", "/calls", "--per-page", "20", "--backend", srv.URL)
		require.Error(t, err)
		n := len(b.IDs("calls"))
		assert.Contains(t, stdout, fmt.Sprintf("the gateway's cursor walk served 10 records, the backend's own walk %d records; %d records missing", n, n-10))
		assert.Contains(t, stdout, fmt.Sprintf(`lost: id "%d" is in the backend's list before and after the gateway's cursor walk, which never served it`, b.IDs("calls")[10]))
		assert.Contains(t, stdout, "page size: clamps _perPage to 10")
		assert.Contains(t, stdout, "below the 25 the gateway needs")
		assert.Contains(t, stdout, fmt.Sprintf("FAIL: %d problems (%d lost)", n-10, n-10))
		assert.Contains(t, stderr, fmt.Sprintf("verify found %d problems", n-10))
	})
}

// TestVerifyBackendKeysetWalk runs `caddy helpdesk verify --backend
// --backend-keyset` against a backend that compares ids as text (after 9
// come 20, 21, ... in its answer, not 11): the gateway in front of it
// serves every page right, checking its keyset answers by offset, but
// the template is wrong for this backend, and verify fails with a
// non-zero exit, naming the first id where the backend's keyset walk
// leaves its own.
func TestVerifyBackendKeysetWalk(t *testing.T) {
	all := denseIDs(800)
	b := newKeysetBackend("id_gt={id}", cursor.Numeric, all)
	b.mode = "text"
	srv := httptest.NewServer(b)
	t.Cleanup(srv.Close)
	c := gatewaytest.Start(t, fmt.Sprintf(gatewaySite, "backend_keyset id_gt={id}"), srv.URL)
	stdout, stderr, err := runHelpdesk(t, "verify", "--url", c.URL, "--endpoint", "/calls", "--per-page", "10",
		"--backend", srv.URL, "--backend-keyset", "id_gt={id}")
	require.Error(t, err, stdout)
	assert.Contains(t, stdout, "cursor walk: 800 records in 80 pages\n", "the gateway's own walk is right")
	assert.Contains(t, stdout, `keyset: backend_keyset: the backend's keyset walk and its own walk differ first after id "9": the keyset walk has id "20" where its own walk has "11"`)
	assert.Contains(t, stdout, `backend_keyset "id_gt={id}": not kept by the backend`)
	assert.Contains(t, stderr, "verify found")
}
