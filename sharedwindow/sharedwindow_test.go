package sharedwindow

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRoundTrip: an answer decodes to what was encoded, less the headers
// a page never carries, and encodes to the same bytes whatever the order
// of its header map.
func TestRoundTrip(t *testing.T) {
	h := http.Header{"X-Total-Count": {"3"}, "Vary": {"Origin", "Accept"}, "Etag": {`"w"`}, "X-Secret": {"s"}}
	env := []byte(`{"data":,"total":3}`)
	b := Encode(h, map[string]bool{"X-Secret": true}, env, 8)
	a, ok := Decode(b)
	require.True(t, ok)
	assert.Equal(t, http.Header{"X-Total-Count": {"3"}, "Vary": {"Origin", "Accept"}}, a.Header)
	assert.Equal(t, string(env), a.Env)
	assert.Equal(t, 8, a.At)
	assert.Equal(t, b, Encode(a.Header, nil, []byte(a.Env), a.At))
}

// TestDecodeRefusesDamage: bytes that are not a whole encoding are no
// window.
func TestDecodeRefusesDamage(t *testing.T) {
	_, ok := Decode([]byte{Version, 1, 1, 'X', 1, 1, 'v', 0, 0, 0, 0})
	require.True(t, ok, "the damaged ones below, undamaged")
	for name, data := range map[string][]byte{
		"empty":           nil,
		"another version": {Version + 1, 1, 1, 'X', 1, 1, 'v', 0, 0, 0, 0},
		"cut":             {Version, 1, 1, 'X', 1, 1, 'v', 0, 0},
		"split past end":  {Version, 0, 0, 0, 0, 9},
		"huge count":      {Version, 0xff, 0xff, 0xff, 0xff, 0x0f},
		"header name":     {Version, 1, 3, 'X', ':', 'Y', 1, 1, 'v', 0, 0, 0, 0},
		"header value":    {Version, 1, 1, 'X', 1, 3, 'a', '\n', 'b', 0, 0, 0, 0},
	} {
		_, ok := Decode(data)
		assert.False(t, ok, name)
	}
}
