package redisstore_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/internal/redistest"
	"github.com/helpdesk-gateway/gateway/redisstore"
	"github.com/helpdesk-gateway/gateway/translate"
)

// maxCallsPerPage are issue 33's targets for a whole walk of 20,000
// records through three instances: backend calls per page.
var maxCallsPerPage = map[int]float64{10: 0.05, 100: 0.25}

// sharedWalk walks a new list of 20,000 records through engines, round
// robin, calling between before each page after the first, and checks
// that the walk is exact; it returns the list and the pages served.
func sharedWalk(t *testing.T, engines []*translate.Engine, name string, size int, between func(page int)) (*list, int) {
	t.Helper()
	l := newList(20_000, 3)
	ids := walk(t, engines, l, name, size, between)
	for _, e := range engines {
		e.WaitAhead()
	}
	require.Equal(t, l.snapshot(), ids, "the walk is exact")
	return l, (len(ids) + size - 1) / size
}

// storeErrors sums the store errors the engines counted.
func storeErrors(engines []*translate.Engine) (n int64) {
	for _, e := range engines {
		n += e.Walks.(*redisstore.Store).State().Errors
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
			c := s.Cut(ctx, list, translate.CutQuery{After: "0", Size: 1, Now: time.Now()})
			return s.State().Up && !c.At.IsZero()
		}, 20*time.Second, 20*time.Millisecond, "the store answers again")
	}
}

// TestCluster: instances sharing a three-master Redis Cluster walk
// exactly at the calls a page of one Redis (TestWalkAcrossInstances), each
// list's keys in one slot; a master lost mid-walk costs calls, never a
// page, and once it is back the walk shares again.
func TestCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	for _, size := range []int{10, 100} {
		t.Run(fmt.Sprintf("walk/perPage=%d", size), func(t *testing.T) {
			engines := instancesAt(t, cl.URL(), 3, 10*time.Second, nil)
			l, pages := sharedWalk(t, engines, fmt.Sprintf("calls|cluster%d", size), size, nil)
			calls, fetched := l.counts()
			t.Logf("%d pages, %d calls (%.3f a page), %.3f fetched per served", pages, calls,
				float64(calls)/float64(pages), float64(fetched)/float64(pages*size))
			assert.LessOrEqual(t, float64(calls)/float64(pages), maxCallsPerPage[size], "backend calls per page")
			assert.Zero(t, storeErrors(engines))
			st := engines[0].Walks.(*redisstore.Store).State()
			assert.Equal(t, "cluster", st.Kind)
			assert.Positive(t, st.Served)
		})
	}
	t.Run("master lost mid-walk", func(t *testing.T) {
		cl.Flush() // so that the walk's keys are the only ones: Busiest holds them
		engines := instancesAt(t, cl.URL(), 3, 10*time.Second, func(c *redisstore.Config) { c.Timeout = 200 * time.Millisecond })
		const name, size = "calls|cluster-lost", 10
		var victim *redistest.Server
		mark := map[string]int{}
		l, pages := sharedWalk(t, engines, name, size, func(page int) {
			switch page {
			case 300:
				victim = cl.Busiest() // the master of the list's slot: its keys are the walk's
				victim.Kill()
				mark["killed"] = page
			case 400:
				victim.Restart() // the same node, its slots kept, empty
				cl.WaitOK()
				awaitStoresUp(t, engines, name)
				mark["back"] = page
			}
		})
		calls, _ := l.counts()
		t.Logf("%d pages, %d calls, %d store errors", pages, calls, storeErrors(engines))
		assert.Positive(t, storeErrors(engines), "the lost master's calls failed")
		// A page at most a call while the master is lost, and the walk
		// shares again once it is back: most pages come from windows.
		outage := mark["back"] - mark["killed"]
		assert.LessOrEqual(t, float64(calls), float64(outage)+maxCallsPerPage[size]*float64(pages),
			"backend calls: a call a page of the outage, the target's on the rest")
	})
}

// TestSentinel: instances sharing a master through a sentinel walk
// exactly; a failover mid-walk costs calls, never a page, and after it
// the instances share again through the new master, without a restart,
// at the calls a page of one Redis.
func TestSentinel(t *testing.T) {
	st := redistest.StartSentinels(t)
	engines := instancesAt(t, st.URL(), 3, 10*time.Second, func(c *redisstore.Config) { c.Timeout = 200 * time.Millisecond })
	before := st.Master.Addr()
	l, pages := sharedWalk(t, engines, "calls|failover", 10, func(page int) {
		if page == 300 {
			st.Failover()
		}
	})
	calls, _ := l.counts()
	t.Logf("failover mid-walk: %d pages, %d calls, %d store errors", pages, calls, storeErrors(engines))
	require.NotEqual(t, before, st.Master.Addr(), "failed over")
	awaitStoresUp(t, engines, "calls|probe")
	for _, size := range []int{10, 100} {
		t.Run(fmt.Sprintf("after the failover/perPage=%d", size), func(t *testing.T) {
			l, pages := sharedWalk(t, engines, fmt.Sprintf("calls|sentinel%d", size), size, nil)
			calls, _ := l.counts()
			t.Logf("%d pages, %d calls (%.3f a page)", pages, calls, float64(calls)/float64(pages))
			assert.LessOrEqual(t, float64(calls)/float64(pages), maxCallsPerPage[size], "backend calls per page, through the new master")
		})
	}
	s := engines[0].Walks.(*redisstore.Store).State()
	assert.Equal(t, "sentinel", s.Kind)
	assert.Equal(t, st.Name, s.Master)

	// The demoted master, a replica now, holds the new master's entries
	// and the old run's it had: a store that reaches it refuses it
	// rather than read them.
	demoted := newStoreAt(t, "redis://"+st.Replica.Addr()+"/0", time.Minute, nil)
	c := demoted.Cut(ctx, "calls|failover", translate.CutQuery{After: "30", Size: 10, Now: time.Now()})
	assert.True(t, c.At.IsZero(), "no answer from a replica")
	assert.False(t, demoted.State().Up)
	assert.Contains(t, demoted.State().LastError, "not a master")
}

// TestTimeOfAnotherRun: a page whose Cut read its time off one run of
// the store, recorded after the store restarted (or failed over, or the
// list's slot moved), keeps no window: its time is another clock's.
func TestTimeOfAnotherRun(t *testing.T) {
	srv := redistest.Start(t)
	s := newStore(t, srv, time.Minute, func(c *redisstore.Config) { c.Timeout = 200 * time.Millisecond })
	at := ticket(t, s)
	run := s.State().RunID
	srv.Restart()
	require.Eventually(t, func() bool {
		c := s.Cut(ctx, "probe", translate.CutQuery{After: "0", Size: 1, Now: time.Now()})
		return !c.At.IsZero()
	}, 20*time.Second, 20*time.Millisecond)
	require.NotEqual(t, run, s.State().RunID)
	page(s, "l", "10", at, "1", "10", "11", "12", "13")
	c := cutAt(s, "l", "10")
	assert.True(t, c.Continues, "the page's chain entry is written, at the store's own time")
	assert.Nil(t, c.Window, "no window read at a time of another run's clock")
	page(s, "l", "10", ticket(t, s), "1", "10", "11", "12", "13")
	assert.NotNil(t, cutAt(s, "l", "10").Window, "the control: a time of this run keeps the window")
}
