package caller

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkList names the list of a cursor request as a browser or an
// API client sends it: a key, a cookie, a language, a trace, the client
// address the server resolved. It is paid on every cursor request, so it
// must stay a small fraction of a page (see caddymodule's
// BenchmarkServeCursorPage).
func BenchmarkList(b *testing.B) {
	r := httptest.NewRequest(http.MethodGet, "/calls?_perPage=10&_cursor=MTIz", nil)
	r.RemoteAddr = "203.0.113.7:51234"
	for _, kv := range [][2]string{
		{"User-Agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36"},
		{"Accept", "application/json"},
		{"Accept-Encoding", "gzip, br"},
		{"Accept-Language", "en-GB,en;q=0.9"},
		{"Authorization", "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZ2VudC00MiJ9.c2lnbmF0dXJl"},
		{"Cookie", "session=6f1c2d9e; theme=dark"},
		{"Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
		{"X-Request-Id", "b1946ac9-2b5c-4d5e-9f0a-3c1e8f2d7a61"},
	} {
		r.Header.Set(kv[0], kv[1])
	}
	f := Facts{Client: "203.0.113.7"}
	b.ReportAllocs()
	for b.Loop() {
		_ = List(r, "status=open", f)
	}
}
