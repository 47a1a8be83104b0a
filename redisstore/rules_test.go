package redisstore_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/liststore"
	"github.com/helpdesk-gateway/gateway/redisstore"
	"github.com/helpdesk-gateway/gateway/redisstore/redistest"
	"github.com/helpdesk-gateway/gateway/translate"
)

var ctx = context.Background()

// page records on s a page of list that ended at last with more after
// it, its answers at at (a Cut's time), and the window ids it read.
func page(s *redisstore.Store, list, last string, at time.Time, ids ...string) {
	var w *liststore.StoredWindow
	if len(ids) > 0 {
		w = liststore.NewStoredWindow(liststore.WindowData{IDs: ids, Start: 0, FromStart: true}, nil, nil)
	}
	s.Walked(ctx, list, liststore.Walked{Last: last, More: true, Size: 2, At: at, Now: time.Now(),
		Walk: liststore.Walk{Size: 40}, Window: w})
}

// cutAt asks s for the page of size 2 after cursor.
func cutAt(s *redisstore.Store, list, cursor string) liststore.CutResult {
	return s.Cut(ctx, list, liststore.CutQuery{After: cursor, Size: 2, Now: time.Now()})
}

// ticket is a Cut's time on the store's clock, as a page of list gets
// for its answers: of the same list, whose fence the Cut makes when it
// has none (fenceLua).
func ticket(t *testing.T, s *redisstore.Store, list string) time.Time {
	c := s.Cut(ctx, list, liststore.CutQuery{After: "0", Size: 1, Now: time.Now()})
	require.False(t, c.At.IsZero(), "the store gives its time")
	return c.At
}

// TestInterleavedWalksOfOneCaller: an earlier walk, slower, ends a page
// at the same record after a later walk did. The later walk's next page
// must not come from the earlier walk's window, read before the later
// walk began; the earlier walk may take the later one's (newer) window.
func TestInterleavedWalksOfOneCaller(t *testing.T) {
	srv := redistest.Start(t)
	a, b := newStore(t, srv, time.Minute, nil), newStore(t, srv, time.Minute, nil)
	const list = "calls|k"
	tA := ticket(t, a, list)
	time.Sleep(2 * time.Millisecond)
	tB := ticket(t, b, list)                             // the later walk began after the earlier one's answer
	page(b, list, "10", tB, "1", "10", "11", "13", "20") // the later walk's answer holds 13, inserted since
	page(a, list, "10", tA, "1", "10", "11", "20", "30") // the earlier walk's, read before
	for _, s := range []*redisstore.Store{a, b} {
		c := cutAt(s, list, "10")
		require.True(t, c.Continues)
		require.NotNil(t, c.Window)
		assert.Equal(t, []string{"11", "13", "20"}, c.Window.Data().IDs, "the later answer serves both walks")
		assert.False(t, c.Window.Data().At.Before(tB))
	}
}

