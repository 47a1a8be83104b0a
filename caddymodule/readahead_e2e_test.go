package caddymodule_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule"
	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// pageAfter asks list for the perPage records after the id after ("" for
// the first page), with headers as name, value pairs, and returns the
// answer, which must be a 200, and its ids.
func pageAfter(t *testing.T, base, list string, perPage int, after string, headers ...string) (answer, []int64) {
	t.Helper()
	u := base + "/" + list + "?_perPage=" + strconv.Itoa(perPage)
	if after != "" {
		u += "&_cursor=" + cursorFor(after)
	}
	a := get(t, u, headers...)
	require.Equal(t, http.StatusOK, a.status, string(a.body))
	return a, toInts(t, a.ids(t))
}

// gapAfter returns the first id of ids, from index i on, with a free id
// right after it.
func gapAfter(t *testing.T, ids []int64, i int) int64 {
	t.Helper()
	for ; i+1 < len(ids); i++ {
		if ids[i]+1 < ids[i+1] {
			return ids[i]
		}
	}
	t.Fatal("no free id in the list")
	return 0
}

// TestReadaheadUnderChurn walks every cursor list by cursor at _perPage
// 10, read-ahead on as by default, while the backend churns (each walker
// makes random inserts and deletes anywhere in every list after each page:
// a rate per second would churn more the slower the machine walks) and
// each walker changes its list right where its window lies: after each
// page it deletes the cursor's record and now and then the one after it,
// and inserts records right after the cursor. The walks are served mostly
// from windows (under 0.2 backend calls a page; about 0.03 is usual) and
// keep the walk-level guarantee: ids strictly increase, no duplicate, and
// every record that existed for the whole walk appears.
func TestReadaheadUnderChurn(t *testing.T) {
	b := reference.New(reference.Config{Seed: 23, Records: 1500, RecordDeletions: true})
	c := gatewaytest.StartBehind(t, fmt.Sprintf(gatewaySite, ""), b)
	caddymodule.TrustWalks() // as a lone instance after its first walk

	type result struct {
		ids          []int64
		pages, calls int
	}
	results := make([]result, len(cursorEndpoints))
	initial := make([][]int64, len(cursorEndpoints))
	for i, list := range cursorEndpoints {
		initial[i] = b.IDs(list)
	}
	var wg sync.WaitGroup
	for i, list := range cursorEndpoints {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(i), 5))
			before := b.Requests(list)
			var res result
			after := ""
			for {
				a, page := pageAfter(t, c.URL, list, 10, after)
				res.pages++
				res.ids = append(res.ids, page...)
				if a.header.Get("next_page_cursor") == "" {
					break
				}
				require.Len(t, page, 10, "%s: a page before the last is full", list)
				require.Less(t, res.pages, 5000, "%s: the walk does not end", list)
				last := page[len(page)-1]
				after = strconv.FormatInt(last, 10)
				// Inside the window the walk reads now: the cursor's own
				// record, maybe the next, and new records right after it.
				b.Delete(list, last)
				if r.IntN(3) == 0 {
					ids := b.IDs(list)
					if k, _ := slices.BinarySearch(ids, last); k < len(ids) {
						b.Delete(list, ids[k])
					}
				}
				_ = b.Insert(list, last+1)
				_ = b.Insert(list, last+2)
				b.Churn(1)
			}
			res.calls = int(b.Requests(list) - before)
			results[i] = res
		})
	}
	wg.Wait()

	for i, list := range cursorEndpoints {
		res := results[i]
		require.NotZero(t, res.pages, list)
		for k := 1; k < len(res.ids); k++ {
			require.Less(t, res.ids[k-1], res.ids[k], "%s: ids strictly increase, no duplicate", list)
		}
		missing := 0
		for _, id := range initial[i] {
			if _, found := slices.BinarySearch(res.ids, id); !found && !b.Deleted(list, id) {
				missing++
			}
		}
		assert.Zero(t, missing, "%s: records that existed for the whole walk were skipped", list)
		perPage := float64(res.calls) / float64(res.pages)
		assert.Less(t, perPage, 0.2, "%s: backend calls per page (%d calls, %d pages)", list, res.calls, res.pages)
		t.Logf("%s: %d pages, %d backend calls, %.3f a page", list, res.pages, res.calls, perPage)
	}
	for i, list := range cursorEndpoints {
		assert.NotEqual(t, initial[i], b.IDs(list), "%s: the list changed", list)
	}
}

