package caddymodule_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
)

// faultSite puts the gateway in front of reverse_proxy with options for
// both (gateway first).
const faultSite = `
http://:0 {
	helpdesk_gateway {
		%s
	}
	reverse_proxy {backend} {
		%s
	}
}
`

// listBackend serves the same list on every path, paged by _page and
// _perPage in the order given: records {"id":<token>,"n":<i>} where each
// token is a JSON value written as is, so a test controls the exact bytes
// of every id.
type listBackend struct{ tokens []string }

func numericList(n int) *listBackend {
	b := &listBackend{tokens: make([]string, n)}
	for i := range b.tokens {
		b.tokens[i] = strconv.Itoa(10 + 3*i)
	}
	return b
}

func (b *listBackend) ids() []string {
	out := make([]string, len(b.tokens))
	for i, tok := range b.tokens {
		var s string
		if json.Unmarshal([]byte(tok), &s) != nil {
			s = tok // a number as written
		}
		out[i] = s
	}
	return out
}

func (b *listBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	page, _ := strconv.Atoi(q.Get("_page"))
	size, _ := strconv.Atoi(q.Get("_perPage"))
	if page < 1 || size < 1 {
		page, size = 1, len(b.tokens)
	}
	from := min((page-1)*size, len(b.tokens))
	to := min(from+size, len(b.tokens))
	var sb strings.Builder
	sb.WriteByte('[')
	for i := from; i < to; i++ {
		if i > from {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"id":%s,"n":%d}`, b.tokens[i], i)
	}
	sb.WriteByte(']')
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(sb.String()))
}

// faulty passes backend calls to next, except that once armed every call
// from the from-th on (counted from arming) gets the fault instead: a
// backend that breaks in the middle of a page and stays broken, so that a
// transport retry cannot hide the fault. It records every query.
type faulty struct {
	next http.Handler

	mu      sync.Mutex
	calls   int
	from    int // 0: not armed
	fault   http.HandlerFunc
	queries []string
}

func (f *faulty) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.calls++
	f.queries = append(f.queries, r.URL.RawQuery)
	var fault http.HandlerFunc
	if f.from > 0 && f.calls >= f.from {
		fault = f.fault
	}
	f.mu.Unlock()
	if fault != nil {
		fault(w, r)
		return
	}
	f.next.ServeHTTP(w, r)
}

// arm makes every call from the from-th (1-based, counted from now) get
// fault; from 0 disarms.
func (f *faulty) arm(from int, fault http.HandlerFunc) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls, f.from, f.fault, f.queries = 0, from, fault, nil
}

func (f *faulty) seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.queries...)
}

// startFaulty runs a Caddy with the gateway (options gw) and
// reverse_proxy (options rp) in front of a faulty over next, with the
// gateway's warnings written as JSON to a file the test reads.
func startFaulty(t *testing.T, next http.Handler, gw, rp string) (*gatewaytest.Caddy, *faulty, func() []map[string]any) {
	t.Helper()
	f := &faulty{next: next}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	c, logs := startLogged(t, fmt.Sprintf(faultSite, gw, rp), srv.URL, "WARN")
	return c, f, logs
}

// when names where in a page a fault strikes: the only call of a page of
// 10, or the second call of a page of 60 over backend pages of at most 25.
var when = []struct {
	name    string
	query   string
	from    int
	atLeast int // backend calls the page makes before it can fail
}{
	{"first call", "_perPage=10", 1, 1},
	{"middle of a multi-call page", "_perPage=60", 2, 2},
}

// assertNoPage checks that an answer is the gateway's JSON error, whole,
// and nothing of a page.
func assertNoPage(t *testing.T, a answer) string {
	t.Helper()
	msg := a.message(t)
	var e map[string]any
	require.NoError(t, json.Unmarshal(a.body, &e))
	assert.Len(t, e, 1, "only a message: %s", a.body)
	assert.Empty(t, a.header.Values("next_page_cursor"))
	assert.Equal(t, strconv.Itoa(len(a.body)), a.header.Get("Content-Length"))
	return msg
}

// assertServing checks the gateway still serves a correct page.
func assertServing(t *testing.T, c *gatewaytest.Caddy, f *faulty, b *listBackend) {
	t.Helper()
	f.arm(0, nil)
	a := get(t, c.URL+"/calls?_perPage=60&_cursor="+cursorFor(b.ids()[100]))
	require.Equal(t, http.StatusOK, a.status, string(a.body))
	assert.Equal(t, b.ids()[101:161], a.ids(t))
}

func TestBackendStatusReachesTheClientAsItCame(t *testing.T) {
	b := numericList(400)
	c, f, _ := startFaulty(t, b, "backend_max_per_page 25", "")
	for _, answer := range []struct {
		name   string
		status int
		header map[string]string
		body   string
	}{
		{"401", http.StatusUnauthorized, map[string]string{"WWW-Authenticate": `Basic realm="helpdesk"`}, `{"message":"bad api key"}`},
		{"429", http.StatusTooManyRequests, map[string]string{"Retry-After": "7", "X-RateLimit-Remaining": "0"}, `{"message":"slow down"}`},
		{"503 in text", http.StatusServiceUnavailable, map[string]string{"Retry-After": "120", "Content-Type": "text/plain"}, "down for maintenance\n"},
		{"404 empty", http.StatusNotFound, nil, ""},
	} {
		for _, w := range when {
			t.Run(answer.name+" at "+w.name, func(t *testing.T) {
				f.arm(w.from, func(rw http.ResponseWriter, r *http.Request) {
					for k, v := range answer.header {
						rw.Header().Set(k, v)
					}
					rw.WriteHeader(answer.status)
					_, _ = rw.Write([]byte(answer.body))
				})
				a := get(t, c.URL+"/calls?"+w.query)
				assert.GreaterOrEqual(t, len(f.seen()), w.atLeast)
				require.Equal(t, answer.status, a.status)
				assert.Equal(t, answer.body, string(a.body), "the body as it came, nothing of a page")
				for k, v := range answer.header {
					assert.Equal(t, v, a.header.Get(k), k)
				}
				assert.Equal(t, strconv.Itoa(len(answer.body)), a.header.Get("Content-Length"))
				assert.Empty(t, a.header.Values("next_page_cursor"))
				assertServing(t, c, f, b)
			})
		}
	}
}

func TestUnusableBackendAnswers(t *testing.T) {
	b := numericList(400)
	c, f, logs := startFaulty(t, b, "backend_max_per_page 25\n\t\tmax_body_size 4KiB", "")
	const marker = "BODY-MARKER"
	for _, tc := range []struct {
		name, body, want string
	}{
		{"not JSON", "<html>" + marker + "</html>", "the body is not JSON"},
		{"truncated JSON", `[{"id":1,"note":"` + marker, "the body is not JSON"},
		{"empty", "", "the body is not JSON"},
		{"no records array", `{"error":"` + marker + `"}`, "not an array of records"},
		{"envelope without records_path", `{"data":[{"id":1,"note":"` + marker + `"}]}`, "set records_path data to read"},
		{"record not an object", `[1,2]`, "record 0 is not an object"},
		{"record without id", `[{"note":"` + marker + `"}]`, `record 0 has no id at "id"`},
		{"id neither string nor number", `[{"id":null,"note":"` + marker + `"}]`, "neither a string nor a number"},
		{"id not a whole number", `[{"id":"x7","note":"` + marker + `"}]`, "not a whole number"},
		{"ids out of order", `[{"id":50,"note":"` + marker + `"},{"id":40}]`, "ids out of order"},
		{"ids repeated", `[{"id":50,"note":"` + marker + `"},{"id":50}]`, "ids out of order"},
		{"more records than asked", "[" + strings.Repeat(`{"id":1},`, 70) + `{"id":2}]`, "records for a page of"},
		{"larger than max_body_size", `[{"id":1,"note":"` + marker + strings.Repeat("x", 5000) + `"}]`, "larger than max_body_size (4096 bytes)"},
	} {
		for _, w := range when {
			t.Run(tc.name+" at "+w.name, func(t *testing.T) {
				f.arm(w.from, func(rw http.ResponseWriter, r *http.Request) {
					rw.Header().Set("Content-Type", "application/json")
					_, _ = rw.Write([]byte(tc.body))
				})
				before := len(logs())
				a := get(t, c.URL+"/calls?apikey=s3cret&"+w.query)
				queries := f.seen()
				assert.GreaterOrEqual(t, len(queries), w.atLeast)
				require.Equal(t, http.StatusBadGateway, a.status, string(a.body))
				assert.Contains(t, assertNoPage(t, a), tc.want)

				var entries []map[string]any
				require.Eventually(t, func() bool {
					entries = logs()[before:]
					return len(entries) > 0
				}, 2*time.Second, 10*time.Millisecond, "a warning is logged")
				require.Len(t, entries, 1)
				e := entries[0]
				assert.Equal(t, "warn", e["level"])
				assert.Equal(t, "unusable backend answer", e["msg"])
				assert.Equal(t, "/calls", e["endpoint"])
				assert.Equal(t, strings.Replace(queries[len(queries)-1], "s3cret", "REDACTED", 1), e["backend_query"],
					"the query of the call that failed, credentials redacted")
				assert.Contains(t, e["error"], tc.want)
				line, _ := json.Marshal(e)
				assert.NotContains(t, string(line), marker, "no body in the log")
				assert.NotContains(t, string(line), "s3cret")
				assertServing(t, c, f, b)
			})
		}
	}
}

func TestBackendDownOrSlow(t *testing.T) {
	t.Run("down", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		addr := srv.URL
		srv.Close()
		c := gatewaytest.Start(t, fmt.Sprintf(faultSite, "", ""), addr)
		a := get(t, c.URL+"/calls?_perPage=5")
		require.Equal(t, http.StatusBadGateway, a.status, string(a.body))
		assert.Contains(t, assertNoPage(t, a), "the backend did not answer")
	})

	b := numericList(400)
	c, f, logs := startFaulty(t, b, "backend_max_per_page 25", "transport http {\n\t\t\tresponse_header_timeout 300ms\n\t\t}")
	for _, tc := range []struct {
		name   string
		status int
		want   string
		fault  http.HandlerFunc
	}{
		{"connection closed without an answer", http.StatusBadGateway, "the backend did not answer", func(http.ResponseWriter, *http.Request) {
			panic(http.ErrAbortHandler)
		}},
		{"answer broken off in the body", http.StatusBadGateway, "the backend's answer broke off", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "1000")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte(`[{"id":1},`))
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		}},
		{"slower than response_header_timeout", http.StatusGatewayTimeout, "the backend did not answer in time", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}},
	} {
		for _, w := range when {
			t.Run(tc.name+" at "+w.name, func(t *testing.T) {
				f.arm(w.from, tc.fault)
				before := len(logs())
				a := get(t, c.URL+"/calls?"+w.query)
				assert.GreaterOrEqual(t, len(f.seen()), w.atLeast)
				require.Equal(t, tc.status, a.status, string(a.body))
				assert.Contains(t, assertNoPage(t, a), tc.want)
				require.Eventually(t, func() bool { return len(logs()) > before }, 2*time.Second, 10*time.Millisecond)
				e := logs()[before]
				assert.Equal(t, "backend unreachable", e["msg"])
				assert.Equal(t, "/calls", e["endpoint"])
				assert.Contains(t, e["backend_query"], "_page=")
				assertServing(t, c, f, b)
			})
		}
	}
}

