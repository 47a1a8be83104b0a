package redisstore_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/helpdesk-gateway/gateway/redisstore/redistest"
	"github.com/helpdesk-gateway/gateway/translate"
)

// BenchmarkSharedWalkPage is what a page of a sequential walk costs an
// instance's CPU through three engines sharing a store, round robin:
// the engine, the store's round trips and the client library, not the
// backend (an in-memory list of records of about 350 bytes); redis-server's own CPU a page apart
// (redis-cpu-ns/page, from its INFO).
//
//	go test ./redisstore -run '^$' -bench SharedWalkPage
func BenchmarkSharedWalkPage(b *testing.B) {
	srv := redistest.Start(b)
	for _, shared := range []bool{false, true} {
		for _, size := range []int{10, 100} {
			b.Run(fmt.Sprintf("shared=%v/perPage=%d", shared, size), func(b *testing.B) {
				l := newList(20_000, 3)
				l.pad = recordPad
				engines := make([]*translate.Engine, 3)
				for i := range engines {
					engines[i] = &translate.Engine{Order: cursor.Numeric, MaxPageSize: 1000, Offsets: true,
						Lists: translate.NewMemoryStore(cursor.Numeric, time.Minute, 64<<20)}
					if shared {
						engines[i].Walks = newStore(b, srv, time.Minute, nil)
					}
				}
				req := translate.Request{List: fmt.Sprintf("l%v%d", shared, size), Size: size}
				b.ReportAllocs()
				page := 0
				cpu0, redis0 := cpuTime(), redisCPU(b, srv)
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
				b.ReportMetric(float64(redisCPU(b, srv)-redis0)/float64(page), "redis-cpu-ns/page")
				calls, _ := l.counts()
				b.ReportMetric(float64(calls)/float64(page), "calls/page")
			})
		}
	}
}

// recordPad makes the benchmark's records about 350 bytes, as the
// reference backend's calls are: bytes that cross the store cost by
// their number.
var recordPad = `,"text":"` + strings.Repeat("x", 320) + `"`

// redisCPU is the CPU srv has used, user and system, in ns.
func redisCPU(b *testing.B, srv *redistest.Server) int64 {
	info, err := redistest.Command(srv.Addr(), "INFO", "cpu")
	if err != nil {
		b.Fatal(err)
	}
	var total float64
	for _, line := range strings.Split(info, "\n") {
		name, v, _ := strings.Cut(strings.TrimSpace(line), ":")
		if name == "used_cpu_user" || name == "used_cpu_sys" {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				b.Fatal(err)
			}
			total += f
		}
	}
	return int64(total * 1e9)
}

// cpuTime is the CPU this process has used, user and system, in ns.
func cpuTime() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}
