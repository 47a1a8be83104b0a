package docs

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPagesStayShort holds the front door and the performance page to
// the lengths a newcomer reads in one sitting (issue 24): a page that
// outgrows them wants splitting, and the performance page keeps only
// current figures, its history being git's.
func TestPagesStayShort(t *testing.T) {
	for page, most := range map[string]int{
		"../README.md":     300,
		"./performance.md": 490, // 400 until issue 40's "Cost as the list grows", 475 until PocketBase's figures
		"./internals.md":   150,
	} {
		raw, err := os.ReadFile(page)
		require.NoError(t, err)
		assert.LessOrEqual(t, strings.Count(string(raw), "\n"), most, page)
	}
}
