package caddymodule

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCaptureRoomFromContentLength(t *testing.T) {
	for _, tc := range []struct {
		name          string
		contentLength string
		buf           []byte
		wantCap       int
	}{
		{"known length", "300", nil, 300},
		{"past max_body_size: no room made", "5000", nil, 0},
		{"not a number", "x", nil, 0},
		{"the buffer has room already", "100", make([]byte, 0, 512), 512},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCapture(1024, tc.buf)
			c.Header().Set("Content-Length", tc.contentLength)
			c.WriteHeader(http.StatusOK)
			assert.Equal(t, tc.wantCap, cap(c.body))
			n, err := c.Write([]byte("[]"))
			require.NoError(t, err)
			assert.Equal(t, 2, n)
			assert.Equal(t, "[]", string(c.body))
		})
	}
	// A length the backend claims makes no more room than a pooled buffer
	// before the bytes come.
	c := newCapture(1<<30, nil)
	c.Header().Set("Content-Length", strconv.Itoa(1<<30))
	c.WriteHeader(http.StatusOK)
	assert.Equal(t, maxPooledBuffer, cap(c.body))

	c = newCapture(4, nil)
	_, err := c.Write([]byte("12345"))
	assert.ErrorIs(t, err, errBodyTooLarge)
	assert.True(t, c.over)
}

func TestReleaseClearsAnswers(t *testing.T) {
	f := &fetcher{}
	small := &answerBuf{raw: make([]byte, 0, 64)}
	require.NoError(t, small.body.Parse([]byte(`[{"id":1},{"id":2}]`), "", "id"))
	f.answers = append(f.answers, small, &answerBuf{raw: make([]byte, 0, maxPooledBuffer+1)})
	f.release()
	assert.Empty(t, f.answers)
	assert.Equal(t, []string{"", ""}, small.body.IDs, "no id keeps an old answer alive")
	assert.Equal(t, [][]byte{nil, nil}, small.body.Records)

	p := pageBuffer(100)
	assert.Zero(t, len(*p))
	assert.GreaterOrEqual(t, cap(*p), 100)
	putPageBuffer(p)
}
