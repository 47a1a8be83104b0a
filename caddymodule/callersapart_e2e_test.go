package caddymodule_test

import (
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule"
	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// TestReadAheadCallersApart: issue 44's table on one instance with no
// readahead_store (as behind a sticky balancer): what one caller sends
// costs that caller at most. Alice walks twice; a job of 8 workers of
// one key starts each worker from a hand-built cursor at its eighth of
// the list and follows next_page_cursor to the next (250 pages each);
// Bob, who took no part, walks right after, then Alice again; Carol tries
// the README's example (a hand-built cursor after two pages) before she
// walks. Every
// walk is exact, and each costs at most 0.05 backend calls a page (the
// job past its workers' first pages, which find a hand-built cursor's
// place in the list). No caller's list stood down. Before read-ahead's
// proof was per caller, the job stood read-ahead down for every caller
// for a minute: 1.000 calls a page for each walk after it.
func TestReadAheadCallersApart(t *testing.T) {
	const perPage = 10
	b := reference.New(reference.Config{Seed: 44, Records: 6000})
	c := gatewaytest.StartBehind(t, fmt.Sprintf(gatewaySite, "readahead_ttl 30s"), b, gatewaytest.Options{Admin: true})
	ids := b.IDs("calls")
	calls := func() int64 { caddymodule.SettleReadsAhead(); return b.Requests("calls") }

	// walk walks as key from the id after (0: the first page) until its
	// last id reaches to (or the list ends), each page checked against
	// the list, and returns its pages. A lone walk lets the reads ahead
	// in flight end before each page (settle), so that what it costs does
	// not move with the machine's load; the job's workers, in parallel,
	// do not.
	walk := func(key string, perPage int, after, to int64, settle bool) (pages int) {
		t.Helper()
		cursor := ""
		if after > 0 {
			cursor = strconv.FormatInt(after, 10)
		}
		i, _ := slices.BinarySearch(ids, after+1)
		for {
			if settle {
				caddymodule.SettleReadsAhead()
			}
			a, got := pageAfter(t, c.URL, "calls", perPage, cursor, "X-Api-Key", key)
			pages++
			want := ids[i:min(i+perPage, len(ids))]
			if !assert.Equal(t, want, got, "%s: the page after %s", key, cursor) {
				return pages
			}
			i += len(got)
			if a.header.Get("next_page_cursor") == "" || got[len(got)-1] >= to {
				return pages
			}
			cursor = strconv.FormatInt(got[len(got)-1], 10)
		}
	}
	end := ids[len(ids)-1]
	cost := func(name, key string) float64 {
		t.Helper()
		before := calls()
		pages := walk(key, perPage, 0, end, true)
		require.Equal(t, (len(ids)+perPage-1)/perPage, pages, name)
		perPageCalls := float64(calls()-before) / float64(pages)
		t.Logf("%s: %.3f calls a page", name, perPageCalls)
		return perPageCalls
	}

	cost("alice", "alice")
	assert.LessOrEqual(t, cost("alice again", "alice"), 0.05)

	// The job: each worker's first page (a hand-built cursor's place is
	// found by search), then the workers in parallel, 250 pages each, as
	// 8 workers export 20,000 records by 10.
	const jobPerPage = 3
	n := len(ids) / 8
	first := make([]int64, 8)
	for w := range first {
		if w > 0 {
			first[w] = ids[w*n-1]
		}
		cursor := ""
		if first[w] > 0 {
			cursor = strconv.FormatInt(first[w], 10)
		}
		_, got := pageAfter(t, c.URL, "calls", jobPerPage, cursor, "X-Api-Key", "job")
		first[w] = got[len(got)-1]
	}
	before := calls()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		pages int
	)
	for w := range first {
		wg.Go(func() {
			to := end
			if w < 7 {
				to = ids[(w+1)*n-1]
			}
			p := walk("job", jobPerPage, first[w], to, false)
			mu.Lock()
			pages += p
			mu.Unlock()
		})
	}
	wg.Wait()
	job := float64(calls()-before) / float64(pages)
	t.Logf("the job: %.3f calls a page past its workers' first", job)
	assert.LessOrEqual(t, job, 0.05, "a parallel export from hand-built cursors keeps read-ahead")

	assert.LessOrEqual(t, cost("bob, right after the job", "bob"), 0.05, "the job changed what bob's walk cost")
	assert.LessOrEqual(t, cost("alice, right after the job", "alice"), 0.05, "the job changed what alice's walk cost")

	// The README's "Try it": two pages, then a cursor built by hand.
	walk("carol", 3, 0, ids[5], true)
	walk("carol", 3, 61, 61, true)
	assert.LessOrEqual(t, cost("carol, after the README's example", "carol"), 0.05)

	rep := adminReportOf(t, c)
	require.Len(t, rep.Gateways, 1)
	st := rep.Gateways[0].Readahead.Walks
	require.NotNil(t, st)
	t.Logf("walks: %+v", *st)
	assert.Zero(t, st.StoodDown, "no caller's list stood down")
	assert.Zero(t, st.Signs.ContinuedElsewhere+st.Signs.NotIssuedHere, "hand-built cursors, a parallel export and walks on one instance are no sign")
	assert.Equal(t, 4, st.Proven, "alice's, the job's, bob's and carol's lists proved that their walks stay")
}
