//go:build race

package caddymodule

// raceEnabled: the race detector drops a share of what sync.Pool is
// given, so allocation counts that rely on pools are not exact under it.
const raceEnabled = true

// RaceEnabled is the same, for the tests outside the package.
const RaceEnabled = true
