//go:build !race

package caddymodule

const raceEnabled = false

// RaceEnabled is the same, for the tests outside the package.
const RaceEnabled = false
