package caddymodule_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// readmeExample returns the fenced block that follows the line
// `<!-- example: name -->` in the README, without its fences: the tests
// run the README's own text, so the documentation cannot drift from the
// product.
func readmeExample(t testing.TB, name string) string {
	t.Helper()
	raw, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	marker := "<!-- example: " + name + " -->\n"
	_, rest, ok := strings.Cut(string(raw), marker)
	require.True(t, ok, "README.md has no %q", strings.TrimSpace(marker))
	fence, rest, ok := strings.Cut(rest, "\n")
	require.True(t, ok && strings.HasPrefix(fence, "```"), "the line after %q opens a fenced block", strings.TrimSpace(marker))
	body, _, ok := strings.Cut(rest, "```\n")
	require.True(t, ok, "the block after %q is closed", strings.TrimSpace(marker))
	require.Equal(t, 1, strings.Count(string(raw), marker), "one block per name")
	return body
}
