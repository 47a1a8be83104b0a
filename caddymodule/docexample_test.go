package caddymodule_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// docExample returns the fenced block that follows the line
// `<!-- example: name -->` in the README or a page under docs/, without
// its fences: the tests run the documentation's own text, so it cannot
// drift from the product. A name marks exactly one block in all of them.
func docExample(t testing.TB, name string) string {
	t.Helper()
	pages, err := filepath.Glob("../docs/*.md")
	require.NoError(t, err)
	marker := "<!-- example: " + name + " -->\n"
	var found []string
	var body string
	for _, page := range append([]string{"../README.md"}, pages...) {
		raw, err := os.ReadFile(page)
		require.NoError(t, err)
		text := string(raw)
		require.LessOrEqual(t, strings.Count(text, marker), 1, "%s: one block per name", page)
		_, rest, ok := strings.Cut(text, marker)
		if !ok {
			continue
		}
		found = append(found, page)
		fence, rest, ok := strings.Cut(rest, "\n")
		require.True(t, ok && strings.HasPrefix(fence, "```"), "%s: the line after %q opens a fenced block", page, strings.TrimSpace(marker))
		body, _, ok = strings.Cut(rest, "```\n")
		require.True(t, ok, "%s: the block after %q is closed", page, strings.TrimSpace(marker))
	}
	require.Len(t, found, 1, "%q marks one block in README.md and docs/*.md; found in %v", strings.TrimSpace(marker), found)
	return body
}
