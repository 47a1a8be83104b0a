package translate

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkOffsetWalk is BenchmarkSequentialWalk on a backend asked by
// offset and limit, beside the same walk over whole pages in the same
// run: backend calls per page and records fetched per record served.
func BenchmarkOffsetWalk(b *testing.B) {
	for _, size := range []int{10, 100} {
		for _, offsets := range []bool{true, false} {
			b.Run(fmt.Sprintf("perPage=%d/offsets=%v", size, offsets), func(b *testing.B) {
				l := newMemList(evenIDs(100000))
				l.offsets = offsets
				e := newEngine(1000, 100000)
				e.Offsets = offsets
				pages, served := 0, 0
				cursor := ""
				b.ReportAllocs()
				for b.Loop() {
					pg, err := e.Page(context.Background(), l, Request{List: "l", After: cursor, Size: size})
					if err != nil {
						b.Fatal(err)
					}
					pages++
					served += len(pg.IDs)
					cursor = ""
					if pg.More {
						cursor = pg.IDs[len(pg.IDs)-1]
					}
				}
				calls, fetched := l.counts()
				b.ReportMetric(float64(calls)/float64(pages), "calls/page")
				b.ReportMetric(float64(fetched)/float64(served), "fetched/served")
			})
		}
	}
}
