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

	"github.com/helpdesk-gateway/gateway/legacy"
	"github.com/helpdesk-gateway/gateway/translate"
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
	be := legacy.New(legacy.Config{Seed: 1, Records: 20000})
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		be.ServeHTTP(w, r)
		return nil
	})
	ids := be.IDs("calls")
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("perPage=%d", n), func(b *testing.B) {
			target := "/calls?_perPage=" + strconv.Itoa(n) + "&_cursor=" + translate.EncodeCursor(strconv.FormatInt(ids[5000], 10))
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
// page's cursor is new, the index knows it from the page before.
func BenchmarkServeCursorWalk(b *testing.B) {
	ctx, cancel := caddy.NewContext(caddy.Context{Context: b.Context()})
	defer cancel()
	g := new(Gateway)
	if err := g.Provision(ctx); err != nil {
		b.Fatal(err)
	}
	g.logger = zap.NewNop()
	be := legacy.New(legacy.Config{Seed: 1, Records: 20000})
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		be.ServeHTTP(w, r)
		return nil
	})
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("perPage=%d", n), func(b *testing.B) {
			first := "/calls?_perPage=" + strconv.Itoa(n)
			target := first
			calls0 := be.Requests("calls")
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				if err := g.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil), next); err != nil || w.Code != http.StatusOK {
					b.Fatal(err, w.Code)
				}
				target = first
				if c := w.Header().Get(nextPageCursor); c != "" {
					target = first + "&_cursor=" + url.QueryEscape(c)
				}
			}
			b.ReportMetric(float64(be.Requests("calls")-calls0)/float64(b.N), "calls/page")
		})
	}
}
