package redisstore_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/liststore"
	"github.com/helpdesk-gateway/gateway/redisstore"
	"github.com/helpdesk-gateway/gateway/redisstore/redistest"
	"github.com/helpdesk-gateway/gateway/translate"
)

// maxCallsPerPage are issue 33's targets for a whole walk of 20,000
// records through three instances: backend calls per page.
var maxCallsPerPage = map[int]float64{10: 0.05, 100: 0.25}

// slowMachine gives store calls a deadline far above a loopback round
// trip even on a loaded machine under -race: a call that runs out costs
// the walk's windows and the count its meaning. The faults these tests
// make fail calls at once (a refused connection, MOVED, a connection
// the sentinel closed), whatever the deadline.
func slowMachine(c *redisstore.Config) { c.Timeout = 5 * time.Second }

// sharedWalk walks l through engines, round robin, calling between
// before each page after the first, and checks that the walk is exact;
// it returns l and the pages served.
func sharedWalk(t *testing.T, engines []*translate.Engine, l *list, name string, size int, between func(page int)) (*list, int) {
	t.Helper()
	ids := walk(t, engines, l, name, size, between)
	for _, e := range engines {
		e.WaitAhead()
	}
	require.Equal(t, l.snapshot(), ids, "the walk is exact")
	return l, (len(ids) + size - 1) / size
}

// storeErrors sums the store errors the engines counted, and logs the
// last of each.
func storeErrors(t *testing.T, engines []*translate.Engine) (n int64) {
	for i, e := range engines {
		st := e.Walks.(*redisstore.Store).State()
		if st.Errors > 0 {
			t.Logf("instance %d: %d store errors, the last: %s", i, st.Errors, st.LastError)
		}
		n += st.Errors
	}
	return n
}

// awaitStoresUp probes each engine's store with a Cut on list (which
// reads nothing of a walk) until it says it is up: its back-off after
// an outage has passed and a call went through.
func awaitStoresUp(t *testing.T, engines []*translate.Engine, list string) {
	t.Helper()
	for _, e := range engines {
		s := e.Walks.(*redisstore.Store)
		require.Eventually(t, func() bool {
			c := s.Cut(ctx, list, liststore.CutQuery{After: "0", Size: 1, Now: time.Now()})
			return s.State().Up && !c.At.IsZero()
		}, 20*time.Second, 20*time.Millisecond, "the store answers again")
	}
}

// TestCluster: instances sharing a three-master Redis Cluster walk
// exactly at the calls a page of one Redis (TestWalkAcrossInstances), each
// list's keys in one slot, also as an ACL user limited to the store's
// commands; the list's slot moved to another master, or its master lost,
// mid-walk costs calls (the calls that fail are counted), never a page,
// and once the slot is served again its lists share again at the same
// calls a page.
func TestCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	for _, size := range []int{10, 100} {
		t.Run(fmt.Sprintf("walk/perPage=%d", size), func(t *testing.T) {
			engines := instancesAt(t, cl.URL(), 3, 10*time.Second, slowMachine)
			l, pages := sharedWalk(t, engines, newList(20_000, 3), fmt.Sprintf("calls|cluster%d", size), size, nil)
			calls, fetched := l.counts()
			t.Logf("%d pages, %d calls (%.3f a page), %.3f fetched per served", pages, calls,
				float64(calls)/float64(pages), float64(fetched)/float64(pages*size))
			assert.LessOrEqual(t, float64(calls)/float64(pages), maxCallsPerPage[size], "backend calls per page")
			assert.Zero(t, storeErrors(t, engines))
			st := engines[0].Walks.(*redisstore.Store).State()
			assert.Equal(t, "cluster", st.Kind)
			assert.Positive(t, st.Served)
		})
	}
	t.Run("acl user", func(t *testing.T) {
		// docs/operating.md's rule, with what a cluster needs besides.
		const rule = "~hdgw:* resetchannels -@all +get +set +del +eval +evalsha +rpush +lindex +exists +copy +getdel +blmove +pexpire +time +ping +info +config|get +cluster|slots +command"
		for _, n := range cl.Nodes {
			_, err := n.Do(append([]string{"ACL", "SETUSER", "hdgw-cluster", "on", ">cluster-acl-password"}, strings.Fields(rule)...)...)
			require.NoError(t, err)
		}
		url := strings.Replace(cl.URL(), "://", "://hdgw-cluster:cluster-acl-password@", 1)
		engines := instancesAt(t, url, 3, 10*time.Second, slowMachine)
		l, pages := sharedWalk(t, engines, newList(20_000, 3), "calls|cluster-acl", 10, nil)
		calls, _ := l.counts()
		assert.LessOrEqual(t, float64(calls)/float64(pages), maxCallsPerPage[10], "backend calls per page")
		assert.Zero(t, storeErrors(t, engines))
	})
	t.Run("slot moved mid-walk", func(t *testing.T) {
		cl.Flush() // so that the walk's keys are the only ones: Busiest holds them
		engines := instancesAt(t, cl.URL(), 3, 10*time.Second, slowMachine)
		const name, size = "calls|cluster-moved", 10
		var to *redistest.Server
		sharedWalk(t, engines, newList(20_000, 3), name, size, func(page int) {
			if page == 300 {
				from := cl.Busiest()
				key, err := from.Do("RANDOMKEY")
				require.NoError(t, err)
				to = cl.Nodes[0]
				if to == from {
					to = cl.Nodes[1]
				}
				cl.MoveSlot(key, to)
			}
		})
		assert.Positive(t, storeErrors(t, engines), "calls to the slot's old master were refused (MOVED)")
		awaitStoresUp(t, engines, name)
		walkShared(t, engines, name, size) // the same list, so the same slot: on its new master
		assert.Equal(t, to, cl.Busiest(), "the list's keys are on the slot's new master")
	})
	t.Run("master lost mid-walk", func(t *testing.T) {
		cl.Flush()
		engines := instancesAt(t, cl.URL(), 3, 10*time.Second, slowMachine)
		const name, size = "calls|cluster-lost", 10
		var victim *redistest.Server
		sharedWalk(t, engines, newList(20_000, 3), name, size, func(page int) {
			switch page {
			case 300:
				victim = cl.Busiest() // the master of the list's slot: its keys are the walk's
				victim.Kill()
			case 400:
				victim.Restart() // the same node, its slots kept, empty
			}
		})
		assert.Positive(t, storeErrors(t, engines), "the lost master's calls failed")
		cl.WaitOK()
		awaitStoresUp(t, engines, name)
		walkShared(t, engines, name, size)
	})
}

