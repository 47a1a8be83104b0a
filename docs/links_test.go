package docs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDocumentationLinksResolve: every relative link in README.md,
// SECURITY.md and docs/*.md names a file that exists and, with an
// #anchor, a heading of it.
func TestDocumentationLinksResolve(t *testing.T) {
	root := repoRoot(t)
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, pages)
	pages = append([]string{filepath.Join(root, "README.md"), filepath.Join(root, "SECURITY.md")}, pages...)
	links := 0
	for _, page := range pages {
		t.Run(filepath.Base(page), func(t *testing.T) {
			raw, err := os.ReadFile(page)
			require.NoError(t, err)
			links += len(Links(string(raw)))
			broken, err := CheckLinks(page)
			require.NoError(t, err)
			assert.Empty(t, broken)
		})
	}
	assert.Greater(t, links, 50, "the pages link to each other")
}

func TestSlug(t *testing.T) {
	for _, tc := range []struct{ heading, slug string }{
		{"Cursor paging", "cursor-paging"},
		{"Paging loops: curl, Python, JavaScript, Go", "paging-loops-curl-python-javascript-go"},
		{"The codes: LiveAgent's", "the-codes-liveagents"},
		{"The admin endpoint: `GET /helpdesk/endpoints`", "the-admin-endpoint-get-helpdeskendpoints"},
		{"Verify: what only `verify --backend` can catch", "verify-what-only-verify---backend-can-catch"},
		{"In one process: the gateway beside a plain reverse_proxy", "in-one-process-the-gateway-beside-a-plain-reverse_proxy"},
		{"See [the docs](x.md) now", "see-the-docs-now"},
		{"Ünïcode 1.2", "ünïcode-12"},
	} {
		assert.Equal(t, tc.slug, Slug(tc.heading), tc.heading)
	}
}

// TestCheckLinksFindsBrokenOnes runs the check on pages made for it: each
// kind of broken link is reported, and nothing else is.
func TestCheckLinksFindsBrokenOnes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
		return path
	}
	write("docs/b.md", "# B\n\n## A section: `x`\n\n## Twice\n\n## Twice\n\n```\n## not a heading\n```\n")
	write("Caddyfile", "")
	for _, tc := range []struct {
		name, link string
		broken     bool
	}{
		{"a file", "docs/b.md", false},
		{"a file that is not Markdown", "Caddyfile", false},
		{"a heading", "docs/b.md#a-section-x", false},
		{"a repeated heading, numbered", "docs/b.md#twice-1", false},
		{"a heading of the page itself", "#top", false},
		{"an absolute URL", "https://example.com/nowhere.md#x", false},
		{"a missing file", "docs/c.md", true},
		{"a missing heading", "docs/b.md#a-section", true},
		{"a heading inside a code block", "docs/b.md#not-a-heading", true},
		{"a repeated heading numbered past its count", "docs/b.md#twice-2", true},
		{"a missing heading of the page itself", "#bottom", true},
		{"an anchor into a file that is not Markdown", "Caddyfile#x", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page := write("README.md", "# Top\n\nSee [it]("+tc.link+").\n\n`[in code](nowhere.md)`\n")
			broken, err := CheckLinks(page)
			require.NoError(t, err)
			if tc.broken {
				assert.Len(t, broken, 1, broken)
			} else {
				assert.Empty(t, broken)
			}
		})
	}
}

// TestLinksAcrossLines: a link whose text wraps onto the next line, as
// prose does, is found; one in a code span or block is not.
func TestLinksAcrossLines(t *testing.T) {
	text := "See [Performance: offset\nbackends](performance.md#offset-backends) and `[x](code.md)`.\n\n```\n[y](block.md)\n```\n[z](z.md)\n"
	assert.Equal(t, []string{"performance.md#offset-backends", "z.md"}, Links(text))
}
