package caddymodule_test

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule"
	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
)

// recorder is a backend wrapper that remembers what reached the backend.
type recorder struct {
	next http.Handler
	mu   sync.Mutex
	seen []*http.Request
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec.mu.Lock()
	rec.seen = append(rec.seen, r.Clone(r.Context()))
	rec.mu.Unlock()
	rec.next.ServeHTTP(w, r)
}

func (rec *recorder) requests() []*http.Request {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]*http.Request(nil), rec.seen...)
}

func (rec *recorder) reset() {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.seen = nil
}

// answer is a client's view of one response.
type answer struct {
	status int
	header http.Header
	body   []byte
}

func get(t testing.TB, rawURL string, headers ...string) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, rawURL, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := gatewaytest.Client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return answer{status: resp.StatusCode, header: resp.Header, body: body}
}

// ids returns the ids of a page body: a JSON array, or the array at path.
func (a answer) ids(t testing.TB, path ...string) []string {
	t.Helper()
	var records []map[string]json.RawMessage
	if len(path) > 0 {
		var env map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(a.body, &env), string(a.body))
		require.NoError(t, json.Unmarshal(env[path[0]], &records))
	} else {
		require.NoError(t, json.Unmarshal(a.body, &records), string(a.body))
	}
	out := make([]string, 0, len(records))
	for _, r := range records {
		out = append(out, strings.Trim(string(r["id"]), `"`))
	}
	return out
}

// message returns the message of a JSON error answer, checking its shape.
func (a answer) message(t testing.TB) string {
	t.Helper()
	require.Equal(t, "application/json", a.header.Get("Content-Type"))
	var e struct{ Message string }
	require.NoError(t, json.Unmarshal(a.body, &e), string(a.body))
	require.NotEmpty(t, e.Message)
	return e.Message
}

func cursorFor(id string) string {
	b, _ := json.Marshal(map[string]string{"id": id})
	return base64.StdEncoding.EncodeToString(b)
}

// walkCursor follows next_page_cursor from the first page to the last and
// returns every id served. Every answer must be a 200.
func walkCursor(t testing.TB, base, path string, perPage int, extra string) (ids []string, pages int) {
	t.Helper()
	return walkCursorRetrying(t, base, path, perPage, extra, 0)
}

// walkCursorRetrying is walkCursor for a client that, as the gateway's 503
// asks, repeats a request refused for max_subrequests, up to retries times
// per page. Only tests whose backend changes at every call need it: there
// a page can outrun its backend-call budget, which is the designed answer,
// and the retry finds the place the first attempt taught the index.
func walkCursorRetrying(t testing.TB, base, path string, perPage int, extra string, retries int) (ids []string, pages int) {
	t.Helper()
	return walkCursorEach(t, base, path, perPage, extra, retries, nil)
}

// walkCursorSettled is walkCursor for a test that counts what reads ahead
// of the walker save (calls, records fetched or stepped through): before
// each page it lets the reads ahead in flight end. A page that gets to a
// window's end before the read ahead of it waits a bound (a few of the
// list's reads, from 20 ms), then reads for itself, by design: on a
// loaded machine, calls the count would take for the windows'. Only for
// a walk no other request runs beside: Engine.WaitAhead must not race the
// start of a read (sync.WaitGroup), which a concurrent page may make.
func walkCursorSettled(t testing.TB, base, path string, perPage int, extra string) (ids []string, pages int) {
	t.Helper()
	return walkCursorEach(t, base, path, perPage, extra, 0, caddymodule.SettleReadsAhead)
}

// walkCursorEach is walkCursorRetrying calling before, when not nil,
// before each page.
func walkCursorEach(t testing.TB, base, path string, perPage int, extra string, retries int, before func()) (ids []string, pages int) {
	t.Helper()
	cursor := ""
	for {
		if before != nil {
			before()
		}
		q := url.Values{}
		q.Set("_perPage", itoa(perPage))
		if cursor != "" {
			q.Set("_cursor", cursor)
		}
		u := base + path + "?" + q.Encode()
		if extra != "" {
			u += "&" + extra
		}
		a := get(t, u)
		for try := 0; try < retries && a.status == http.StatusServiceUnavailable; try++ {
			require.Equal(t, "1", a.header.Get("Retry-After"), string(a.body))
			a = get(t, u)
		}
		require.Equal(t, http.StatusOK, a.status, string(a.body))
		page := a.ids(t)
		pages++
		cursor = a.header.Get("next_page_cursor")
		if cursor == "" {
			return append(ids, page...), pages
		}
		require.Len(t, page, perPage, "a page before the last is full")
		require.Equal(t, cursorFor(page[len(page)-1]), cursor)
		ids = append(ids, page...)
		require.Less(t, pages, 100000)
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func decodeJSON(resp *http.Response, v any) error {
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}
