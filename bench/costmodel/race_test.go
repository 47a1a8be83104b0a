//go:build race

package costmodel

// raceEnabled: the race detector makes a walk of 1,000,000 records and the
// backend that serves it too slow for the suite; those run without it.
const raceEnabled = true
