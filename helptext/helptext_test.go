package helptext

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/helpdesk-gateway/gateway/ticketfilter"
)

// TestTokens: lines of at most 78 columns, broken between tokens, the
// later ones indented, the text ending in a newline.
func TestTokens(t *testing.T) {
	assert.Equal(t, "a b\n", Tokens([]string{"a", "b"}, "  "))
	long := strings.Repeat("w ", 60)
	out := Words(long, "  ")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	assert.Greater(t, len(lines), 1)
	for i, l := range lines {
		assert.LessOrEqual(t, len(l), 78, l)
		if i > 0 {
			assert.True(t, strings.HasPrefix(l, "  w"), l)
		}
	}
	assert.Equal(t, strings.Fields(long), strings.Fields(out), "no word lost")
}

// TestCodes: a parameter's name, then its codes as "code meaning" items
// separated by commas.
func TestCodes(t *testing.T) {
	out := Codes("status", []ticketfilter.Code{{Code: "A", Meaning: "answered"}, {Code: "C", Meaning: "chatting"}})
	assert.Equal(t, "  status: A answered, C chatting\n", out)
}
