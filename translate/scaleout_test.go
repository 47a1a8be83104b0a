package translate

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Scale-out: several gateway instances, each with its own engine and
// position index, behind a load balancer in front of one backend. Under
// round robin each page of a walk lands on an instance that has not seen
// its cursor, so what the instance knows of the list from the pages it
// served before (density, gaps, extent) must place the cursor in one call.

// sharedList is one backend for every instance: sorted ids of either
// order, every call counted.
type sharedList struct {
	mu             sync.Mutex
	ids            []string
	calls, fetched int
}

func (l *sharedList) Fetch(_ context.Context, w Window) (Batch, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls++
	from := min(w.Start, len(l.ids))
	to := min(from+w.Size, len(l.ids))
	l.fetched += to - from
	return Batch{IDs: l.ids[from:to:to]}, nil
}

func (l *sharedList) counts() (calls, fetched int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls, l.fetched
}

// scaleData is one kind of id list for the scale-out tests.
type scaleData struct {
	name  string
	order cursor.Order
	ids   []string
}

// scaleLists returns n ids of each kind: numeric ids evenly spread, with
// random gaps of 1 to 20 (as the reference backend makes them), with
// exponentially distributed gaps (a Poisson stream of inserts), growing
// geometrically, and lexical ids: random strings of letters and digits,
// prefixed zero-padded numbers with random gaps, random UUIDs (hex) and
// ULID-like strings (Crockford's base32, 32 of the 36 letters and digits).
func scaleLists(n int) []scaleData {
	r := rand.New(rand.NewPCG(12, uint64(n)))
	numeric := func(name string, gap func(i int) int64) scaleData {
		ids := make([]string, n)
		var id int64
		for i := range ids {
			id += max(1, gap(i))
			ids[i] = strconv.FormatInt(id, 10)
		}
		return scaleData{name, cursor.Numeric, ids}
	}
	const alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
	seen := make(map[string]bool, n)
	random := make([]string, 0, n)
	for len(random) < n {
		b := make([]byte, 6+r.IntN(11))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		if !seen[string(b)] {
			seen[string(b)] = true
			random = append(random, string(b))
		}
	}
	slices.Sort(random)
	// lexicalIDs returns n distinct random ids that gen makes, sorted.
	lexicalIDs := func(gen func() string) []string {
		seen := make(map[string]bool, n)
		ids := make([]string, 0, n)
		for len(ids) < n {
			if id := gen(); !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
		slices.Sort(ids)
		return ids
	}
	const hex, crockford = "0123456789abcdef", "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	uuids := lexicalIDs(func() string {
		b := make([]byte, 36)
		for i := range b {
			b[i] = hex[r.IntN(len(hex))]
		}
		b[8], b[13], b[18], b[23] = '-', '-', '-', '-'
		return string(b)
	})
	ulids := lexicalIDs(func() string {
		b := make([]byte, 26)
		for i := range b {
			b[i] = crockford[r.IntN(len(crockford))]
		}
		return string(b)
	})
	prefixed := make([]string, n)
	var k int64
	for i := range prefixed {
		k += 1 + r.Int64N(20)
		prefixed[i] = fmt.Sprintf("TK-%08d", k)
	}
	return []scaleData{
		numeric("even", func(int) int64 { return 10 }),
		numeric("random gaps", func(int) int64 { return 1 + r.Int64N(20) }),
		numeric("exponential gaps", func(int) int64 { return int64(math.Round(r.ExpFloat64() * 50)) }),
		numeric("geometric", func(i int) int64 { // gaps from 1 to 120, growing by 0.03% a record
			return geometricID(i+1) - geometricID(i)
		}),
		{"lexical random", cursor.Lexical, random},
		{"lexical prefixed", cursor.Lexical, prefixed},
		{"lexical uuid", cursor.Lexical, uuids},
		{"lexical ulid", cursor.Lexical, ulids},
	}
}

// geometricID is the i-th id of a list whose ids grow exponentially.
func geometricID(i int) int64 { return int64(i) + int64(math.Round(1000*math.Pow(1.0003, float64(i)))) }

// walkCost is what one cursor walk cost the backend.
type walkCost struct {
	pages, calls, fetched, served int
}

func (c walkCost) callsPerPage() float64 { return float64(c.calls) / float64(c.pages) }
func (c walkCost) fetchedPerServed() float64 {
	return float64(c.fetched) / float64(max(c.served, 1))
}

