package translate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Pages that start from a read-ahead window's head (MemoryStore.Cut) and
// end in the backend's answer: what they cost at the backend's limit, and
// that they keep the guarantee under churn and borrow no memory.

// TestReadaheadAtTheBackendLimit: a walk whose pages a window cannot hold
// twice (a page at or near the backend's limit, or larger) still reads
// ahead: the call that completes a page reads on, its answer is kept, and
// the next page starts from what it holds past the page (a head) and asks
// the backend for the rest in one call that reads on again. Without that,
// every page cost two calls, the second stepping through the whole offset
// again: twice a _page walk's work for the backend.
func TestReadaheadAtTheBackendLimit(t *testing.T) {
	const n = 20_000
	for _, tc := range []struct {
		size    int
		calls   float64 // per page, at most
		stepped float64 // of a _page walk's, at most
		heads   bool    // windows end inside pages: (page+1) does not divide them
	}{
		{500, 0.6, 0.6, true},
		{999, 1.05, 1.05, false}, // one call a page of 999 and the next record: no head needed
		{1000, 1.15, 1.15, true},
		{1500, 1.6, 1.5, true},
	} {
		for _, dialect := range []string{"pages", "offsets", "keyset"} {
			t.Run(fmt.Sprintf("%s by %d", dialect, tc.size), func(t *testing.T) {
				l := newMemList(evenIDs(n))
				l.offsets = dialect == "offsets"
				e := readaheadEngine(l.offsets)
				if dialect == "keyset" {
					e = keysetEngine(true)
				}
				ids, c := costlyWalk(t, e, l, tc.size)
				require.Equal(t, evenIDs(n), ids)
				if dialect == "keyset" {
					// The offset reads of issue 31's checks (the list
					// identity's first keyset page, the walk's end), besides
					// the first page, are counted apart (TestKeysetTargets).
					checks := l.offsetCalls - 1
					perCheck := (tc.size+1+e.MaxPageSize-1)/e.MaxPageSize + 1 // the page's calls, and a search's
					assert.LessOrEqual(t, checks, 2*perCheck, "offset reads that check keyset answers")
					c.calls -= checks
					c.fetched -= l.offsetFetched
					c.stepped -= l.offsetStepped
				}
				stepped := float64(c.stepped) / float64(pageWalkStepped(n, tc.size))
				t.Logf("%.3f calls per page, %.3f records fetched per record served, %.3f of a _page walk's records stepped through",
					c.callsPerPage(), c.fetchedPerServed(), stepped)
				assert.LessOrEqual(t, c.callsPerPage(), tc.calls, "calls per page")
				if tc.heads {
					assert.Greater(t, c.headed, c.pages/3, "pages started from a window's head")
				}
				assert.LessOrEqual(t, c.fetchedPerServed(), 1.05, "records fetched per record served")
				if dialect != "keyset" {
					assert.LessOrEqual(t, stepped, tc.stepped, "records stepped through, of a _page walk's")
				} else {
					assert.LessOrEqual(t, c.stepped, c.served*11/10, "records stepped through, of those served")
				}
			})
		}
	}
}

// TestReadaheadHeadsUnderChurn: pages that start from a window's head and
// end in the backend's answer keep the guarantee while records come and
// go before every call, in every dialect, at page sizes near the
// backend's limit and past it.
func TestReadaheadHeadsUnderChurn(t *testing.T) {
	for _, size := range []int{60, 100, 150} {
		for _, dialect := range []string{"pages", "offsets", "keyset"} {
			t.Run(fmt.Sprintf("%s by %d", dialect, size), func(t *testing.T) {
				l := newMemList(evenIDs(3000))
				l.offsets = dialect == "offsets"
				e := readaheadEngine(l.offsets)
				if dialect == "keyset" {
					e = keysetEngine(true)
				}
				e.MaxPageSize = 100
				c := churningWalkBy(t, uint64(size), e, l, 3, size)
				assert.Positive(t, c.headed, "pages started from a window's head")
			})
		}
	}
}

// scribblingList is a memList whose answers' ids live in buffers of its
// own, as a pooling fetcher's do: once a page is done, every answer not
// kept as a window is overwritten (with other digits, so that the ids
// still parse), and anything the engine held past the page without
// copying it (a window's floor, an index sample) reads something else.
type scribblingList struct {
	*memList
	bufs [][]byte // the answers of the page in the making, by call
	kept map[int]bool
}

func (l *scribblingList) Fetch(ctx context.Context, w Window) (Batch, error) {
	b, err := l.memList.Fetch(ctx, w)
	n := 0
	for _, id := range b.IDs {
		n += len(id)
	}
	buf := make([]byte, 0, n) // never grown: the ids point into it
	for i, id := range b.IDs {
		at := len(buf)
		buf = append(buf, id...)
		b.IDs[i] = unsafe.String(&buf[at], len(id))
	}
	l.bufs = append(l.bufs, buf)
	return b, err
}

func (l *scribblingList) Keep(call int) (any, int) {
	l.kept[call] = true
	return nil, 0
}

// pageDone reuses the memory of every answer of the page not kept.
func (l *scribblingList) pageDone() {
	for call, buf := range l.bufs {
		if !l.kept[call] {
			for i := range buf {
				buf[i] = '9' - (buf[i]-'0')%10
			}
		}
	}
	l.bufs, l.kept = nil, map[int]bool{}
}

// TestReadaheadKeepsNoBorrowedMemory: three walkers of one caller, in
// turns, under churn, in every dialect, at page sizes that read ahead,
// stitch calls and start pages from heads, against a fetcher that reuses
// every answer's memory that was not kept once each page is done. Every
// walk keeps the guarantee: the engine held nothing of a reused answer.
func TestReadaheadKeepsNoBorrowedMemory(t *testing.T) {
	for _, dialect := range []string{"pages", "offsets", "keyset"} {
		t.Run(dialect, func(t *testing.T) {
			ids := evenIDs(3000)
			l := &scribblingList{memList: newMemList(ids), kept: map[int]bool{}}
			l.clampAt = 100
			l.offsets = dialect == "offsets"
			e := readaheadEngine(l.offsets)
			if dialect == "keyset" {
				e = keysetEngine(true)
			}
			r := rand.New(rand.NewPCG(7, 7))
			deleted := map[int64]bool{}
			l.before = func(l *memList) {
				if r.IntN(2) == 0 {
					l.insert(5 + 10*r.Int64N(3000))
				}
				victim := l.ids[r.IntN(len(l.ids))]
				l.remove(victim)
				deleted[victim] = true
			}
			sizes := []int{9, 100, 130}
			cursors, walks := make([]string, 3), make([][]int64, 3)
			for active := 3; active > 0; {
				active = 0
				for i, size := range sizes {
					if cursors[i] == "-" {
						continue
					}
					active++
					pg, err := e.Page(context.Background(), l, Request{List: "caller", After: cursors[i], Size: size})
					require.NoError(t, err)
					walks[i] = append(walks[i], parseIDs(pg.IDs)...)
					cursors[i] = "-"
					if pg.More {
						cursors[i] = strings.Clone(pg.IDs[len(pg.IDs)-1])
					}
					l.pageDone()
				}
			}
			for i, w := range walks {
				assert.True(t, slices.IsSorted(w) && len(slices.Compact(slices.Clone(w))) == len(w), "walk %d strictly ascending", i)
				for _, id := range ids {
					if _, found := slices.BinarySearch(w, id); !found && !deleted[id] {
						t.Errorf("walk by %d lost %d, which lived through it", sizes[i], id)
						break
					}
				}
			}
		})
	}
}
