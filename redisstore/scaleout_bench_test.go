package redisstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/helpdesk-gateway/gateway/redisstore"
	"github.com/helpdesk-gateway/gateway/redisstore/redistest"
	"github.com/helpdesk-gateway/gateway/translate"
)

// The shared line of translate's BenchmarkScaleOut: several engines, each
// with its own index and learned state, each with a Store of its own on
// one redis-server (same URL and secret, as instances of one deployment
// have), a walk's pages sent to them round robin. translate's test
// helpers are not importable, so the list and the balancer are rebuilt
// here, small, on ids of the same kind.

// countedList is the backend every engine reads: sorted ids, every call
// and record counted.
type countedList struct {
	mu             sync.Mutex
	ids            []string
	calls, fetched int
}

func (l *countedList) Fetch(_ context.Context, w translate.Window) (translate.Batch, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls++
	from := min(w.Start, len(l.ids))
	to := min(from+w.Size, len(l.ids))
	l.fetched += to - from
	return translate.Batch{IDs: l.ids[from:to:to]}, nil
}

// randomGapIDs are ids of the kind of translate's scale-out list "random
// gaps" (numeric, ascending by 1 to 20, as the reference backend makes
// them), drawn from a generator of their own.
func randomGapIDs(n int) []string {
	r := rand.New(rand.NewPCG(12, uint64(n)))
	ids := make([]string, n)
	var id int64
	for i := range ids {
		id += 1 + r.Int64N(20)
		ids[i] = strconv.FormatInt(id, 10)
	}
	return ids
}

// sharedEngines returns n engines made as n gateway instances sharing srv
// make theirs: each with its own index and learned state, its walks and
// windows in a Store of its own on srv, with read-ahead's TTL as
// translate's scale-out bench gives its instances.
func sharedEngines(b testing.TB, srv *redistest.Server, n int, secret []byte) []*translate.Engine {
	const ttl = 2 * time.Second
	engines := make([]*translate.Engine, n)
	for i := range engines {
		store, err := redisstore.New(redisstore.Config{
			URL: srv.URL(), Secret: secret, TTL: ttl, Order: cursor.Numeric,
			// The fetcher keeps no envelope: a window is its ids, and
			// what it is composed from anything but nil (which serves
			// no page).
			Encode: func(any) ([]byte, bool) { return []byte{}, true },
			Decode: func([]byte) any { return "ids" },
		})
		require.NoError(b, err)
		b.Cleanup(func() { _ = store.Close() })
		engines[i] = &translate.Engine{Order: cursor.Numeric, MaxPageSize: 1000,
			Index: translate.NewMemoryStore(cursor.Numeric, 0, 8<<20).Index(100_000), // an index in a store of its own
			Lists: translate.NewMemoryStore(cursor.Numeric, ttl, 64<<20), Walks: store}
	}
	return engines
}

// roundRobinWalk walks the whole list by cursor, page k on engine k mod
// n, and checks that the walk is exact: every id once, in order, every
// page full but the last. It returns the pages, calls and records
// fetched.
func roundRobinWalk(b testing.TB, engines []*translate.Engine, l *countedList, size int) (pages, calls, fetched int) {
	cursor, served := "", 0
	for ; ; pages++ {
		pg, err := engines[pages%len(engines)].Page(context.Background(), l, translate.Request{List: "l", After: cursor, Size: size})
		require.NoError(b, err)
		require.Equal(b, l.ids[served:min(served+len(pg.IDs), len(l.ids))], pg.IDs, "page %d after %q", pages+1, cursor)
		served += len(pg.IDs)
		if !pg.More {
			pages++
			break
		}
		require.Len(b, pg.IDs, size, "only the last page may be short")
		cursor = pg.IDs[len(pg.IDs)-1]
	}
	require.Equal(b, len(l.ids), served, "the walk served every record")
	return pages, l.calls, l.fetched
}

// BenchmarkScaleOut reports what a first cursor walk of 20,000 records
// costs the backend through 1, 2, 3 and 5 instances behind round robin
// that share read-ahead through one redis-server: backend calls per page
// and records fetched per record served, named as translate's
// BenchmarkScaleOut names its lines (walk=shared), so that bench/plots
// draws it beside them:
//
//	go test ./redisstore -run '^$' -bench ScaleOut -benchtime 1x
func BenchmarkScaleOut(b *testing.B) {
	const n = 20_000
	srv := redistest.Start(b)
	ids := randomGapIDs(n)
	secret := []byte("a bench's secret, 32 bytes long.")
	for _, instances := range []int{1, 2, 3, 5} {
		for _, size := range []int{10, 100} {
			name := fmt.Sprintf("ids=numeric/lb=round_robin/instances=%d/perPage=%d/walk=shared", instances, size)
			b.Run(name, func(b *testing.B) {
				var pages, calls, fetched int
				for b.Loop() {
					srv.Flush()
					l := &countedList{ids: ids}
					pages, calls, fetched = roundRobinWalk(b, sharedEngines(b, srv, instances, secret), l, size)
				}
				b.ReportMetric(float64(calls)/float64(pages), "calls/page")
				b.ReportMetric(float64(fetched)/float64(n), "fetched/served")
			})
		}
	}
}