// balancer sends each page to one of its engines: round robin, or all to
// the one a sticky policy picks for the client.
type balancer struct {
	engines []*Engine
	sticky  bool
	next    int
}

func newBalancer(order cursor.Order, instances int, sticky bool) *balancer {
	b := &balancer{sticky: sticky}
	for range instances {
		b.engines = append(b.engines, &Engine{Order: order, MaxPageSize: 1000, Index: newIndex(order, 100_000)})
	}
	return b
}

// withReadahead gives each instance read-ahead windows of its own, as the
// gateway's defaults do.
func (b *balancer) withReadahead() *balancer {
	for _, e := range b.engines {
		e.Lists = NewMemoryStore(e.Order, 2*time.Second, 64<<20)
	}
	return b
}

func (b *balancer) pick() *Engine {
	if b.sticky {
		return b.engines[0]
	}
	e := b.engines[b.next%len(b.engines)]
	b.next++
	return e
}

// balancedWalk walks the whole list by cursor through b and checks that
// the walk is exact: every id once, in order, every page full but the last.
func balancedWalk(t require.TestingT, b *balancer, l *sharedList, size int) walkCost {
	calls0, fetched0 := l.counts()
	var c walkCost
	cursor, served := "", 0
	for {
		c.pages++
		pg, err := b.pick().Page(context.Background(), l, Request{List: "l", After: cursor, Size: size})
		require.NoError(t, err)
		require.Equal(t, l.ids[served:min(served+len(pg.IDs), len(l.ids))], pg.IDs, "page %d after %q", c.pages, cursor)
		served += len(pg.IDs)
		if !pg.More {
			break
		}
		require.Len(t, pg.IDs, size, "only the last page may be short")
		cursor = pg.IDs[len(pg.IDs)-1]
	}
	require.Equal(t, len(l.ids), served, "the walk served every record")
	calls, fetched := l.counts()
	c.calls, c.fetched, c.served = calls-calls0, fetched-fetched0, served
	return c
}

// TestRoundRobinFirstWalk: three fresh instances behind round robin, a
// first walk of 20,000 records: at most 1.10 backend calls per page for
// numeric ids and 1.25 for lexical ones, at most 2.5 records fetched per
// record served at perPage 100 and 4 at perPage 10, every walk exact.
func TestRoundRobinFirstWalk(t *testing.T) {
	const n, instances = 20_000, 3
	for _, data := range scaleLists(n) {
		for _, size := range []int{10, 100} {
			t.Run(fmt.Sprintf("%s/perPage=%d", data.name, size), func(t *testing.T) {
				l := &sharedList{ids: data.ids}
				c := balancedWalk(t, newBalancer(data.order, instances, false), l, size)
				t.Logf("%d pages: %.3f calls/page, %.3f fetched/served", c.pages, c.callsPerPage(), c.fetchedPerServed())
				maxCalls := 1.10
				if data.order == cursor.Lexical {
					maxCalls = 1.25
				}
				maxFetched := 2.5
				if size < 100 {
					maxFetched = 4
				}
				assert.LessOrEqual(t, c.callsPerPage(), maxCalls, "backend calls per page")
				assert.LessOrEqual(t, c.fetchedPerServed(), maxFetched, "records fetched per record served")
			})
		}
	}
}

// TestColdInstancesStayCheap: the same walk through 2 and 5 instances, and
// the second walk through the same 3 (their indexes warm from the first),
// keep the first walk's targets, as does a sticky policy.
func TestColdInstancesStayCheap(t *testing.T) {
	const n = 20_000
	for _, data := range scaleLists(n) {
		for _, size := range []int{10, 100} {
			t.Run(fmt.Sprintf("%s/perPage=%d", data.name, size), func(t *testing.T) {
				maxCalls := map[cursor.Order]float64{cursor.Numeric: 1.10, cursor.Lexical: 1.25}[data.order]
				l := &sharedList{ids: data.ids}
				for _, instances := range []int{2, 5} {
					c := balancedWalk(t, newBalancer(data.order, instances, false), l, size)
					assert.LessOrEqual(t, c.callsPerPage(), maxCalls, "%d instances, first walk", instances)
				}
				b := newBalancer(data.order, 3, false)
				balancedWalk(t, b, l, size)
				c := balancedWalk(t, b, l, size)
				assert.LessOrEqual(t, c.callsPerPage(), maxCalls, "second walk")
				c = balancedWalk(t, newBalancer(data.order, 3, true), l, size)
				assert.Equal(t, 1.0, c.callsPerPage(), "sticky")
			})
		}
	}
}

