package translate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/helpdesk-gateway/gateway/cursor"
)

// BenchmarkDeepCursor is the cost of one page after a cold cursor (a new
// engine and index: nothing known, not even where the list ends) at 1%,
// 50% and 99% of lists of 10^4, 10^5 and 10^6 records, numeric and
// lexical ids, against a naive scan that pages from page 1 until it has
// passed the cursor. Backend calls and records fetched are counted by the
// in-memory lists; the time is the engine's and the list's work, no
// network. perPage 10, backend pages up to 1000.
//
//	go test ./translate -run XXX -bench DeepCursor -benchtime 3x
func BenchmarkDeepCursor(b *testing.B) {
	const perPage, maxPage = 10, 1000
	for _, kind := range []string{"numeric", "lexical"} {
		for _, n := range []int{10_000, 100_000, 1_000_000} {
			l := deepList(kind, n)
			for _, pos := range []float64{0.01, 0.50, 0.99} {
				after := l.id(int(pos * float64(n)))
				name := fmt.Sprintf("ids=%s/N=%d/pos=%g%%", kind, n, pos*100)
				b.Run(name+"/cold", func(b *testing.B) {
					calls0, fetched0 := l.counts()
					for b.Loop() {
						e := &Engine{Order: l.order(), MaxPageSize: maxPage, Index: newIndex(l.order(), 100_000)}
						pg, err := e.Page(context.Background(), l, Request{List: "l", After: after, Size: perPage})
						if err != nil {
							b.Fatal(err)
						}
						if len(pg.IDs) != perPage || pg.IDs[0] != l.id(int(pos*float64(n))+1) {
							b.Fatalf("page %v after %q", pg.IDs, after)
						}
					}
					reportCounts(b, l, calls0, fetched0)
				})
				b.Run(name+"/naive", func(b *testing.B) {
					calls0, fetched0 := l.counts()
					for b.Loop() {
						if got := naiveScan(l, l.order(), after, perPage); len(got) != perPage || got[0] != l.id(int(pos*float64(n))+1) {
							b.Fatalf("page %v after %q", got, after)
						}
					}
					reportCounts(b, l, calls0, fetched0)
				})
			}
		}
	}
}

func reportCounts(b *testing.B, l deepFetcher, calls0, fetched0 int) {
	calls, fetched := l.counts()
	b.ReportMetric(float64(calls-calls0)/float64(b.N), "calls/page")
	b.ReportMetric(float64(fetched-fetched0)/float64(b.N), "fetched/page")
}

// naiveScan is what a client without cursors does: read pages of size
// from the first until it holds size records after the cursor.
func naiveScan(f Fetcher, order cursor.Order, after string, size int) []string {
	var out []string
	for page := 1; ; page++ {
		batch, err := f.Fetch(context.Background(), Window{Start: (page - 1) * size, Size: size})
		if err != nil {
			panic(err)
		}
		for _, id := range batch.IDs {
			if order.Compare(id, after) > 0 && len(out) < size {
				out = append(out, id)
			}
		}
		if len(out) == size || len(batch.IDs) < size {
			return out
		}
	}
}

// deepFetcher is a counted in-memory list of either kind of id.
type deepFetcher interface {
	Fetcher
	counts() (calls, fetched int)
	id(i int) string
	order() cursor.Order
}

// numericDeep is memList with ids ascending by random gaps of 1 to 20, as
// the reference backend makes them.
type numericDeep struct{ *memList }

func (l numericDeep) id(i int) string   { return fmt.Sprint(l.ids[i]) }
func (numericDeep) order() cursor.Order { return cursor.Numeric }

// lexicalList is memList's twin for lexical ids: random strings of 6 to
// 16 letters and digits, sorted byte-wise, which no interpolation can
// guess at.
type lexicalList struct {
	mu             sync.Mutex
	ids            []string
	calls, fetched int
}

func (l *lexicalList) Fetch(_ context.Context, w Window) (Batch, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls++
	from := min(w.Start, len(l.ids))
	to := min(from+w.Size, len(l.ids))
	l.fetched += to - from
	return Batch{IDs: l.ids[from:to:to]}, nil
}

func (l *lexicalList) counts() (int, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls, l.fetched
}

func (l *lexicalList) id(i int) string   { return l.ids[i] }
func (*lexicalList) order() cursor.Order { return cursor.Lexical }

var deepLists sync.Map // kind/n -> deepFetcher, made once per run

func deepList(kind string, n int) deepFetcher {
	key := fmt.Sprint(kind, n)
	if l, ok := deepLists.Load(key); ok {
		return l.(deepFetcher)
	}
	r := rand.New(rand.NewPCG(uint64(n), 6))
	var l deepFetcher
	if kind == "numeric" {
		l = numericDeep{newMemList(randomIDs(r, n, 20))}
	} else {
		const alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
		seen := make(map[string]struct{}, n)
		ids := make([]string, 0, n)
		for len(ids) < n {
			b := make([]byte, 6+r.IntN(11))
			for i := range b {
				b[i] = alphabet[r.IntN(len(alphabet))]
			}
			if _, dup := seen[string(b)]; !dup {
				seen[string(b)] = struct{}{}
				ids = append(ids, string(b))
			}
		}
		slices.Sort(ids)
		l = &lexicalList{ids: ids}
	}
	deepLists.Store(key, l)
	return l
}
