package redisstore_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/helpdesk-gateway/gateway/liststore"
	"github.com/helpdesk-gateway/gateway/liststore/liststoretest"
	"github.com/helpdesk-gateway/gateway/redisstore"
	"github.com/helpdesk-gateway/gateway/redisstore/redistest"
	"github.com/helpdesk-gateway/gateway/translate"
)

// list is a backend's list: ascending numeric ids, each record its id
// and a version, which churn changes.
type list struct {
	mu      sync.Mutex
	ids     []int
	version map[int]int
	calls   int
	fetched int
	pad     string // more members of each record, for records of a realistic size
}

func newList(n, gap int) *list {
	l := &list{version: map[int]int{}}
	for i := 1; i <= n; i++ {
		l.ids = append(l.ids, i*gap)
	}
	return l
}

func (l *list) Fetch(_ context.Context, w translate.Window) (translate.Batch, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls++
	var b translate.Batch
	for i := w.Start; i < w.Start+w.Size && i < len(l.ids); i++ {
		id := strconv.Itoa(l.ids[i])
		b.IDs = append(b.IDs, id)
		b.Records = append(b.Records, []byte(fmt.Sprintf(`{"id":%s,"v":%d%s}`, id, l.version[l.ids[i]], l.pad)))
	}
	l.fetched += len(b.IDs)
	return b, nil
}

// Detach implements translate.Detacher: the list reads ahead of its
// walkers, in goroutines, as a gateway's fetcher does.
func (l *list) Detach() (translate.Fetcher, context.Context, func(error), bool) {
	return l, context.Background(), func(error) {}, true
}

func (l *list) insert(id int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i, found := slices.BinarySearch(l.ids, id)
	if !found {
		l.ids = slices.Insert(l.ids, i, id)
	}
}

func (l *list) snapshot() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, len(l.ids))
	for i, id := range l.ids {
		out[i] = strconv.Itoa(id)
	}
	return out
}

func (l *list) counts() (calls, fetched int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls, l.fetched
}

const secret = "0123456789abcdef-test-secret"

// newStore returns a store on srv for one instance.
func newStore(t testing.TB, srv *redistest.Server, ttl time.Duration, mod func(*redisstore.Config)) *redisstore.Store {
	t.Helper()
	return newStoreAt(t, srv.URL(), ttl, mod)
}

