// Package testdeps decides what a test does when a program it needs
// (redis-server, Chromium, curl, python3, Node) is missing. On a
// developer's machine the test skips, saying how to install the program.
// In CI it fails instead: a guarantee the docs cite must not pass
// untested because a package failed to install. CI is recognised by
// CI=true (as .ci/run and most CI services set it); HELPDESK_REQUIRE_DEPS,
// when set, overrides that either way (1 to require, 0 to allow skips).
package testdeps

import (
	"os"
	"strconv"
	"testing"
)

// Required reports whether a missing program fails the test rather than
// skips it.
func Required() bool {
	if v, ok := os.LookupEnv("HELPDESK_REQUIRE_DEPS"); ok && v != "" {
		on, err := strconv.ParseBool(v)
		return err != nil || on // a value we cannot read requires: fail safe
	}
	on, err := strconv.ParseBool(os.Getenv("CI"))
	return err == nil && on
}

// Missing ends the test for want of a program: it fails the test in CI
// (see Required) and skips it elsewhere, with the message in both cases.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if Required() {
		t.Fatalf("required in CI (CI=true or HELPDESK_REQUIRE_DEPS=1): "+format, args...)
		return
	}
	t.Skipf(format, args...)
}
