package caddymodule

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// BenchmarkServeCursorPage serves one cursor page through the handler, the
// next handler being the reference backend in process (no network), so
// the figure is the gateway's own work plus the backend's page.
func BenchmarkServeCursorPage(b *testing.B) {
	ctx, cancel := caddy.NewContext(caddy.Context{Context: b.Context()})
	defer cancel()
	g := new(Gateway)
	if err := g.Provision(ctx); err != nil {
		b.Fatal(err)
	}
	g.logger = zap.NewNop() // as at the default level: no debug line per page
	be := reference.New(reference.Config{Seed: 1, Records: 20000})
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		be.ServeHTTP(w, r)
		return nil
	})
	ids := be.IDs("calls")
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("perPage=%d", n), func(b *testing.B) {
			target := "/calls?_perPage=" + strconv.Itoa(n) + "&_cursor=" + cursor.Encode(strconv.FormatInt(ids[5000], 10))
			// Warm the index so the figure is a steady state.
			if err := g.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, target, nil), next); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				if err := g.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil), next); err != nil || w.Code != http.StatusOK {
					b.Fatal(err, w.Code)
				}
			}
		})
	}
}

// BenchmarkServeCursorWalk follows next_page_cursor through a list of
// 20,000 records, as a client's walk does, starting over at the end: each
// page's cursor is new, the index knows it from the page before. Besides
// allocations it reports the bytes of the backend answers read and of the
// page written, per page: the buffers a page holds while in flight.
func BenchmarkServeCursorWalk(b *testing.B) {
	ctx, cancel := caddy.NewContext(caddy.Context{Context: b.Context()})
	defer cancel()
	g := new(Gateway)
	if err := g.Provision(ctx); err != nil {
		b.Fatal(err)
	}
	g.logger = zap.NewNop()
	be := reference.New(reference.Config{Seed: 1, Records: 20000})
	var answered int
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		cw := &countingWriter{ResponseWriter: w}
		be.ServeHTTP(cw, r)
		answered += cw.n
		return nil
	})
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("perPage=%d", n), func(b *testing.B) {
			first := "/calls?_perPage=" + strconv.Itoa(n)
			target := first
			calls0 := be.Requests("calls")
			answered = 0
			written, cursors := 0, 0
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				if err := g.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil), next); err != nil || w.Code != http.StatusOK {
					b.Fatal(err, w.Code)
				}
				written += w.Body.Len()
				target = first
				if c := w.Header()[nextPageCursor]; len(c) == 1 { // as the gateway spells it, not canonical
					target = first + "&_cursor=" + url.QueryEscape(c[0])
					cursors++
				}
			}
			if cursors < b.N*9/10 {
				b.Fatalf("%d cursors in %d pages: the walk did not follow them", cursors, b.N)
			}
			b.ReportMetric(float64(be.Requests("calls")-calls0)/float64(b.N), "calls/page")
			b.ReportMetric(float64(answered)/float64(b.N), "answer-B/page")
			b.ReportMetric(float64(written)/float64(b.N), "page-B/page")
		})
	}
}

// countingWriter counts the body bytes written through it.
type countingWriter struct {
	http.ResponseWriter
	n int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.ResponseWriter.Write(p)
	c.n += n
	return n, err
}
