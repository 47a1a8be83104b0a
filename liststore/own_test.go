package liststore

import (
	"cmp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeOwn stands for the engine's part of a list's object: what it holds
// outside the store costs bytes, which Thin halves.
type fakeOwn struct {
	bytes     int64
	forgotten bool
	thins     int
	handle    *List
}

type fakeOwner struct{}

func (fakeOwner) Forget(o *fakeOwn) { o.forgotten = true }

func (fakeOwner) Thin(o *fakeOwn) (bool, int64) {
	if o.bytes < 2 {
		return false, 0
	}
	half := o.bytes / 2
	o.bytes -= half
	o.thins++
	return true, -half
}

// grow returns an attach that adds n bytes to the object.
func grow(n int64) func(*List, *fakeOwn) int64 {
	return func(l *List, o *fakeOwn) int64 { o.handle = l; o.bytes += n; return n }
}

// TestOwnedObjects: the engine's part of each list's object is counted in
// the store's one bound, dropped with its list (its owner told), and
// thinned, never dropped, while its list is the one in use.
func TestOwnedObjects(t *testing.T) {
	base := newMemory[fakeOwn](cmp.Compare[string], 0, 1<<20, fakeOwner{}).listBytes + 1 // a list of a one-byte name
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, s *Memory[fakeOwn])
	}{
		{"an object's cost is counted", func(t *testing.T, s *Memory[fakeOwn]) {
			s.Own("a", true, grow(100))
			assert.Equal(t, base+100, s.Stats().Bytes)
		}},
		{"no object is made unless asked", func(t *testing.T, s *Memory[fakeOwn]) {
			assert.Nil(t, s.Own("a", false, grow(100)))
			assert.Zero(t, s.Stats().Lists)
		}},
		{"the least recently used list goes, its owner told", func(t *testing.T, s *Memory[fakeOwn]) {
			s.memory = 2*base + 150
			a := s.Own("a", true, grow(100))
			s.Own("b", true, grow(100))
			assert.True(t, a.forgotten, "a went")
			assert.Nil(t, s.Own("a", false, nil))
			assert.Equal(t, 1, s.Stats().Lists)
			assert.LessOrEqual(t, s.Stats().Bytes, s.memory)
		}},
		{"the list in use is thinned, never dropped", func(t *testing.T, s *Memory[fakeOwn]) {
			s.memory = base + 100
			a := s.Own("a", true, grow(400))
			assert.Equal(t, 2, a.thins)
			assert.False(t, a.forgotten)
			assert.Equal(t, base+100, s.Stats().Bytes)
		}},
		{"a change is counted for the lists the store holds", func(t *testing.T, s *Memory[fakeOwn]) {
			a := s.Own("a", true, grow(100))
			s.Counted(a.handle, []Change{{List: a.handle, Bytes: 50}})
			assert.Equal(t, base+150, s.Stats().Bytes)
			s.Clear()
			assert.True(t, a.forgotten)
			s.Counted(a.handle, []Change{{List: a.handle, Bytes: 50}})
			assert.Zero(t, s.Stats().Bytes, "a list dropped counts nothing")
		}},
		{"Clear tells the owner of every list", func(t *testing.T, s *Memory[fakeOwn]) {
			a, b := s.Own("a", true, grow(1)), s.Own("b", true, grow(1))
			s.Clear()
			require.True(t, a.forgotten)
			assert.True(t, b.forgotten)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t, newMemory[fakeOwn](cmp.Compare[string], 0, 1<<20, fakeOwner{}))
		})
	}
}