// newStoreAt returns a store at url for one instance. Its calls get a
// deadline no loaded machine running -race outlasts (CI runs every
// package at once on 2 cores): the tests that count backend calls count
// the windows', and a call past its deadline, or a wait for another
// instance's read ahead past three quarters of it, costs a call by
// design. The faults these tests make fail calls at once; a test of the
// deadline itself sets its own (TestLostWriteMovesTheFence).
func newStoreAt(t testing.TB, url string, ttl time.Duration, mod func(*redisstore.Config)) *redisstore.Store {
	t.Helper()
	cfg := redisstore.Config{
		URL: url, Secret: []byte(secret), TTL: ttl, Timeout: 5 * time.Second, Order: cursor.Numeric,
		Encode: func(any) ([]byte, bool) { return []byte(`{"env":1}`), true },
		Decode: func(b []byte) any { return string(b) },
	}
	if mod != nil {
		mod(&cfg)
	}
	s, err := redisstore.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// instances are engines that share one store, each with its own memory
// for what it learns, as gateway instances behind one balancer.
func instances(t *testing.T, srv *redistest.Server, n int, ttl time.Duration) []*translate.Engine {
	return instancesAt(t, srv.URL(), n, ttl, nil)
}

// instancesAt are instances sharing the store at url, each configured
// by mod when it is not nil.
func instancesAt(t *testing.T, url string, n int, ttl time.Duration, mod func(*redisstore.Config)) []*translate.Engine {
	engines := make([]*translate.Engine, n)
	for i := range engines {
		lists := translate.NewMemoryStore(cursor.Numeric, ttl, 64<<20)
		engines[i] = &translate.Engine{
			Order: cursor.Numeric, MaxPageSize: 1000, Offsets: true,
			Index: lists.Index(100_000), // its samples in the lists' objects, as a gateway's
			Lists: lists,
			Walks: newStoreAt(t, url, ttl, mod),
		}
		t.Cleanup(engines[i].WaitAhead) // before its store closes
	}
	return engines
}

// walk walks the list by cursor, page i on engine i mod n, calling
// between before each page after the first; it returns the ids served.
func walk(t *testing.T, engines []*translate.Engine, l *list, name string, size int, between func(page int)) []string {
	t.Helper()
	var ids []string
	req := translate.Request{List: name, Size: size}
	for page := 0; ; page++ {
		if page > 0 && between != nil {
			between(page)
		}
		pg, err := engines[page%len(engines)].Page(context.Background(), l, req)
		require.NoError(t, err)
		ids = append(ids, pg.IDs...)
		if !pg.More {
			return ids
		}
		req.After = pg.IDs[len(pg.IDs)-1]
	}
}

// TestWalkAcrossInstances: three engines sharing a store, pages round
// robin, walk a list exactly and read it ahead as one instance does:
// well under one backend call a page, each record fetched about once.
func TestWalkAcrossInstances(t *testing.T) {
	srv := redistest.Start(t)
	for _, size := range []int{10, 100} {
		t.Run(fmt.Sprintf("perPage=%d", size), func(t *testing.T) {
			l := newList(20_000, 3)
			// A TTL no walker slowed by a loaded machine outlasts: at
			// 10s, one slower than about 200 records a second is no
			// longer read ahead of (liststore.Walk.Ahead).
			engines := instances(t, srv, 3, time.Minute)
			ids := walk(t, engines, l, fmt.Sprintf("calls|%d", size), size, nil)
			assert.Equal(t, l.snapshot(), ids, "the walk is exact")
			calls, fetched := l.counts()
			pages := (len(ids) + size - 1) / size
			perPage := float64(calls) / float64(pages)
			t.Logf("%d pages, %d calls (%.3f a page), %.3f fetched per served", pages, calls, perPage, float64(fetched)/float64(len(ids)))
			assert.LessOrEqual(t, perPage, map[int]float64{10: 0.05, 100: 0.25}[size], "backend calls per page")
			assert.LessOrEqual(t, float64(fetched)/float64(len(ids)), 1.10, "records fetched per record served")

			// The control: the same walk with each instance on its own.
			l2 := newList(20_000, 3)
			alone := make([]*translate.Engine, 3)
			for i := range alone {
				alone[i] = &translate.Engine{Order: cursor.Numeric, MaxPageSize: 1000, Offsets: true,
					Lists: translate.NewMemoryStore(cursor.Numeric, 10*time.Second, 64<<20)}
			}
			walk(t, alone, l2, "calls", size, nil)
			calls2, _ := l2.counts()
			assert.Greater(t, float64(calls2)/float64(pages), 0.9, "without the store, round robin costs a call a page")
		})
	}
}

// TestBackToBackWalksUnderChurn: one caller walks a list again and
// again through three instances, round robin, with records inserted
// ahead of its cursor as it goes: every walk serves every record that
// existed when it began, although windows of the walks before it are
// still live and may hold the same cursors. Each instance alone, with
// its own store, loses none either: it has not seen walks stay on it
// (liststore/stay.go), so its windows do not serve. The control: the
// same instances trusting their windows, as before that proof, lose
// records: an instance continues a cursor from its own chain entry of
// an earlier walk, unaware that another instance served the page that
// ended there since, and cuts the page from a window read before the
// walk began (docs/operating.md, "Behind a balancer").
func TestBackToBackWalksUnderChurn(t *testing.T) {
	srv := redistest.Start(t)
	for _, size := range []int{7, 100} {
		t.Run(fmt.Sprintf("perPage=%d", size), func(t *testing.T) {
			shared := instances(t, srv, 3, 30*time.Second)
			alone := func() []*translate.Engine {
				es := make([]*translate.Engine, 3)
				for i := range es {
					es[i] = &translate.Engine{Order: cursor.Numeric, MaxPageSize: 1000, Offsets: true,
						Lists: translate.NewMemoryStore(cursor.Numeric, 30*time.Second, 64<<20)}
				}
				return es
			}
			for _, tc := range []struct {
				name    string
				engines []*translate.Engine
				control bool
			}{{"the store", shared, false}, {"each alone", alone(), false}, {"each alone, trusting its windows", alone(), true}} {
				if tc.control && size != 7 {
					continue // the control loses records at 7 a page; at 100 its windows happen not to serve
				}
				l := newList(3100, 10) // not a multiple of three pages
				lost := 0
				for round := range 8 {
					before := l.snapshot()
					var trust func()
					if tc.control {
						// Trusting their windows before every page, whatever
						// they saw: read-ahead before the proof.
						trust = func() {
							for _, e := range tc.engines {
								liststoretest.TrustWalks(e.Lists)
							}
						}
					}
					ids := walkRound(t, tc.engines, l, fmt.Sprintf("tickets|%d", size), size, round, trust)
					require.True(t, slices.IsSortedFunc(ids, cursor.Numeric.Compare), "ascending, no repeat")
					for _, id := range before {
						if _, ok := slices.BinarySearchFunc(ids, id, cursor.Numeric.Compare); !ok {
							lost++
						}
					}
				}
				t.Logf("%s: %d records lost over 8 walks", tc.name, lost)
				if tc.control {
					assert.Positive(t, lost, "the control: trusting their windows, these walks read the past (if this holds no more, the test lost its teeth)")
				} else {
					assert.Zero(t, lost, "%s: records that existed for the whole walk and were not served", tc.name)
				}
			}
		})
	}
}

// walkRound is one walk of TestBackToBackWalksUnderChurn: page i on
// engine (i+round) mod 3, a record inserted ahead of the cursor before
// each page, and before, when set.
func walkRound(t *testing.T, engines []*translate.Engine, l *list, name string, size, round int, before func()) []string {
	var ids []string
	req := translate.Request{List: name, Size: size}
	for page := 0; ; page++ {
		if req.After != "" {
			n, _ := strconv.Atoi(req.After)
			l.insert(n + 3*size + 3 + round)
		}
		if before != nil {
			before()
		}
		pg, err := engines[(page+round)%len(engines)].Page(context.Background(), l, req)
		require.NoError(t, err)
		ids = append(ids, pg.IDs...)
		if !pg.More {
			return ids
		}
		req.After = pg.IDs[len(pg.IDs)-1]
	}
}

// TestCallersApart: one caller's windows never serve another's pages,
// even for a cursor inside them, and no key names the identity.
func TestCallersApart(t *testing.T) {
	srv := redistest.Start(t)
	l := newList(2000, 1)
	engines := instances(t, srv, 3, 30*time.Second)
	const a, b = "calls|apikey=alice-secret-key", "calls|apikey=bob"
	walk(t, engines, l, a, 10, nil)
	// Alice's walk kept windows with chain entries at every page's end.
	s := engines[0].Walks
	c := s.Cut(context.Background(), a, liststore.CutQuery{After: "500", Size: 10, Now: time.Now()})
	require.True(t, c.Continues, "alice's walk is in the store")
	c = s.Cut(context.Background(), b, liststore.CutQuery{After: "500", Size: 10, Now: time.Now()})
	assert.False(t, c.Continues, "bob continues no walk of alice's")
	assert.Nil(t, c.Window)

	raw := scanKeys(t, srv)
	require.NotEmpty(t, raw)
	for _, k := range raw {
		assert.True(t, strings.HasPrefix(k, "hdgw:{"), k)
		assert.NotContains(t, k, "alice", "a key names no credential")
		assert.NotContains(t, k, "apikey")
	}
}

// scanKeys returns every key in the store.
func scanKeys(t *testing.T, srv *redistest.Server) []string {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer c.Close()
	keys, err := c.Keys(context.Background(), "*").Result()
	require.NoError(t, err)
	return keys
}
