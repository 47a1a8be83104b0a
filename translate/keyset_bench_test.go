package translate

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkKeysetWalk walks a 100,000-record list by cursor on a backend
// that takes the keyset condition, with read-ahead off and on, and
// reports the time, allocations and backend calls of one page.
func BenchmarkKeysetWalk(b *testing.B) {
	for _, readahead := range []bool{false, true} {
		for _, size := range []int{10, 100} {
			b.Run(fmt.Sprintf("readahead=%v/perPage=%d", readahead, size), func(b *testing.B) {
				l := newMemList(evenIDs(100000))
				e := keysetEngine(readahead)
				pages, cursor := 0, ""
				b.ReportAllocs()
				for b.Loop() {
					pg, err := e.Page(context.Background(), l, Request{List: "l", After: cursor, Size: size})
					if err != nil {
						b.Fatal(err)
					}
					pages++
					cursor = ""
					if pg.More {
						cursor = pg.IDs[len(pg.IDs)-1]
					}
				}
				calls, _ := l.counts()
				b.ReportMetric(float64(calls)/float64(pages), "calls/page")
			})
		}
	}
}