// TestMaxBodySizeStopsReading sends a backend answer that never ends: the
// gateway must answer 502 once max_body_size is reached, and stop reading,
// so the backend's writes fail long before it has sent much more.
func TestMaxBodySizeStopsReading(t *testing.T) {
	const limit, chunk, most = 64 << 10, 32 << 10, 1 << 30
	var written atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		buf := []byte("[" + strings.Repeat(`{"id":1},`, chunk/9))
		for written.Load() < most {
			n, err := w.Write(buf)
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	c := gatewaytest.Start(t, fmt.Sprintf(faultSite, "max_body_size 64KiB", ""), srv.URL)

	a := get(t, c.URL+"/calls")
	require.Equal(t, http.StatusBadGateway, a.status, string(a.body))
	assert.Contains(t, assertNoPage(t, a), fmt.Sprintf("larger than max_body_size (%d bytes)", limit))
	// Socket buffers on both sides hold a few MiB at most; an unbounded
	// reader would have taken the whole GiB.
	require.Eventually(t, func() bool {
		before := written.Load()
		time.Sleep(50 * time.Millisecond)
		return written.Load() == before
	}, 5*time.Second, time.Millisecond, "the backend stops writing")
	t.Logf("the backend wrote %d bytes", written.Load())
	assert.Less(t, written.Load(), int64(64<<20), "bytes the backend got to write")
}

// TestBadAnswerDoesNotPoisonTheIndex checks that an answer refused as
// unusable teaches the position index nothing: afterwards the same cursor
// costs what it costs on a fresh index, and a walk from there costs one
// backend call per page.
func TestBadAnswerDoesNotPoisonTheIndex(t *testing.T) {
	b := numericList(3000)
	ids := b.ids()
	c, f, logs := startFaulty(t, b, "", "")
	// A plausible answer, in the wrong place: records from far into the
	// list, one pair out of order.
	bad := func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("_perPage"))
		tokens := append([]string(nil), b.tokens[2000:2000+n]...)
		tokens[0], tokens[1] = tokens[1], tokens[0]
		(&listBackend{tokens: tokens}).ServeHTTP(w, r)
	}
	query := "_perPage=20&_cursor=" + cursorFor(ids[1000])

	f.arm(1, bad)
	a := get(t, c.URL+"/calls?"+query)
	require.Equal(t, http.StatusBadGateway, a.status, string(a.body))
	assert.Contains(t, a.message(t), "ids out of order")

	// /phone_numbers serves the same list and has never seen a bad answer.
	cost := map[string]int{}
	for _, path := range []string{"/calls", "/phone_numbers"} {
		f.arm(0, nil)
		a := get(t, c.URL+path+"?"+query)
		require.Equal(t, http.StatusOK, a.status, string(a.body))
		assert.Equal(t, ids[1001:1021], a.ids(t), path)
		cost[path] = len(f.seen())
	}
	assert.Equal(t, cost["/phone_numbers"], cost["/calls"], "backend calls for the same cursor")
	for _, e := range logs() {
		assert.NotEqual(t, "relocated a stale position", e["msg"], "no hint from the bad answer was followed: %v", e)
	}

	f.arm(0, nil)
	cursor := cursorFor(ids[1020])
	for page := range 10 {
		a := get(t, c.URL+"/calls?_perPage=20&_cursor="+cursor)
		require.Equal(t, http.StatusOK, a.status, string(a.body))
		from := 1021 + 20*page
		require.Equal(t, ids[from:from+20], a.ids(t))
		cursor = a.header.Get("next_page_cursor")
	}
	assert.LessOrEqual(t, len(f.seen()), 10, "a walk costs at most one backend call per page: no search")
}