// TestTTLOnTheInstanceClock: an entry the store still holds is not
// served once the reading instance's clock says the TTL passed, however
// the store's expiry lags.
func TestTTLOnTheInstanceClock(t *testing.T) {
	srv := redistest.Start(t)
	s := newStore(t, srv, time.Minute, nil)
	page(s, "l", "10", ticket(t, s, "l"), "1", "10", "11", "12", "13")
	c := s.Cut(ctx, "l", liststore.CutQuery{After: "10", Size: 2, Now: time.Now()})
	require.True(t, c.Continues)
	require.NotNil(t, c.Window)
	c = s.Cut(ctx, "l", liststore.CutQuery{After: "10", Size: 2, Now: time.Now().Add(time.Minute)})
	assert.False(t, c.Continues, "past the TTL on this instance's clock")
	assert.Nil(t, c.Window)

	// And the store's own expiry: PX of its TTL on every key it writes,
	// read back as each key's PTTL rather than waited out (a wait races
	// the round trips on a loaded machine). A second store, with an
	// hour's TTL, tells the two TTLs apart.
	long := newStore(t, srv, time.Hour, nil)
	page(long, "m", "10", ticket(t, long, "m"), "1", "10", "11", "12", "13")
	require.True(t, cutAt(long, "m", "10").Continues)
	var chains []time.Duration
	for _, k := range scanKeys(t, srv) {
		out, err := srv.Do("PTTL", k)
		require.NoError(t, err)
		ms, err := strconv.ParseInt(out, 10, 64)
		require.NoError(t, err, "PTTL %s: %q", k, out)
		ttl := time.Duration(ms) * time.Millisecond
		assert.Positive(t, ttl, "%s expires in the store (PTTL %d)", k, ms)
		assert.LessOrEqual(t, ttl, time.Hour, k)
		if strings.HasSuffix(k, "}:c:10") {
			chains = append(chains, ttl)
		}
	}
	slices.Sort(chains)
	require.Len(t, chains, 2, "a chain entry for each store's page")
	assert.LessOrEqual(t, chains[0], time.Minute, "the minute store's entry: PX of its TTL")
	assert.Greater(t, chains[1], time.Minute, "the hour store's entry: PX of its TTL")
}

// TestEntriesOfAnotherRun: an entry written under another run_id (a
// store restored from a snapshot, or a replica after failover, holds
// entries older than ones it lost) never serves.
func TestEntriesOfAnotherRun(t *testing.T) {
	srv := redistest.Start(t)
	s := newStore(t, srv, time.Minute, nil)
	page(s, "l", "10", ticket(t, s, "l"), "1", "10", "11", "12", "13")
	require.True(t, cutAt(s, "l", "10").Continues)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer c.Close()
	for _, k := range scanKeys(t, srv) {
		if !strings.Contains(k, "}:c:") {
			continue
		}
		v, err := c.Get(ctx, k).Result()
		require.NoError(t, err)
		_, rest, _ := strings.Cut(v, " ")
		require.NoError(t, c.Set(ctx, k, "0000000000000000000000000000000000000000 "+rest, time.Minute).Err())
	}
	assert.False(t, cutAt(s, "l", "10").Continues, "another run's entry")
}

// TestStoreFaults: a store killed, restarted and flushed costs pages
// nothing but the store's help: a Cut that fails continues no walk, a
// failure is counted once and reported once as down, and the store is
// used again once it answers.
func TestStoreFaults(t *testing.T) {
	srv := redistest.Start(t)
	var downs, ups, errs atomic.Int32
	s := newStore(t, srv, time.Minute, func(c *redisstore.Config) {
		c.Timeout = 5 * time.Second // a killed server refuses at once; a live one is never this slow
		c.OnError = func(string, error) { errs.Add(1) }
		c.OnState = func(up bool, _ error) {
			if up {
				ups.Add(1)
			} else {
				downs.Add(1)
			}
		}
	})
	page(s, "l", "10", ticket(t, s, "l"), "1", "10", "11", "12", "13")
	run := s.State().RunID
	require.NotEmpty(t, run)

	// The pages' own clock (CutQuery.Now) says when the back-off ends:
	// five pages that began before the failure all fall within it, on any
	// machine; pages an hour later are past any back-off.
	cutOn := func(now time.Time) liststore.CutResult {
		return s.Cut(ctx, "l", liststore.CutQuery{After: "10", Size: 2, Now: now})
	}
	began := time.Now()
	srv.Kill()
	for range 5 {
		c := cutOn(began)
		assert.False(t, c.Continues)
		assert.True(t, c.At.IsZero())
	}
	assert.Equal(t, int32(1), downs.Load(), "down once")
	assert.Equal(t, int32(1), errs.Load(), "the back-off keeps further pages off the store")
	assert.False(t, s.State().Up)

	srv.Restart()
	require.Eventually(t, func() bool { cutOn(time.Now().Add(time.Hour)); return s.State().Up }, 10*time.Second, 50*time.Millisecond)
	assert.Equal(t, int32(1), ups.Load())
	assert.NotEqual(t, run, s.State().RunID, "a restarted store is another run")
	assert.False(t, cutAt(s, "l", "10").Continues, "nothing of before the restart")

	page(s, "l", "10", ticket(t, s, "l"), "1", "10", "11", "12", "13")
	require.True(t, cutAt(s, "l", "10").Continues)
	srv.Flush()
	assert.False(t, cutAt(s, "l", "10").Continues, "flushed")
	assert.True(t, s.State().Up, "an empty store is no fault")
}

