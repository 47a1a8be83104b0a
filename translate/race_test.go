//go:build race

package translate

// raceEnabled: the race detector changes how the heap holds small
// allocations, so heap measures against counted sizes are not the
// program's under it.
const raceEnabled = true