// walkShared walks a new list through engines once their store is up
// again, as name (whose keys live in one slot), and holds it to the
// calls a page of a walk on a store that never failed.
func walkShared(t *testing.T, engines []*translate.Engine, name string, size int) {
	t.Helper()
	l, pages := sharedWalk(t, engines, newList(20_000, 3), name, size, nil)
	calls, _ := l.counts()
	t.Logf("the walk after: %d pages, %d calls (%.3f a page)", pages, calls, float64(calls)/float64(pages))
	assert.LessOrEqual(t, float64(calls)/float64(pages), maxCallsPerPage[size], "backend calls per page, shared again")
}

// TestSentinel: instances sharing a master through a sentinel walk
// exactly; a failover mid-walk costs calls, never a page, and after it
// the instances share again through the new master, without a restart,
// at the calls a page of one Redis.
func TestSentinel(t *testing.T) {
	st := redistest.StartSentinels(t)
	engines := instancesAt(t, st.URL(), 3, 10*time.Second, slowMachine)
	l, pages := sharedWalk(t, engines, newList(20_000, 3), "calls|failover", 10, func(page int) {
		if page == 300 {
			st.Failover()
		}
	})
	calls, _ := l.counts()
	t.Logf("failover mid-walk: %d pages, %d calls, %d store errors", pages, calls, storeErrors(t, engines))
	require.Positive(t, st.Failovers, "failed over")
	awaitStoresUp(t, engines, "calls|probe")
	for _, size := range []int{10, 100} {
		t.Run(fmt.Sprintf("after the failover/perPage=%d", size), func(t *testing.T) {
			walkShared(t, engines, fmt.Sprintf("calls|sentinel%d", size), size)
		})
	}
	s := engines[0].Walks.(*redisstore.Store).State()
	assert.Equal(t, "sentinel", s.Kind)
	assert.Equal(t, st.Name, s.Master)

	// The demoted master, a replica now, holds the new master's entries
	// and the old run's it had: a store that reaches it refuses it
	// rather than read them.
	demoted := newStoreAt(t, "redis://"+st.Replica.Addr()+"/0", time.Minute, nil)
	c := demoted.Cut(ctx, "calls|failover", liststore.CutQuery{After: "30", Size: 10, Now: time.Now()})
	assert.True(t, c.At.IsZero(), "no answer from a replica")
	assert.False(t, demoted.State().Up)
	assert.Contains(t, demoted.State().LastError, "not a master")
}

// TestTimeOfAnotherRun: a page whose Cut read its time off one run of
// the store, recorded after the store restarted (or failed over, or the
// list's slot moved), keeps no window: its time is another clock's.
func TestTimeOfAnotherRun(t *testing.T) {
	srv := redistest.Start(t)
	s := newStore(t, srv, time.Minute, slowMachine)
	at := ticket(t, s, "l")
	run := s.State().RunID
	srv.Restart()
	require.Eventually(t, func() bool {
		c := s.Cut(ctx, "probe", liststore.CutQuery{After: "0", Size: 1, Now: time.Now()})
		return !c.At.IsZero()
	}, 20*time.Second, 20*time.Millisecond)
	require.NotEqual(t, run, s.State().RunID)
	page(s, "l", "10", at, "1", "10", "11", "12", "13")
	c := cutAt(s, "l", "10")
	assert.True(t, c.Continues, "the page's chain entry is written, at the store's own time")
	assert.Nil(t, c.Window, "no window read at a time of another run's clock")
	page(s, "l", "10", ticket(t, s, "l"), "1", "10", "11", "12", "13")
	assert.NotNil(t, cutAt(s, "l", "10").Window, "the control: a time of this run keeps the window")
}