// TestLostWriteMovesTheFence: a later walk's page whose chain entry
// could not be written (the store paused for writes past the call's
// deadline, the call dropped with its connection) would leave an earlier
// walk's entry for the same record to decide the later walk's next page,
// on whichever instance it lands. The page is not sent until its list's
// fence has moved: the next Cut, on another instance, at once, continues
// no earlier walk's window.
func TestLostWriteMovesTheFence(t *testing.T) {
	srv := redistest.Start(t)
	short := func(c *redisstore.Config) { c.Timeout = 50 * time.Millisecond }
	a, b := newStore(t, srv, time.Minute, short), newStore(t, srv, time.Minute, nil)
	page(a, "l", "10", ticket(t, a, "l"), "1", "10", "11", "12", "13") // the earlier walk
	require.NotNil(t, cutAt(b, "l", "10").Window)

	tB := ticket(t, a, "l")
	_, err := srv.Do("CLIENT", "PAUSE", "300", "WRITE")
	require.NoError(t, err)
	page(a, "l", "10", tB) // the later walk's page: its write waits past the deadline
	c := cutAt(b, "l", "10")
	assert.Nil(t, c.Window, "the earlier walk's window does not serve the later walk")
	assert.True(t, a.State().Up, "the fence moved once the pause ended: the store answers")
}

// TestWhatAStoreLostDecidesNothing: an earlier walk's write that lands
// after the store lost the later walk's entry for the same record (a
// flush, here; a failover to a replica that lagged, or a restore, lose
// it too) is refused: the list's fence went with what was lost and is
// made again at the store's now, which the earlier walk's time is
// before. And a fence of another run (a failover and back to a master
// whose run_id entries of before carry again) is as none: now.
func TestWhatAStoreLostDecidesNothing(t *testing.T) {
	srv := redistest.Start(t)
	a, b := newStore(t, srv, time.Minute, nil), newStore(t, srv, time.Minute, nil)
	const list = "calls|k"
	tA := ticket(t, a, list) // the earlier walk's page began
	time.Sleep(2 * time.Millisecond)
	tB := ticket(t, b, list)
	page(b, list, "10", tB, "1", "10", "11", "13", "20") // the later walk's page, its answer newer
	srv.Flush()
	page(a, list, "10", tA, "1", "10", "11", "20", "30") // the earlier walk's write lands after the flush
	if c := cutAt(b, list, "10"); c.Window != nil {
		assert.False(t, c.Window.Data().At.Before(tB), "a window read before the later walk's page serves it")
	}

	page(a, list, "20", ticket(t, a, list), "1", "20", "21", "22", "23")
	require.NotNil(t, cutAt(a, list, "20").Window)
	for _, k := range scanKeys(t, srv) {
		if strings.HasSuffix(k, "}:f") {
			_, err := srv.Do("SET", k, "0000000000000000000000000000000000000000 1")
			require.NoError(t, err)
		}
	}
	assert.False(t, cutAt(a, list, "20").Continues, "an entry older than a fence of another run")
}