// TestReadaheadFreshness reads a window, then inserts and deletes records
// in the backend inside the range the window holds. A page asked for
// within the TTL is cut from the window: no backend call, and the records
// the window read, without the changes. The same caller's page after the
// same cursor asked for once the TTL has passed is the backend's list as
// it is now: the insert is in it, the deleted record is not. A cursor
// built by hand deep in the window is no page's end: the walk rule reads
// it from the backend at once.
//
// Neither check may depend on how fast the machine is. "Within the TTL"
// is asked of a gateway whose TTL (an hour) no test outlives; "once the
// TTL has passed" of one with a short TTL, waited out from after the
// last page and the last read ahead that could hold the page (the chain
// entry of the cursor is as old as page 3, not page 1).
func TestReadaheadFreshness(t *testing.T) {
	const ttl, perPage = 600 * time.Millisecond, 10
	b := reference.New(reference.Config{Seed: 29, Records: 400})
	srv := httptest.NewServer(b)
	t.Cleanup(srv.Close)
	// The calls the pages made in their own requests, apart from the
	// reads ahead of the walker they started in the background: settled
	// first, or a read in flight counts at the backend after it is read
	// and in BackgroundCalls before.
	own := func() int64 {
		caddymodule.SettleReadsAhead()
		return b.Requests("calls") - caddymodule.BackgroundCalls()
	}
	// Two gateways in one Caddy (one config per process): within, whose
	// TTL no test outlives, and short.
	within, short := "http://"+gatewaytest.FreeLoopbackAddr(t), "http://"+gatewaytest.FreeLoopbackAddr(t)
	site := "%s {\n\thelpdesk_gateway {\n\t\treadahead_ttl %s\n\t}\n\treverse_proxy {backend}\n}\n"
	gatewaytest.Start(t, fmt.Sprintf(site, within, "1h")+fmt.Sprintf(site, short, ttl), srv.URL)
	caddymodule.TrustWalks()

	for i, tc := range []struct {
		name string
		// at is the index, in the list, of the record right before the
		// changes, which is the cursor asked after: the last record of
		// page 3 (the next page), or a record deep in the window, a
		// cursor built by hand.
		at int
	}{
		{"in the next page", 3*perPage - 1},
		{"deep in the window", 3*perPage + 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := []string{"X-Api-Key", "fresh-" + strconv.Itoa(i)} // a caller of its own
			ids := b.IDs("calls")
			// Pages 1 to 3 on each gateway: the second continues the walk
			// and reads a window past it, which the third is cut from.
			for _, url := range []string{within, short} {
				_, p1 := pageAfter(t, url, "calls", perPage, "", key...)
				_, p2 := pageAfter(t, url, "calls", perPage, strconv.FormatInt(p1[perPage-1], 10), key...)
				calls := own()
				_, p3 := pageAfter(t, url, "calls", perPage, strconv.FormatInt(p2[perPage-1], 10), key...)
				require.Equal(t, ids[2*perPage:3*perPage], p3)
				if url == within {
					require.Equal(t, calls, own(), "page 3 was cut from the window page 2 read")
				}
			}
			// Every window and chain entry that could hold the page after
			// the cursor is from before now.
			caddymodule.SettleReadsAhead()
			read := time.Now()

			cursor := ids[tc.at]
			deleted := ids[tc.at+2]
			require.True(t, b.Delete("calls", deleted))
			inserted := gapAfter(t, ids, tc.at+4) + 1
			require.NoError(t, b.Insert("calls", inserted))
			after := strconv.FormatInt(cursor, 10)

			calls := own()
			_, cut := pageAfter(t, within, "calls", perPage, after, key...)
			if tc.at != 3*perPage-1 {
				// A cursor built by hand is no page's end: the walk rule
				// reads it from the backend, whatever a window holds.
				assert.Greater(t, own(), calls, "a hand-built cursor is read from the backend")
				assert.Contains(t, cut, inserted, "the insert shows at once")
				return
			}
			assert.Equal(t, calls, own(), "within the TTL the page is cut from the window")
			assert.Equal(t, ids[tc.at+1:tc.at+1+perPage], cut, "within the TTL the page is the window's, without the changes")

			time.Sleep(time.Until(read.Add(ttl)))
			calls = own()
			_, fresh := pageAfter(t, short, "calls", perPage, after, key...)
			want, _ := nextAfter(b.IDs("calls"), cursor, perPage)
			assert.Equal(t, want, fresh, "after the TTL the page is the list as the backend holds it now")
			assert.Contains(t, fresh, inserted, "the insert shows")
			assert.NotContains(t, fresh, deleted, "the delete shows")
			assert.Greater(t, own(), calls, "the backend was asked")
		})
	}
}

