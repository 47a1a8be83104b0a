package translate

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKeysetReadaheadCosts: a keyset walk reads ahead as a page-dialect
// walk does (issue 40): a call per many pages, each record fetched about
// once. Its windows are checked where a misread can show, and what the
// checks cost does not grow with the list: the walk's offset reads are
// the list identity's first check and its end's, at 5,000 records as at
// 50,000. Where the ids grow a digit (denseIDs holds no power of ten
// there) the answers show the backend compares numbers (textMayDiffer);
// one that compares text is checked there (TestKeysetMisreadsCaught).
// After the walk, a lone cold cursor of the checked list costs one call.
func TestKeysetReadaheadCosts(t *testing.T) {
	for _, tc := range []struct {
		size  int
		calls float64
	}{{10, 0.05}, {100, 0.25}} {
		for _, n := range []int{5000, 50_000} {
			t.Run(fmt.Sprintf("%d records by %d", n, tc.size), func(t *testing.T) {
				ids := denseIDs(n)
				l := newMemList(ids)
				e := keysetEngine(true)
				got, c := costlyWalk(t, e, l, tc.size)
				require.Equal(t, ids, got)
				checks := l.offsetCalls - 1 // the walk's first page is read by offset
				t.Logf("%.3f calls per page, %.3f fetched per served, %.3f stepped per served; %d offset reads checking",
					c.callsPerPage(), c.fetchedPerServed(), float64(c.stepped)/float64(c.served), checks)
				assert.LessOrEqual(t, c.callsPerPage(), tc.calls, "calls per page")
				// Records fetched past those served: a tenth, and at most
				// a window for each check, whose offset read reads again
				// the window the keyset answer held.
				assert.LessOrEqual(t, c.fetched-c.served, c.served/10+checks*e.MaxPageSize, "records fetched per record served")
				assert.LessOrEqual(t, checks, 3, "the checks' offset reads: the list's first check, the call at the end")
				assert.LessOrEqual(t, c.stepped-l.offsetStepped, c.served*11/10, "keyset records stepped, of those served")

				for _, at := range []int{n / 3, n / 2, n - 5*tc.size} {
					cursor := ids[at]
					calls0, _ := l.counts()
					pg, err := e.Page(context.Background(), l, Request{List: "caller", After: strconv.FormatInt(cursor, 10), Size: tc.size})
					require.NoError(t, err)
					want, more := after(ids, cursor, tc.size)
					assert.Equal(t, want, parseIDs(pg.IDs))
					assert.Equal(t, more, pg.More)
					calls, _ := l.counts()
					assert.Equal(t, 1, calls-calls0, "a cold cursor at %d of a checked list", at)
				}
			})
		}
	}
}

// TestKeysetWindowsUnderChurn: keyset windows read ahead keep the
// guarantee while records come and go before every call, at 10 and 100
// a page, and still cost a call per many pages.
func TestKeysetWindowsUnderChurn(t *testing.T) {
	for _, size := range []int{10, 100} {
		t.Run(strconv.Itoa(size), func(t *testing.T) {
			l := newMemList(evenIDs(5000))
			c := churningWalkBy(t, uint64(size), keysetEngine(true), l, 5, size)
			t.Logf("%.3f calls a page, %d offset calls for %d pages", c.callsPerPage(), l.offsetCalls, c.pages)
			assert.Less(t, c.callsPerPage(), 0.5, "most pages from windows")
		})
	}
}

// hangingList is a memList whose reads ahead of the walker (Detach) hang
// until release is closed, while the walker's own reads answer at once:
// a backend slow on one answer.
type hangingList struct {
	*memList
	release chan struct{}
	hung    atomic.Int32
}

func (l *hangingList) Detach() (Fetcher, context.Context, func(error), bool) {
	return hangingFetch{l}, context.Background(), func(error) {}, true
}

type hangingFetch struct{ l *hangingList }

func (h hangingFetch) Fetch(ctx context.Context, w Window) (Batch, error) {
	h.l.hung.Add(1)
	<-h.l.release
	return h.l.memList.Fetch(ctx, w)
}

