package reference

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

func BenchmarkNew(b *testing.B) {
	for _, n := range []int{20000, 100000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				New(Config{Seed: 1, Records: n})
			}
		})
	}
}

// discard is a ResponseWriter that keeps nothing, so the benchmarks
// measure the backend rather than a recorder's buffer.
type discard struct{ h http.Header }

func (d discard) Header() http.Header       { return d.h }
func (discard) Write(p []byte) (int, error) { return len(p), nil }
func (discard) WriteHeader(int)             {}

// BenchmarkPageByID serves page 500 of 100 records of a 100,000-record
// list in id order: the request the gateway makes.
func BenchmarkPageByID(b *testing.B) {
	be := New(Config{Seed: 1, Records: 100000})
	req := httptest.NewRequest(http.MethodGet, "/calls?_page=500&_perPage=100&_sortField=id&_sortDir=ASC", nil)
	w := discard{http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		be.ServeHTTP(w, req)
	}
}

// BenchmarkPageNewestFirst serves the same page in the default order,
// which sorts a copy of the list per request.
func BenchmarkPageNewestFirst(b *testing.B) {
	be := New(Config{Seed: 1, Records: 100000})
	req := httptest.NewRequest(http.MethodGet, "/calls?_page=500&_perPage=100", nil)
	w := discard{http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		be.ServeHTTP(w, req)
	}
}