// TestClientGoneIsNotTheBackendsFault checks that a client that hangs up
// while a sub-request waits is counted as such, not as a backend answer
// passed on: reverse_proxy answers a cancelled sub-request with a 499.
func TestClientGoneIsNotTheBackendsFault(t *testing.T) {
	b := numericList(400)
	f := &faulty{next: b}
	c := gatewaytest.StartBehind(t, fmt.Sprintf(faultSite, "backend_max_per_page 25", ""), f, gatewaytest.Options{Admin: true})
	outcomes := func() map[string]float64 {
		resp, err := gatewaytest.Client.Get("http://" + c.Admin + "/metrics")
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		out := map[string]float64{}
		for _, o := range []string{"backend_status", "error", "unavailable"} {
			out[o], _ = metricValue(string(body), `helpdesk_gateway_requests_total{endpoint="/calls",outcome="`+o+`"}`)
		}
		return out
	}
	before := outcomes()

	backendSawCancel := make(chan struct{}, 1)
	f.arm(2, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
			backendSawCancel <- struct{}{}
		case <-time.After(5 * time.Second):
		}
	})
	client := &http.Client{Timeout: 200 * time.Millisecond, Transport: &http.Transport{Proxy: nil}}
	_, err := client.Get(c.URL + "/calls?_perPage=60")
	require.Error(t, err, "the client gave up")
	select {
	case <-backendSawCancel:
	case <-time.After(5 * time.Second):
		t.Fatal("the sub-request was not cancelled with the client's request")
	}
	var after map[string]float64
	require.Eventually(t, func() bool {
		after = outcomes()
		return after["error"]+after["backend_status"]+after["unavailable"] > before["error"]+before["backend_status"]+before["unavailable"]
	}, 5*time.Second, 20*time.Millisecond, "the request was counted")
	assert.Equal(t, before["error"]+1, after["error"], "counted as a request that could not be served")
	assert.Equal(t, before["backend_status"], after["backend_status"], "not as a backend answer passed on")
	assert.Equal(t, before["unavailable"], after["unavailable"], "not as a backend that did not answer")
	assertServing(t, c, f, b)
}
