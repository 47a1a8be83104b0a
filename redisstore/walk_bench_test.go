package redisstore_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/helpdesk-gateway/gateway/internal/redistest"
	"github.com/helpdesk-gateway/gateway/translate"
)

// BenchmarkSharedWalkPage is what a page of a sequential walk costs an
// instance's CPU through three engines sharing a store, round robin:
// the engine, the store's round trips and the client library, not the
// backend (an in-memory list) nor redis-server.
//
//	go test ./redisstore -run '^$' -bench SharedWalkPage
func BenchmarkSharedWalkPage(b *testing.B) {
	srv := redistest.Start(b)
	for _, shared := range []bool{false, true} {
		for _, size := range []int{10, 100} {
			b.Run(fmt.Sprintf("shared=%v/perPage=%d", shared, size), func(b *testing.B) {
				l := newList(20_000, 3)
				engines := make([]*translate.Engine, 3)
				for i := range engines {
					engines[i] = &translate.Engine{Order: translate.Numeric, MaxPageSize: 1000, Offsets: true,
						Lists: translate.NewMemoryStore(translate.Numeric, time.Minute, 64<<20)}
					if shared {
						engines[i].Walks = newStore(b, srv, time.Minute, nil)
					}
				}
				req := translate.Request{List: fmt.Sprintf("l%v%d", shared, size), Size: size}
				b.ReportAllocs()
				page := 0
				cpu0 := cpuTime()
				for b.Loop() {
					pg, err := engines[page%3].Page(context.Background(), l, req)
					if err != nil {
						b.Fatal(err)
					}
					page++
					req.After = ""
					if pg.More {
						req.After = pg.IDs[len(pg.IDs)-1]
					}
				}
				b.ReportMetric(float64(cpuTime()-cpu0)/float64(page), "cpu-ns/page")
				calls, _ := l.counts()
				b.ReportMetric(float64(calls)/float64(page), "calls/page")
			})
		}
	}
}

// cpuTime is the CPU this process has used, user and system, in ns.
func cpuTime() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}
