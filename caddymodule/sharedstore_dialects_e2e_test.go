package caddymodule_test

import (
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
	"github.com/helpdesk-gateway/gateway/redisstore/redistest"
)

// storeBackend is a backend unlike the reference's defaults, walked
// through instances that share read-ahead's store. The store keeps only
// answers the engine checked, but each instance sizes the windows it
// reads by the page limit it learned itself (learned limits are not
// shared), and the store keeps a window as pages of the walk's
// _perPage: a window one instance wrote of such a backend is cut by
// another that may have learned nothing yet, at another page size.
type storeBackend struct {
	name string
	// e is the backend's paging, envelope and page limit: the most
	// records an answer holds, or with fixed the number every answer
	// but the last holds.
	e exampleBackend
	// fixed makes the backend ignore the page size asked for.
	fixed bool
	// options are the gateway's backend_* options for it.
	options string
	// maxCalls bounds the backend calls per page of a walk at 10 (and
	// 10 then 7) and at 100 a page, loosely: the point is the walks.
	// Under churn the bound at 100 is twice this: where mischief moved
	// records between two answers of a page, the page is read again.
	maxCalls [2]float64
}

// storeBackends are the backends of clamp_e2e_test.go and
// dialect_e2e_test.go, each clamping silently below the gateway's
// default backend_max_per_page of 1000 or sending pages of its own size.
//
// A window of a clamping backend holds at most its 100 records, ten
// pages of 10: about 0.1 to 0.17 calls a page at 10, and one answer or
// two a page at 100. A backend that ignores _perPage is read ahead of
// little (each answer's edge is read again, docs/backends.md, Verify):
// about 1.75 calls a page at 10, as one instance alone costs (1.7), and
// 6.6 at 100.
var storeBackends = []storeBackend{
	{name: "clamps _perPage", e: exampleBackend{limit: dialectLimit}, maxCalls: [2]float64{0.5, 2.5}},
	{name: "ignores _perPage", e: exampleBackend{limit: quirkyLimits["phone_numbers"]}, fixed: true, maxCalls: [2]float64{2.5, 15}},
	{name: "pages from 0", e: exampleBackend{paging: pagingDialects[2].paging, limit: dialectLimit},
		options: pagingDialects[2].options, maxCalls: [2]float64{0.5, 2.5}},
	{name: "offset-limit", e: exampleBackend{paging: pagingDialects[3].paging, limit: dialectLimit},
		options: pagingDialects[3].options, maxCalls: [2]float64{0.5, 2.5}},
	{name: "page-per_page envelope", e: exampleBackend{paging: pagingDialects[1].paging, envelope: pagingDialects[1].envelope, limit: dialectLimit},
		options: pagingDialects[1].options, maxCalls: [2]float64{0.5, 2.5}},
}

// storeWalkPlans are the walks of each stage, one after another by the
// same caller: below the backend's limit, at or above it, and one that
// changes _perPage a third of the way through, so that its pages end
// inside the pages its windows were kept as.
var storeWalkPlans = []struct {
	name  string
	sizes []int // the page size, then the one from a third on
}{
	{"perPage=10", []int{10}},
	{"perPage=100", []int{100}},
	{"perPage=10 then 7", []int{10, 7}},
}

// sharedStoreWalksOf is churnedWalksBehind for a storeBackend, through
// three gateway instances behind round_robin sharing store, with the
// backend's own Config. With churn the mischief returned changes the
// list where each backend call looks (the test churns it anywhere, a few
// records a page), as
// in TestPagingUnderChurn; without it the list changes between walks
// only (churnedWalks.start).
func sharedStoreWalksOf(t *testing.T, k storeBackend, records int, churn bool, store *redistest.Server) (*churnedWalks, *mischief) {
	cfg := reference.Config{Seed: 33, Records: records, MaxPerPage: k.e.limit, Envelope: k.e.envelope, Paging: k.e.paging}
	if k.fixed {
		cfg.FixedPerPage = map[string]int{"calls": k.e.limit}
	}
	b := reference.New(cfg)
	var (
		h http.Handler = b
		m *mischief
	)
	if churn {
		m = &mischief{b: b, next: b, r: rand.New(rand.NewPCG(33, 33)), deleted: map[string]map[int64]bool{"calls": {}}}
		h = windowMischief{m}
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.Close()
		b.Close()
	})
	c := gatewaytest.Start(t, sharedStoreSites(t, store, k.options), srv.URL)
	return &churnedWalks{t: t, e: k.e, readahead: true, b: b, url: c.URL,
		r: rand.New(rand.NewPCG(33, uint64(records))), list: "calls"}, m
}