// TestKeysAreKeyedHashes: the same identity under another secret is
// another key, so that a reader of the store cannot test a guessed
// credential without the secret.
func TestKeysAreKeyedHashes(t *testing.T) {
	srv := redistest.Start(t)
	s1 := newStore(t, srv, time.Minute, nil)
	s2 := newStore(t, srv, time.Minute, func(c *redisstore.Config) { c.Secret = []byte("another secret of 16+ bytes") })
	page(s1, "calls|apikey=k", "10", ticket(t, s1, "calls|apikey=k"), "1", "10", "11", "12", "13")
	require.True(t, cutAt(s1, "calls|apikey=k", "10").Continues)
	assert.False(t, cutAt(s2, "calls|apikey=k", "10").Continues, "another secret, another key")

	_, err := redisstore.New(redisstore.Config{URL: srv.URL(), Secret: []byte("short")})
	assert.ErrorContains(t, err, strconv.Itoa(redisstore.MinSecret))
	_, err = redisstore.New(redisstore.Config{URL: "redis://user:hunter2-password@127.0.0.1:1/notadb", Secret: []byte(secret),
		Encode: func(any) ([]byte, bool) { return nil, true }, Decode: func([]byte) any { return nil }})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "hunter2", "no password in an error")
}

// TestPageSizeChangedMidWalk: a window is kept as pages of the walk's
// size, so a walker that changes _perPage mid-walk asks at no page
// boundary: its page starts with the window page's records after the
// cursor and is stitched from the backend, whose answer becomes the
// walk's window at the new size. The walk stays exact, and each change
// costs a call or so, not one a page from there on.
func TestPageSizeChangedMidWalk(t *testing.T) {
	srv := redistest.Start(t)
	l := newList(3000, 2)
	engines := instances(t, srv, 3, time.Minute)
	req := translate.Request{List: "calls|resize"}
	var ids []string
	for i, size := range []int{10, 7, 13, 10} {
		req.Size = size
		before, _ := l.counts()
		for page := 0; page < 60; page++ {
			pg, err := engines[(i+page)%3].Page(ctx, l, req)
			require.NoError(t, err)
			ids = append(ids, pg.IDs...)
			require.True(t, pg.More)
			req.After = pg.IDs[len(pg.IDs)-1]
		}
		after, _ := l.counts()
		t.Logf("%d a page: %d backend calls in 60 pages", size, after-before)
		assert.LessOrEqual(t, after-before, 6, "at %d a page, after a change: read ahead at the new size", size)
	}
	assert.Equal(t, l.snapshot()[:len(ids)], ids, "the walk is exact across page sizes")
}

// TestDamagedWindowPages: a window page that is not what the store wrote
// (cut short, or bytes that are no entries) serves nothing: the cut is a
// fault, the page is read from the backend, and the walk stays exact.
func TestDamagedWindowPages(t *testing.T) {
	for name, damage := range map[string]string{
		"cut short":  "\x05ab",
		"no entries": "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",
		"empty":      "",
	} {
		t.Run(name, func(t *testing.T) {
			srv := redistest.Start(t)
			l := newList(1000, 1)
			engines := instances(t, srv, 3, time.Minute)
			req := translate.Request{List: "calls|damaged", Size: 10}
			var ids []string
			damaged := 0
			for page := 0; ; page++ {
				if page == 20 { // the walk has a window by now: damage every page of it
					for _, k := range scanKeys(t, srv) {
						if strings.Contains(k, ":p:") {
							_, err := srv.Do("SET", k, damage, "PX", "60000")
							require.NoError(t, err)
							damaged++
						}
					}
				}
				pg, err := engines[page%3].Page(ctx, l, req)
				require.NoError(t, err)
				ids = append(ids, pg.IDs...)
				if !pg.More {
					break
				}
				req.After = pg.IDs[len(pg.IDs)-1]
			}
			require.NotZero(t, damaged, "the walk kept window pages to damage")
			assert.Equal(t, l.snapshot(), ids, "the walk is exact")
			var errs int64
			for _, e := range engines {
				errs += e.Walks.(*redisstore.Store).State().Errors
			}
			assert.NotZero(t, errs, "a damaged page is a fault the store counts")
		})
	}
}
