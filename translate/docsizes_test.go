package translate

import (
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDocumentedSizes: the sizes docs/operating.md gives operators for
// what readahead_memory counts are the ones the store counts, so that a
// field added to a list's object cannot leave the page behind.
func TestDocumentedSizes(t *testing.T) {
	raw, err := os.ReadFile("../docs/operating.md")
	require.NoError(t, err)
	for _, tc := range []struct {
		pattern string
		want    int64
	}{
		{`learned state, (\d+) bytes`, listBytes},
		{`samples, (\d+) bytes for the list`, positionsBytes},
		{`and (\d+) a sample plus its id`, sampleBytes},
		{`chain, (\d+) bytes a page`, chainBytes},
	} {
		m := regexp.MustCompile(tc.pattern).FindSubmatch(raw)
		require.NotNil(t, m, "docs/operating.md says %q", tc.pattern)
		got, err := strconv.ParseInt(string(m[1]), 10, 64)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got, "docs/operating.md: %s", tc.pattern)
	}
}
