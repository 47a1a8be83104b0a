package translate

import (
	"context"
	"fmt"
	"testing"

	"github.com/helpdesk-gateway/gateway/cursor"
)

// BenchmarkCostByDepth reports what each page of a sequential walk of
// 5,000 records costs an OFFSET/LIMIT backend, by depth in the list: the
// records the backend steps through (OFFSET plus the records returned,
// what a SQL database reads), averaged over the pages whose first record
// lies in each tenth of the list. A call that reads ahead is spread over
// the pages it serves. Modes: a plain _page walk (no gateway), the
// gateway without read-ahead (readahead_ttl 0), with read-ahead (the
// default), and with a keyset backend (backend_keyset).
//
// docs/cost-by-depth.svg plots it:
//
//	go test ./translate -run '^$' -bench 'CostByDepth|ScaleOut' -benchtime 1x | go run ./bench/plots -out docs
func BenchmarkCostByDepth(b *testing.B) {
	const n, buckets = 5000, 10
	for _, size := range []int{10, 100} {
		for _, mode := range []string{"page_walk", "gateway", "readahead", "keyset"} {
			b.Run(fmt.Sprintf("perPage=%d/mode=%s", size, mode), func(b *testing.B) {
				var perPage [buckets]float64
				for b.Loop() {
					perPage = costByDepth(b, mode, n, size, buckets)
				}
				for i, v := range perPage {
					b.ReportMetric(v, fmt.Sprintf("stepped/page@%d", (i+1)*n/buckets))
				}
			})
		}
	}
}

// costByDepth walks n records by size in mode and returns the records
// stepped through per page, by tenth of the list.
func costByDepth(b *testing.B, mode string, n, size, buckets int) [10]float64 {
	var stepped, pages [10]float64
	bucket := func(first int) int { return min(first*buckets/n, buckets-1) }
	if mode == "page_walk" {
		for off := 0; off < n; off += size {
			stepped[bucket(off)] += float64(min(off+size, n))
			pages[bucket(off)]++
		}
	} else {
		l := newMemList(evenIDs(n))
		var e *Engine
		switch mode {
		case "gateway":
			e = &Engine{Order: cursor.Numeric, MaxPageSize: 1000, Index: newIndex(cursor.Numeric, 100_000)}
		case "readahead":
			e = readaheadEngine(false)
		case "keyset":
			e = keysetEngine(true)
		}
		cursor, first := "", 0
		owed := 0.0 // records stepped by the last call, not yet spread over its pages
		var owedPages []int
		settle := func() {
			for _, k := range owedPages {
				stepped[k] += owed / float64(len(owedPages))
			}
			owed, owedPages = 0, owedPages[:0]
		}
		for {
			before := l.stepped
			pg, err := e.Page(context.Background(), l, Request{List: "l", After: cursor, Size: size})
			if err != nil {
				b.Fatal(err)
			}
			if l.stepped > before { // a backend call: what it read serves this page and those cut from it after
				settle()
				owed = float64(l.stepped - before)
			}
			owedPages = append(owedPages, bucket(first))
			pages[bucket(first)]++
			first += len(pg.IDs)
			if !pg.More {
				break
			}
			cursor = pg.IDs[len(pg.IDs)-1]
		}
		settle()
	}
	var out [10]float64
	for i := range out {
		if pages[i] > 0 {
			out[i] = stepped[i] / pages[i]
		}
	}
	return out
}
