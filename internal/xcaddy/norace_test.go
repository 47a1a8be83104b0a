//go:build !race

package xcaddy_test

const raceEnabled = false
