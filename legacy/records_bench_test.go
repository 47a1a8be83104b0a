package legacy_test

import (
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/helpdesk-gateway/gateway/legacy"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// BenchmarkParseBody slices records and ids out of real reference-backend
// pages of 10, 100 and 1000 calls, and renders the page back. gjson3pass
// is the reading the one-pass scanner replaced, for a ratio in one run;
// reuse parses into one Body again and again, as a pool of Bodies does.
func BenchmarkParseBody(b *testing.B) {
	be := reference.New(reference.Config{Seed: 1, Records: 2000})
	for _, n := range []int{10, 100, 1000} {
		rec := httptest.NewRecorder()
		be.ServeHTTP(rec, httptest.NewRequest("GET", fmt.Sprintf("/calls?_sortField=id&_perPage=%d", n), nil))
		body := rec.Body.Bytes()
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := legacy.ParseBody(body, "", "id"); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("gjson3pass/records=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := legacy.ParseBodyGjson(body, "", "id"); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("reuse/records=%d", n), func(b *testing.B) {
			var p legacy.Body
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if err := p.Parse(body, "", "id"); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("render/records=%d", n), func(b *testing.B) {
			p, err := legacy.ParseBody(body, "", "id")
			if err != nil {
				b.Fatal(err)
			}
			buf := make([]byte, 0, len(body))
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				buf = p.AppendPage(buf[:0], p.Records)
			}
		})
	}
}