// TestSharedStoreDialects walks backends unlike the reference
// (storeBackends) through three gateway instances behind round_robin
// sharing one redis-server, so that no two pages in a row reach the same
// instance. Each stage walks the list at 10 a page, at 100, and at 10
// then 7, one walk after another by the same caller, the list changed
// between walks (records renewed under their ids, new ones inserted).
// Still, every walk is exact: the backend's list, each record with the
// bytes the backend holds for it, in id order. Churned (records inserted
// and deleted during the walks: where each backend call looks, where the
// next page starts, in the windows ahead of it, and anywhere), every
// record that existed for the whole walk appears once, with those bytes,
// in id order; the backend that ignores _perPage is walked still only.
// At 10 a page the store serves most pages of a backend it can read
// ahead of: each page reaches another instance, which without the store
// costs about a call a page.
func TestSharedStoreDialects(t *testing.T) {
	const records = 1000
	for _, k := range storeBackends {
		for _, churn := range []bool{false, true} {
			if churn && k.fixed {
				// As in TestClampingBackendUnderChurn: at the edges of
				// fixed pages no answer holds a record and the next,
				// and a record can slip by under churn, with or without
				// the store or read-ahead (docs/backends.md, Verify).
				continue
			}
			name := k.name + "/still"
			if churn {
				name = k.name + "/churned"
			}
			t.Run(name, func(t *testing.T) {
				store := redistest.Start(t)
				s, m := sharedStoreWalksOf(t, k, records, churn, store)
				for _, plan := range storeWalkPlans {
					w := s.start(plan.name, plan.sizes[0])
					switchAt := (records/plan.sizes[0] + 2) / 3
					for !w.done {
						if len(plan.sizes) > 1 && w.pages == switchAt {
							w.perPage = plan.sizes[1]
						}
						s.step(w)
						if churn {
							// Anywhere in the list, a few records a page
							// (a per-second rate would churn more of the
							// list the slower the machine walks it).
							s.b.Churn(3)
						}
						if m != nil && !w.done {
							// Between pages too, where the next one
							// starts and inside the windows the store
							// keeps ahead of it.
							at, _ := slices.BinarySearch(s.b.IDs(s.list), w.ids[len(w.ids)-1])
							m.strike(s.list, at+1)
							m.strike(s.list, at+1+s.r.IntN(3*dialectLimit))
						}
					}
					s.finish(w)
					if !churn {
						// finish holds every record to the list when the
						// walk began; nothing else is in it either.
						assert.Equal(t, slices.Sorted(maps.Keys(w.existing)), w.ids, "%s: the walk is exact", w.name)
						assert.Zero(t, w.refused, "%s: no page was refused", w.name)
					}
					bound := k.maxCalls[0]
					if plan.sizes[0] > 10 {
						bound = k.maxCalls[1]
						if churn {
							bound *= 2
						}
					}
					t.Logf("%s: %.3f backend calls per page, %d pages refused and asked again", w.name, callsPerPage(w), w.refused)
					assert.LessOrEqual(t, callsPerPage(w), bound, "%s: backend calls per page", w.name)
				}
				if m != nil {
					m.mu.Lock()
					defer m.mu.Unlock()
					assert.NotEmpty(t, m.deleted["calls"], "the mischief happened")
				}
			})
		}
	}
}
