package docs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPagesStayShort holds each page to the length its reader reads in
// one sitting (issues 24 and 45): a page that outgrows it wants
// splitting, not a larger budget. SECURITY.md is the reporting policy
// readers expect, its threat model a page of its own; operating.md
// gives the shared store and the metrics pages of their own; the
// performance page keeps only current figures, its history being git's.
func TestPagesStayShort(t *testing.T) {
	root := repoRoot(t)
	for page, most := range map[string]int{
		"README.md":                 300,
		"SECURITY.md":               120,
		"docs/operating.md":         650,
		"docs/performance.md":       400,
		"docs/internals.md":         150,
		"docs/threat-model.md":      460,
		"docs/shared-store.md":      380,
		"docs/metrics.md":           180,
		"docs/clients.md":           520,
		"docs/backends.md":          510,
		"docs/stay.md":              40,
		"docs/reference-backend.md": 150,
	} {
		raw, err := os.ReadFile(filepath.Join(root, page))
		require.NoError(t, err)
		assert.LessOrEqual(t, strings.Count(string(raw), "\n"), most, page)
	}
}