// TestPageDoesNotWaitOnAHungReadAhead: a walker that gets to a window's
// end while the read ahead of it hangs waits a bound (a few of the
// list's recent reads), then reads for itself: every page of the walk is
// served, exact, before any read ahead answers. Unbounded, the first page
// at a window's end waited for the hung read, and the test never ends.
func TestPageDoesNotWaitOnAHungReadAhead(t *testing.T) {
	for _, dialect := range []string{"pages", "keyset"} {
		t.Run(dialect, func(t *testing.T) {
			l := &hangingList{memList: newMemList(evenIDs(2000)), release: make(chan struct{})}
			e := readaheadEngine(false)
			if dialect == "keyset" {
				e = keysetEngine(true)
			}
			e.spawn = nil // reads ahead in goroutines, which hang
			var ids []int64
			cursor := ""
			for {
				pg, err := e.Page(context.Background(), l, Request{List: "caller", After: cursor, Size: 10})
				require.NoError(t, err)
				ids = append(ids, parseIDs(pg.IDs)...)
				if !pg.More {
					break
				}
				cursor = pg.IDs[len(pg.IDs)-1]
			}
			assert.Equal(t, evenIDs(2000), ids)
			assert.Positive(t, l.hung.Load(), "reads ahead were started, and hung")
			close(l.release)
			e.WaitAhead()
		})
	}
}

// TestTextMayDiffer: the answers above x where a backend comparing ids as
// text could have left records out, and those that show it did not.
func TestTextMayDiffer(t *testing.T) {
	e := &Engine{Order: cursor.Numeric}
	for _, tc := range []struct {
		x    string
		ids  []string
		want bool
	}{
		{"95", []string{"96", "99"}, false},         // one length: text agrees
		{"95", []string{"96", "99", "950"}, true},   // 100 to 949 may be left out
		{"95", []string{"99", "101"}, false},        // "101" < "95": not text
		{"95", []string{"99", "100", "101"}, false}, // 100 is the first of its length, and below "95"
		{"10", []string{"20", "990"}, false},        // nothing of two digits is below "10" as text
		{"9995", []string{"9996", "99950"}, true},   // issue 31's review
		{"99", []string{"1000", "10000"}, false},    // powers of ten: nothing below them
		{"123", []string{"999", "12345"}, true},     // 1000 to 1229, 10000 to 12299 may be left out
		{"0", []string{"1"}, false},                 // one length
		{"0", []string{"1", "10"}, true},            // not a plain number: checked
		{"000123", []string{"000124", "000999"}, false},
		{"12", []string{"13", "0014"}, false}, // "0014" < "12": not text
		{"-5", []string{"-4", "7"}, false},    // "-4" < "-5": not text
		{"-5", []string{"7"}, true},
	} {
		assert.Equal(t, tc.want, e.textMayDiffer(tc.x, tc.ids), "%s above %s", tc.ids, tc.x)
	}
	assert.False(t, (&Engine{Order: cursor.Lexical}).textMayDiffer("95", []string{"950"}), "lexical ids are text")
}

// TestKeysetTextMisreadEndsTheList: after 5990 a backend comparing ids as
// text sends 5991 to 5999 and nothing more (10000 to 10999 are below
// "5990" as text): no longer id shows the misread, and the answer ends
// the list early. The end is confirmed by an offset call where the
// answers say the list ends (keysetEnd), which finds 10000 after 5999:
// every walk is whole, read-ahead on or off, at 10 and 100 a page.
func TestKeysetTextMisreadEndsTheList(t *testing.T) {
	var all []int64
	for id := int64(5000); id <= 5999; id++ {
		all = append(all, id)
	}
	for id := int64(10000); id <= 10999; id++ {
		all = append(all, id)
	}
	for _, readahead := range []bool{false, true} {
		for _, size := range []int{10, 100} {
			t.Run(fmt.Sprintf("read-ahead %v/%d", readahead, size), func(t *testing.T) {
				l := newMemList(all)
				l.keysetAs = "text"
				ids, _ := costlyWalk(t, keysetEngine(readahead), l, size)
				assert.Equal(t, all, ids)
			})
		}
	}
}
