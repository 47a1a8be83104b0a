package jsonstr

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAppend(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", `""`},
		{"61", `"61"`},
		{`a"b\c`, `"a\"b\\c"`},
		{"tab\tnl\n\x00\x1f", `"tab\u0009nl\u000a\u0000\u001f"`},
		{"</script>&", `"</script>&"`},
		{"żółw ✓", `"żółw ✓"`},
		{"bad\xffutf8", `"bad\ufffdutf8"`},
		{"\xe2\x82", `"\ufffd\ufffd"`}, // a cut rune: each byte replaced
	} {
		t.Run(tc.in, func(t *testing.T) {
			got := Append([]byte("x"), tc.in)
			assert.Equal(t, "x"+tc.want, string(got))
			var back string
			require.NoError(t, json.Unmarshal(got[1:], &back), "always valid JSON")
		})
	}
}
