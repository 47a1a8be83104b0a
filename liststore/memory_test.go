package liststore

import (
	"cmp"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newMemory returns a store made by Init, as the engine's MemoryStore
// makes the one it holds: see Init.
func newMemory[S any](compare func(a, b string) int, ttl time.Duration, memory int64, owner Owner[S]) *Memory[S] {
	return new(Memory[S]).Init(compare, ttl, memory, owner)
}

// keepFor keeps w in s as the window of list read by a page that ended
// at after, with more after it, at now: a chain entry for after, and w.
func keepFor[S any](s *Memory[S], list, after string, w *StoredWindow, now time.Time) {
	s.Walked(context.Background(), list, Walked{Last: after, More: true, At: now, Now: now, Window: w})
}

// TestMemoryStoreFloorAfterEviction: a walk's chain entry forgotten for
// memory must not let a window read before that walk's last page serve
// it, when a page that began earlier keeps its window afterwards and
// another walk's page, cut from that window, makes the same id's entry
// again with the window's older time. Both ways an entry goes for
// memory are covered: popped from the list in use, and gone with its
// list.
func TestMemoryStoreFloorAfterEviction(t *testing.T) {
	for _, how := range []string{"popped", "with its list", "popped, then its list"} {
		t.Run(how, func(t *testing.T) {
			t1 := time.Unix(1_800_000_000, 0) // the earlier walk's page began
			t2 := t1.Add(time.Millisecond)    // the later walk's page, ending at 30
			ids := []string{"10", "20", "30", "40", "50", "60"}
			s := newMemory[struct{}](cmp.Compare[string], time.Second, 1<<20, nil)
			s.Walked(context.Background(), "l", Walked{Last: "30", More: true, At: t2, Now: t2})
			s.mu.Lock()
			if how != "with its list" {
				s.memory = s.bytes - 1
				s.bound(s.lists["l"])
				require.NotNil(t, s.lists["l"], "l kept, its entry popped")
			}
			if how != "popped" {
				s.get("other") // the list in use; l is the least recently used
				s.memory = s.bytes - 1
				s.bound(s.lists["other"])
				require.Nil(t, s.lists["l"], "l went whole")
			}
			s.memory = 1 << 20
			s.mu.Unlock()
			require.False(t, s.Cut(context.Background(), "l", CutQuery{After: "30", Size: 2, Now: t2}).Continues, "the later walk's entry is gone")

			// The page that began at t1 ends now, keeping its window; a
			// page cut from it ends at 30, as the later walk's did.
			keepFor(s, "l", "10", &StoredWindow{Span: Span{IDs: ids, Floor: "10", Start: -1}}, t1)
			s.Walked(context.Background(), "l", Walked{Last: "30", More: true, At: t1, Now: t2.Add(time.Millisecond)})
			c := s.Cut(context.Background(), "l", CutQuery{After: "30", Size: 2, Now: t2.Add(2 * time.Millisecond)})
			assert.Nil(t, c.Window, "a window read before the forgotten entry's answer serves no cursor")
		})
	}
}
