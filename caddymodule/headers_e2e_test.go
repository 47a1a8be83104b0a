package caddymodule_test

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// chattyBackend is the reference backend with headers of its own on every
// answer, and gzip whenever a request accepts it, as many backends do.
type chattyBackend struct {
	next    http.Handler
	calls   atomic.Int64
	gzipped atomic.Int64
}

func (c *chattyBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := c.calls.Add(1)
	h := w.Header()
	h.Set("X-Request-Id", "req-"+strconv.FormatInt(n, 10))
	h.Add("Set-Cookie", "session=abc")
	h.Set("Cache-Control", "private, max-age=5")
	h.Set("Etag", `"page-`+strconv.FormatInt(n, 10)+`"`)
	h.Set("Last-Modified", "Wed, 01 Jan 2025 00:00:00 GMT")
	if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		c.next.ServeHTTP(w, r)
		return
	}
	c.gzipped.Add(1)
	rec := httptest.NewRecorder()
	c.next.ServeHTTP(rec, r)
	for k, v := range rec.Header() {
		h[k] = v
	}
	h.Del("Content-Length")
	h.Set("Content-Encoding", "gzip")
	w.WriteHeader(rec.Code)
	zw := gzip.NewWriter(w)
	_, _ = zw.Write(rec.Body.Bytes())
	_ = zw.Close()
}

// TestOneSetOfHeaders: a page stitched from several backend calls reaches
// the client with each backend header once (from the call the page starts
// in), without the page-describing Etag and Last-Modified, with its own
// Content-Length; sub-requests ask for identity even when the client
// accepts gzip, and Caddy's encode compresses the client's answer once.
func TestOneSetOfHeaders(t *testing.T) {
	b := reference.New(reference.Config{Seed: 12, Records: 300})
	backend := &chattyBackend{next: b}
	srv := httptest.NewServer(backend)
	t.Cleanup(srv.Close)
	c := gatewaytest.Start(t, `
http://:0 {
	encode gzip
	helpdesk_gateway {
		backend_max_per_page 25
	}
	reverse_proxy {backend}
}
`, srv.URL)
	all := strIDs(b.IDs("calls"))

	for _, acceptGzip := range []bool{false, true} {
		t.Run("gzip="+strconv.FormatBool(acceptGzip), func(t *testing.T) {
			before := backend.calls.Load()
			req, err := http.NewRequest(http.MethodGet, c.URL+"/calls?_perPage=60&_cursor="+cursorFor(all[100]), nil)
			require.NoError(t, err)
			// Set either way, or Go's client asks for gzip and hides it.
			req.Header.Set("Accept-Encoding", map[bool]string{false: "identity", true: "gzip"}[acceptGzip])
			resp, err := gatewaytest.Client.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Greater(t, backend.calls.Load()-before, int64(2), "a page of 60 over backend pages of 25 takes several calls")
			assert.Zero(t, backend.gzipped.Load(), "sub-requests ask for identity")

			for k, v := range resp.Header {
				assert.Len(t, v, 1, "header %s appears once: %v", k, v)
			}
			assert.Equal(t, "session=abc", resp.Header.Get("Set-Cookie"))
			assert.Equal(t, "private, max-age=5", resp.Header.Get("Cache-Control"))
			assert.True(t, strings.HasPrefix(resp.Header.Get("X-Request-Id"), "req-"))
			assert.Empty(t, resp.Header.Get("Etag"), "the backend's Etag describes its page, not ours")
			assert.Empty(t, resp.Header.Get("Last-Modified"))
			assert.Equal(t, exactCursor(all[160]), resp.Header.Get("next_page_cursor"))

			var body io.Reader = resp.Body
			if acceptGzip {
				assert.Equal(t, "gzip", resp.Header.Get("Content-Encoding"))
				zr, err := gzip.NewReader(resp.Body)
				require.NoError(t, err)
				body = zr
			} else {
				assert.Empty(t, resp.Header.Get("Content-Encoding"))
			}
			raw, err := io.ReadAll(body)
			require.NoError(t, err)
			if !acceptGzip {
				assert.Equal(t, strconv.Itoa(len(raw)), resp.Header.Get("Content-Length"))
			}
			a := answer{status: resp.StatusCode, header: resp.Header, body: raw}
			assert.Equal(t, all[101:161], a.ids(t))
		})
	}
}
