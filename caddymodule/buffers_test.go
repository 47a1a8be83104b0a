package caddymodule

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/translate"
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

// TestCaptureIsReused: an answer buffer's capture and header map serve
// the next call emptied, and a client's response that took header values
// from the last call keeps them.
func TestCaptureIsReused(t *testing.T) {
	a := new(answerBuf)
	c := a.newCapture(1024)
	c.Header().Set("X-Backend", "first")
	c.WriteHeader(http.StatusTeapot)
	_, err := c.Write([]byte("[]"))
	require.NoError(t, err)
	client := http.Header{}
	for k, v := range c.header { // as the gateway reads an answer's headers
		client[k] = v
	}
	first := c.header
	a.raw = c.body

	c = a.newCapture(2048)
	assert.Empty(t, c.Header(), "no header of the last call")
	assert.Equal(t, reflect.ValueOf(first).Pointer(), reflect.ValueOf(c.Header()).Pointer(), "the same map")
	assert.Zero(t, c.status)
	assert.Empty(t, c.body)
	assert.Equal(t, int64(2048), c.limit)
	c.Header().Add("X-Backend", "second")
	assert.Equal(t, "first", client.Get("X-Backend"), "the client's value is its own")
}

// TestFetchAllocations counts the allocations of one backend call made
// through a next handler that allocates nothing, once the pools are warm:
// what the gateway itself spends on a call. The bound holds the savings of
// the fetcher's room, the pooled capture and the one-string request URI
// (16 before them; 8 after), of the pooled fetcher, and of Accept-Encoding
// set in the clone's own value (6 after).
func TestFetchAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts: the race detector drops pooled buffers at random; run without -race")
	}
	body := []byte(`[{"id":1},{"id":2},{"id":3}]`)
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		_, err := w.Write(body)
		return err
	})
	g := &Gateway{IDField: "id", MaxBodySize: 1 << 20, BackendSort: defaultBackendSort}
	r := httptest.NewRequest(http.MethodGet, "/calls?_perPage=2", nil)
	r.Header.Set("Accept", "application/json")
	r.Header.Set("Accept-Encoding", "gzip") // as most clients send it
	fetch := func() {
		f := newFetcher(g, r, next, "")
		if _, err := f.Fetch(r.Context(), translate.Window{Start: 0, Size: 3}); err != nil {
			t.Fatal(err)
		}
		f.free()
	}
	fetch()
	allocs := testing.AllocsPerRun(200, fetch)
	t.Logf("%.0f allocations per call", allocs)
	assert.LessOrEqual(t, allocs, 6.0)
	assert.Equal(t, []string{"gzip"}, r.Header.Values("Accept-Encoding"), "the sub-request's identity is its own clone's, never the client's")

	// A request as Caddy serves it carries vars and route groups, which
	// each call copies (subrequest.go): one context more, not one each.
	ctx := context.WithValue(r.Context(), caddyhttp.VarsCtxKey, map[string]any{"k": "v"})
	r = r.WithContext(context.WithValue(ctx, routeGroupKey, map[string]struct{}{"g": {}}))
	fetch()
	withMaps := testing.AllocsPerRun(200, fetch)
	t.Logf("%.0f allocations per call with vars and route groups", withMaps)
	assert.LessOrEqual(t, withMaps, allocs+5, "the two maps' copies (two allocations each) and one context")
}

// TestKeptAnswerIsOnlyRead: the page of an answer this request alone
// reads is written into the answer's own bytes; once Keep has handed the
// answer to a read-ahead window, which other requests read at once, its
// page is composed in a buffer and the answer's bytes stay as they came.
func TestKeptAnswerIsOnlyRead(t *testing.T) {
	const body = `[{"id":1},{"id":2},{"id":3},{"id":4}]`
	for _, keep := range []bool{false, true} {
		t.Run("kept="+strconv.FormatBool(keep), func(t *testing.T) {
			a := &answerBuf{raw: []byte(body)}
			require.NoError(t, a.body.Parse(a.raw, "", "id"))
			f := &fetcher{answers: []*answerBuf{a}, read: []*answerBuf{a}}
			if keep {
				src, _ := f.Keep(0)
				require.Same(t, a, src)
			}
			out, buf := a.page(a.body.Records[1:3])
			assert.Equal(t, `[{"id":2},{"id":3}]`, string(out))
			assert.Equal(t, keep, buf != nil, "a kept answer's page is composed in a buffer")
			assert.Equal(t, keep, string(a.raw) == body, "a kept answer's bytes are never written")
			if buf != nil {
				putPageBuffer(buf)
			}
		})
	}
}
