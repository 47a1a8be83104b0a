package testdeps

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestRequired: CI=true requires what tests need; HELPDESK_REQUIRE_DEPS
// overrides it either way; a developer's machine (neither set) skips.
func TestRequired(t *testing.T) {
	for _, tc := range []struct {
		ci, require string
		want        bool
	}{
		{"", "", false},
		{"true", "", true},
		{"1", "", true},
		{"false", "", false},
		{"", "1", true},
		{"true", "0", false},
		{"", "yes please", true},
	} {
		t.Run(tc.ci+"/"+tc.require, func(t *testing.T) {
			t.Setenv("CI", tc.ci)
			t.Setenv("HELPDESK_REQUIRE_DEPS", tc.require)
			assert.Equal(t, tc.want, Required())
		})
	}
}

// fakeT records how Missing ended a test.
type fakeT struct {
	testing.TB
	failed, skipped bool
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Fatalf(string, ...any) { f.failed = true }
func (f *fakeT) Skipf(string, ...any)  { f.skipped = true }

// TestMissing: a missing program fails the test in CI and skips it on a
// developer's machine.
func TestMissing(t *testing.T) {
	t.Setenv("HELPDESK_REQUIRE_DEPS", "1")
	ci := &fakeT{}
	Missing(ci, "no %s", "redis-server")
	assert.True(t, ci.failed)
	assert.False(t, ci.skipped)

	t.Setenv("HELPDESK_REQUIRE_DEPS", "0")
	dev := &fakeT{}
	Missing(dev, "no %s", "redis-server")
	assert.False(t, dev.failed)
	assert.True(t, dev.skipped)
}