// TestReadaheadCacheControl: a request that asks for the backend's own
// answer (Cache-Control: no-cache or max-age=0, or Pragma: no-cache
// without Cache-Control, as RFC 9111 reads them) is never cut from a
// window, even one that holds its page: the backend is called, and the
// page shows a change made in the backend just before. The same request
// without them, or with a Pragma that a Cache-Control overrides, is cut
// from the window.
func TestReadaheadCacheControl(t *testing.T) {
	const perPage = 10
	b := reference.New(reference.Config{Seed: 31, Records: 600})
	c := gatewaytest.StartBehind(t, fmt.Sprintf(gatewaySite, "readahead_ttl 30s"), b)
	caddymodule.TrustWalks()

	for i, tc := range []struct {
		name    string
		headers []string
		fresh   bool
	}{
		{"no directive", nil, false},
		{"Cache-Control: no-cache", []string{"Cache-Control", "no-cache"}, true},
		{"Cache-Control: max-age=0", []string{"Cache-Control", "max-age=0"}, true},
		{"Cache-Control: max-age=00", []string{"Cache-Control", "max-age=00"}, true},
		{`Cache-Control: max-age="0"`, []string{"Cache-Control", `private, Max-Age="0"`}, true},
		{"Cache-Control: max-age=10", []string{"Cache-Control", "max-age=10"}, false},
		{"Cache-Control with a list", []string{"Cache-Control", "no-transform, No-Cache"}, true},
		{"Pragma: no-cache", []string{"Pragma", "no-cache"}, true},
		{"Pragma: no-cache under Cache-Control: max-age=60", []string{"Pragma", "no-cache", "Cache-Control", "max-age=60"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := []string{"X-Api-Key", "cc-" + strconv.Itoa(i)}
			_, p1 := pageAfter(t, c.URL, "calls", perPage, "", key...)
			_, p2 := pageAfter(t, c.URL, "calls", perPage, strconv.FormatInt(p1[perPage-1], 10), key...)
			// The window page 2 read holds page 3. Change page 3 in the
			// backend: its second record goes, a new one comes after
			// its fourth.
			cursor := p2[perPage-1]
			ids := b.IDs("calls")
			at, _ := slices.BinarySearch(ids, cursor)
			deleted := ids[at+2]
			require.True(t, b.Delete("calls", deleted))
			inserted := gapAfter(t, ids, at+4) + 1
			require.NoError(t, b.Insert("calls", inserted))
			calls := b.Requests("calls")

			_, p3 := pageAfter(t, c.URL, "calls", perPage, strconv.FormatInt(cursor, 10), append(key, tc.headers...)...)
			want, _ := nextAfter(b.IDs("calls"), cursor, perPage)
			if tc.fresh {
				assert.Greater(t, b.Requests("calls"), calls, "the backend was called")
				assert.Equal(t, want, p3, "the page is the backend's list as it is now")
			} else {
				assert.Equal(t, calls, b.Requests("calls"), "the page was cut from the window")
				assert.Contains(t, p3, deleted, "the window's moment: before the delete")
			}
		})
	}
}

