package caddymodule_test

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// conditionalBackend answers as web frameworks do: every GET carries an
// ETag and a Last-Modified, and http.ServeContent evaluates the request's
// conditionals and ranges against them (304, 412, 206), as Express,
// Rails and Django do.
type conditionalBackend struct{ next http.Handler }

var backendModified = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func (c conditionalBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	c.next.ServeHTTP(rec, r)
	if rec.Code != http.StatusOK || r.Method != http.MethodGet {
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
		return
	}
	sum := sha256.Sum256(rec.Body.Bytes())
	w.Header().Set("Content-Type", rec.Header().Get("Content-Type"))
	w.Header().Set("Etag", `"`+hex.EncodeToString(sum[:8])+`"`)
	http.ServeContent(w, r, "", backendModified, bytes.NewReader(rec.Body.Bytes()))
}

// TestClientValidatorsStayOutOfWindowCalls: a client's validators and
// ranges describe its page, not the gateway's windows. Against a backend
// that honours them, a cursor page (or a _page answer) asked with them is
// still a 200 with the right records, carrying no validator of its own;
// no window call carries them. A request the gateway does not own keeps
// them, and gets the backend's 304 or 206.
func TestClientValidatorsStayOutOfWindowCalls(t *testing.T) {
	b := reference.New(reference.Config{Seed: 27, Records: 300})
	rec := &recorder{next: conditionalBackend{b}}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	c := gatewaytest.Start(t, `
http://:0 {
	helpdesk_gateway {
		backend_max_per_page 25
		cursor_endpoints     /calls
	}
	reverse_proxy {backend}
}
`, srv.URL)
	all := strIDs(b.IDs("calls"))
	future := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	past := backendModified.Add(-time.Hour).Format(http.TimeFormat)

	conditionals := []struct {
		name    string
		headers []string
		direct  int // what the backend answers such a request itself
	}{
		{"If-None-Match", []string{"If-None-Match", "*"}, http.StatusNotModified},
		{"If-Modified-Since", []string{"If-Modified-Since", future}, http.StatusNotModified},
		{"If-Match", []string{"If-Match", `"not-this"`}, http.StatusPreconditionFailed},
		{"If-Unmodified-Since", []string{"If-Unmodified-Since", past}, http.StatusPreconditionFailed},
		{"Range", []string{"Range", "bytes=0-9"}, http.StatusPartialContent},
		{"If-Range and Range", []string{"If-Range", backendModified.Format(http.TimeFormat), "Range", "bytes=5-"}, http.StatusPartialContent},
	}
	for _, tc := range conditionals {
		t.Run(tc.name, func(t *testing.T) {
			for _, page := range []struct {
				query string
				want  []string
			}{
				{"_perPage=10", all[:10]},
				{"_perPage=10&_cursor=" + cursorFor(all[41]), all[42:52]},
				{"_perPage=40&_cursor=" + cursorFor(all[100]), all[101:141]}, // several calls
				{"_page=3&_perPage=10", all[20:30]},
			} {
				rec.reset()
				a := get(t, c.URL+"/calls?"+page.query, tc.headers...)
				require.Equal(t, http.StatusOK, a.status, "%s: %s", page.query, a.body)
				assert.Equal(t, page.want, a.ids(t), page.query)
				for _, h := range []string{"Etag", "Last-Modified", "Accept-Ranges", "Content-Range"} {
					assert.Empty(t, a.header.Get(h), "a composed page carries no %s", h)
				}
				reqs := rec.requests()
				require.NotEmpty(t, reqs)
				for _, r := range reqs {
					for _, h := range []string{"If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since", "If-Range", "Range"} {
						assert.Empty(t, r.Header.Values(h), "window call %s carries %s", r.URL.RawQuery, h)
					}
				}
			}

			// Passed through: a list the gateway does not own here, and
			// a method it does not own.
			rec.reset()
			a := get(t, c.URL+"/phone_numbers?_page=1", tc.headers...)
			assert.Equal(t, tc.direct, a.status, "the backend saw the client's %s", tc.name)
			reqs := rec.requests()
			require.Len(t, reqs, 1)
			for i := 0; i < len(tc.headers); i += 2 {
				assert.Equal(t, tc.headers[i+1], reqs[0].Header.Get(tc.headers[i]))
			}
			rec.reset()
			req, err := http.NewRequest(http.MethodOptions, c.URL+"/calls", nil)
			require.NoError(t, err)
			for i := 0; i < len(tc.headers); i += 2 {
				req.Header.Set(tc.headers[i], tc.headers[i+1])
			}
			resp, err := gatewaytest.Client.Do(req)
			require.NoError(t, err)
			_ = resp.Body.Close()
			reqs = rec.requests()
			require.Len(t, reqs, 1)
			for i := 0; i < len(tc.headers); i += 2 {
				assert.Equal(t, tc.headers[i+1], reqs[0].Header.Get(tc.headers[i]), "OPTIONS keeps %s", tc.headers[i])
			}
		})
	}
}

