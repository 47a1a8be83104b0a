package caddymodule

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

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