// TestReadaheadWindowServesConcurrentPages: one caller (a sync job with
// several workers, say, all sending the same API key) asks for pages that
// overlap inside one window at the same time, each worker continuing the
// walk from one cursor. Each page is exactly its
// records, in a well-formed body: a page cut from a window must not
// change bytes another page of the same window is being written from.
func TestReadaheadWindowServesConcurrentPages(t *testing.T) {
	const perPage = 10
	b := reference.New(reference.Config{Seed: 41, Records: 600})
	srv := httptest.NewServer(b)
	t.Cleanup(srv.Close)
	// The calls the pages made in their own requests, apart from the
	// reads ahead of the walker they started in the background.
	own := func() int64 { return b.Requests("calls") - caddymodule.BackgroundCalls() }
	c := gatewaytest.Start(t, fmt.Sprintf(gatewaySite, "readahead_ttl 30s"), srv.URL)
	caddymodule.TrustWalks()
	key := []string{"X-Api-Key", "workers"}
	ids := b.IDs("calls")

	// A walk of six pages: the window the second page read runs out, and
	// the sixth reads a larger one, past the page, that holds what the
	// workers ask for below.
	after := ""
	for range 6 {
		_, page := pageAfter(t, c.URL, "calls", perPage, after, key...)
		after = strconv.FormatInt(page[len(page)-1], 10)
	}
	from, _ := slices.BinarySearch(ids, ids[6*perPage-1])
	// Eight pages of one record after it: the first from the window, the
	// rest read cold (a cursor comes back once for each time it was handed
	// out: liststore/stay.go); each hands out the cursor after them.
	for range 8 {
		_, got := pageAfter(t, c.URL, "calls", 1, after, key...)
		require.Equal(t, ids[from+1:from+2], got)
	}
	calls := own()
	from++

	// Each worker walks on from that cursor, by pages of its own sizes,
	// three pages: cursors that continue the walk, all inside the window
	// the sixth page read (the walk rule cuts only those from it).
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 41))
			at := from
			for range 3 {
				size := 1 + r.IntN(10)
				_, got := pageAfter(t, c.URL, "calls", size, strconv.FormatInt(ids[at], 10), key...)
				assert.Equal(t, ids[at+1:at+1+size], got, "the %d records after %d", size, ids[at])
				at += size
			}
		})
	}
	wg.Wait()
	assert.Equal(t, calls, own(), "every page was cut from the window")
}

// TestReadaheadAtTheBackendLimit walks, through a real Caddy, by pages as
// large as the backend's limit and larger, where no window holds two
// pages: each page's last call reads on, and the next page starts from
// what it holds (a head), so the walk costs the page-numbered reference
// backend about one call a page and what a _page walk steps through,
// where it cost two calls a page and twice the steps. Exact, record for
// record, in every dialect's page sizes. The walker lets the reads ahead
// in flight end before each page (walkCursorSettled).
func TestReadaheadAtTheBackendLimit(t *testing.T) {
	const records, limit = 6000, 200
	for _, tc := range []struct {
		perPage int
		calls   float64 // per page, at most
		stepped float64 // of a _page walk's, at most
	}{
		{limit, 1.15, 1.15},         // before heads: 2.00 and 2.00
		{limit * 3 / 2, 1.75, 1.75}, // 2.05 and 1.97; 1.5 calls is the least a page of 301 records in answers of 200 can cost
	} {
		t.Run(fmt.Sprintf("perPage=%d", tc.perPage), func(t *testing.T) {
			b := reference.New(reference.Config{Seed: 31, Records: records, MaxPerPage: limit})
			c := gatewaytest.StartBehind(t, fmt.Sprintf(gatewaySite, fmt.Sprintf("backend_max_per_page %d\n\t\tmax_per_page 1000", limit)), b)
			caddymodule.TrustWalks()
			ids, pages := walkCursorSettled(t, c.URL, "/calls", tc.perPage, "")
			require.Equal(t, strIDs(b.IDs("calls")), ids)
			pageWalk := int64(0) // a _page walk by the same pages, each stepping through all before it
			for off := 0; off < records; off += tc.perPage {
				pageWalk += int64(min(off+tc.perPage, records))
			}
			calls, stepped := b.Requests("calls"), b.Stepped("calls")
			t.Logf("%d pages: %.3f calls a page, %.3f of a _page walk's records stepped through",
				pages, float64(calls)/float64(pages), float64(stepped)/float64(pageWalk))
			assert.LessOrEqual(t, float64(calls)/float64(pages), tc.calls, "backend calls a page")
			assert.LessOrEqual(t, float64(stepped)/float64(pageWalk), tc.stepped, "records stepped through, of a _page walk's")
		})
	}
}