// trailerBackend is the reference backend with HTTP trailers on every
// answer, and a 401 when asked with X-Deny.
type trailerBackend struct{ next http.Handler }

func (tb trailerBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	tb.next.ServeHTTP(rec, r)
	status := rec.Code
	body := rec.Body.Bytes()
	if r.Header.Get("X-Deny") != "" {
		status, body = http.StatusUnauthorized, []byte(`{"message":"denied"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Trailer", "X-Checksum")
	w.WriteHeader(status)
	_, _ = w.Write(body)
	sum := sha256.Sum256(body)
	w.Header().Set("X-Checksum", hex.EncodeToString(sum[:8]))
	w.Header().Set(http.TrailerPrefix+"X-Unannounced", "late")
}

// TestBackendTrailersAreNotPageHeaders: the trailers of a backend answer
// (its checksum of its own body) describe that answer: a composed page
// carries them neither as headers nor as trailers, nor announces them. A
// backend's non-2xx answer, which reaches the client as it came, keeps
// them as trailers.
func TestBackendTrailersAreNotPageHeaders(t *testing.T) {
	b := reference.New(reference.Config{Seed: 28, Records: 200})
	c := gatewaytest.StartBehind(t, fmt.Sprintf(gatewaySite, "backend_max_per_page 25"), trailerBackend{b})
	all := strIDs(b.IDs("calls"))

	for _, q := range []string{"_perPage=10", "_perPage=40&_cursor=" + cursorFor(all[30]), "_page=2&_perPage=5"} {
		resp, err := gatewaytest.Client.Get(c.URL + "/calls?" + q)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		_ = resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
		assert.NotEmpty(t, answer{body: body}.ids(t))
		for _, h := range []string{"X-Checksum", "X-Unannounced", "Trailer", http.TrailerPrefix + "X-Unannounced"} {
			assert.Empty(t, resp.Header.Values(h), "%s: no %s header", q, h)
		}
		assert.Empty(t, resp.Trailer, "%s: no trailers", q)
	}

	req, err := http.NewRequest(http.MethodGet, c.URL+"/calls?_perPage=10", nil)
	require.NoError(t, err)
	req.Header.Set("X-Deny", "1")
	resp, err := gatewaytest.Client.Do(req)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.JSONEq(t, `{"message":"denied"}`, string(body))
	assert.Empty(t, resp.Header.Get("X-Checksum"), "a trailer is not made a header")
	assert.NotEmpty(t, resp.Trailer.Get("X-Checksum"), "the backend's answer keeps its trailer")
}

// digestBackend adds to every answer the digests frameworks and proxies
// compute of the body they send: RFC 9530's Content-Digest and
// Repr-Digest, RFC 3230's Digest and the older Content-MD5.
type digestBackend struct{ next http.Handler }

func (d digestBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	d.next.ServeHTTP(rec, r)
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	sum := sha256.Sum256(rec.Body.Bytes())
	b64 := base64.StdEncoding.EncodeToString(sum[:])
	w.Header().Set("Content-Digest", "sha-256=:"+b64+":")
	w.Header().Set("Repr-Digest", "sha-256=:"+b64+":")
	w.Header().Set("Digest", "SHA-256="+b64)
	md := md5.Sum(rec.Body.Bytes())
	w.Header().Set("Content-MD5", base64.StdEncoding.EncodeToString(md[:]))
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// TestBackendDigestsAreNotPageHeaders: a digest of the backend's answer
// describes the bytes of its window, not the page composed from it; a
// client that checks it (RFC 9530) would refuse every page. Composed pages
// carry none; answers the gateway does not compose keep them.
func TestBackendDigestsAreNotPageHeaders(t *testing.T) {
	b := reference.New(reference.Config{Seed: 29, Records: 200})
	c := gatewaytest.StartBehind(t, fmt.Sprintf(gatewaySite, "backend_max_per_page 25"), digestBackend{b})
	all := strIDs(b.IDs("calls"))
	digests := []string{"Content-Digest", "Repr-Digest", "Digest", "Content-Md5"}
	for _, q := range []string{"_perPage=10", "_perPage=40&_cursor=" + cursorFor(all[30]), "_page=2&_perPage=5"} {
		a := get(t, c.URL+"/calls?"+q)
		require.Equal(t, http.StatusOK, a.status, string(a.body))
		for _, h := range digests {
			assert.Empty(t, a.header.Values(h), "%s: no %s of the backend's answer", q, h)
		}
	}
	a := get(t, c.URL+"/tickets?_perPage=10")
	require.Equal(t, http.StatusOK, a.status, string(a.body))
	for _, h := range digests {
		assert.NotEmpty(t, a.header.Get(h), "a passed-through answer keeps its %s", h)
	}
}
