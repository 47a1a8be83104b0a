//go:build !race

package xcaddy_test

// raceBuild: see race_test.go.
const raceBuild = false