// BenchmarkScaleOut reports what a cursor walk of 20,000 records costs the
// backend through several instances, each with its own index: backend
// calls per page and records fetched per record served, for round robin
// and for a sticky policy (every page of a client to one instance), on a
// first walk (every instance fresh) and on a second walk through the same
// instances. Ids: numeric with random gaps of 1 to 20, as the reference
// backend makes them, and random lexical strings.
//
//	go test ./translate -run XXX -bench ScaleOut -benchtime 1x
func BenchmarkScaleOut(b *testing.B) {
	const n = 20_000
	lists := scaleLists(n)
	for _, data := range []scaleData{lists[1], lists[4]} {
		kind := map[cursor.Order]string{cursor.Numeric: "numeric", cursor.Lexical: "lexical"}[data.order]
		for _, policy := range []string{"round_robin", "sticky"} {
			for _, instances := range []int{1, 2, 3, 5} {
				if policy == "sticky" && instances == 1 {
					continue
				}
				for _, size := range []int{10, 100} {
					for _, run := range []struct {
						second, readahead bool
					}{{false, false}, {true, false}, {false, true}} {
						walkName := map[bool]string{false: "first", true: "second"}[run.second]
						if run.readahead {
							walkName = "readahead"
						}
						name := fmt.Sprintf("ids=%s/lb=%s/instances=%d/perPage=%d/walk=%s", kind, policy, instances, size, walkName)
						second := run.second
						b.Run(name, func(b *testing.B) {
							var c walkCost
							for b.Loop() {
								l := &sharedList{ids: data.ids}
								bal := newBalancer(data.order, instances, policy == "sticky")
								if run.readahead {
									bal.withReadahead()
								}
								if second {
									balancedWalk(b, bal, l, size)
								}
								c = balancedWalk(b, bal, l, size)
							}
							b.ReportMetric(c.callsPerPage(), "calls/page")
							b.ReportMetric(c.fetchedPerServed(), "fetched/served")
						})
					}
				}
			}
		}
	}
}

// TestRoundRobinWalkUnderChurn: a walk whose pages go round robin over
// instances whose indexes each saw the list at another time (inserts and
// deletes between every two backend calls, bursts before the cursor that
// shift every offset) keeps the consistency guarantee: no duplicate,
// increasing ids, every record that existed throughout served.
func TestRoundRobinWalkUnderChurn(t *testing.T) {
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 12))
		ids := randomIDs(r, 500+r.IntN(3000), 20)
		l := newMemList(ids)
		initial := slices.Clone(ids)
		deleted := map[int64]bool{}
		var served []int64
		l.before = func(l *memList) {
			for range r.IntN(3) {
				switch r.IntN(6) {
				case 0, 1:
					l.insert(1 + r.Int64N(l.ids[len(l.ids)-1]+50))
				case 2: // a burst before the cursor moves every offset after it
					for range 1 + r.IntN(30) {
						l.insert(1 + r.Int64N(max(1, served0(served))))
					}
				default:
					if len(l.ids) > 1 {
						id := l.ids[r.IntN(len(l.ids))]
						l.remove(id)
						deleted[id] = true
					}
				}
			}
		}
		engines := make([]*Engine, 2+r.IntN(4))
		maxPage := []int{25, 100, 1000}[r.IntN(3)]
		for i := range engines {
			engines[i] = newEngine(maxPage, 1000)
		}
		size := []int{10, 100}[r.IntN(2)]
		cursor := ""
		for page := 0; ; page++ {
			pg, err := engines[page%len(engines)].Page(context.Background(), l, Request{List: "l", After: cursor, Size: size})
			require.NoError(t, err, "seed %d", seed)
			served = append(served, parseIDs(pg.IDs)...)
			if !pg.More {
				break
			}
			require.Len(t, pg.IDs, size, "seed %d", seed)
			cursor = pg.IDs[len(pg.IDs)-1]
		}
		require.True(t, slices.IsSorted(served), "seed %d: ids not increasing", seed)
		require.Len(t, slices.Compact(slices.Clone(served)), len(served), "seed %d: duplicate", seed)
		for _, id := range initial {
			if !deleted[id] {
				_, found := slices.BinarySearch(served, id)
				require.True(t, found, "seed %d: record %d existed throughout but was skipped", seed, id)
			}
		}
	}
}
