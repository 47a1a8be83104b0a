package caddymodule_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule"
	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/liststore"
)

// keyedBackend shows each API key its own records, as a multi-tenant
// help desk does: a key (X-Api-Key, else Authorization) that starts with
// "a" sees the ids in a, one that starts with "b" those in b; any other
// key gets a 401. Without X-Api-Key, the user an authenticating proxy
// names in X-Forwarded-User is the key. It pages by _page and _perPage from 1, sorted by
// _sortField=id&_sortDir=ASC, and each record names the key it was served
// to and the Accept-Language it was asked in. A client's maxrows caps an
// answer at that many records; without it answers are clamped at clamp.
// It counts calls and records sent per key.
type keyedBackend struct {
	a, b  []int64
	clamp int

	mu      sync.Mutex
	calls   map[string]int
	records map[string]int
}

func newKeyedBackend(n, clamp int) *keyedBackend {
	kb := &keyedBackend{clamp: clamp, calls: map[string]int{}, records: map[string]int{}}
	for i := 1; i <= n; i++ {
		kb.a = append(kb.a, int64(2*i)) // 2, 4, 6, ...
		kb.b = append(kb.b, int64(3*i)) // 3, 6, 9, ...
	}
	return kb
}

func keyOf(r *http.Request) string {
	if k := r.Header.Get("X-Api-Key"); k != "" {
		return k
	}
	// The user an authenticating proxy in front (oauth2-proxy) names.
	if k := r.Header.Get("X-Forwarded-User"); k != "" {
		return k
	}
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
}

// view is the list key sees, or nil.
func (kb *keyedBackend) view(key string) []int64 {
	switch {
	case strings.HasPrefix(key, "a"):
		return kb.a
	case strings.HasPrefix(key, "b"):
		return kb.b
	}
	return nil
}

func (kb *keyedBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := keyOf(r)
	ids := kb.view(key)
	if ids == nil {
		http.Error(w, `{"message":"unknown key"}`, http.StatusUnauthorized)
		return
	}
	q := r.URL.Query()
	if q.Get("_sortField") != "id" || q.Get("_sortDir") != "ASC" {
		http.Error(w, `{"message":"sort by id"}`, http.StatusBadRequest)
		return
	}
	page, _ := strconv.Atoi(q.Get("_page"))
	size, _ := strconv.Atoi(q.Get("_perPage"))
	if page < 1 || size < 1 {
		page, size = 1, 20
	}
	size = min(size, kb.clamp)
	if m, err := strconv.Atoi(q.Get("maxrows")); err == nil && m > 0 {
		size = min(size, m)
	}
	from := min((page-1)*size, len(ids))
	to := min(from+size, len(ids))
	lang, _ := json.Marshal(r.Header.Get("Accept-Language"))
	owner, _ := json.Marshal(key)
	var sb strings.Builder
	sb.WriteByte('[')
	for i := from; i < to; i++ {
		if i > from {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"id":%d,"owner":%s,"lang":%s}`, ids[i], owner, lang)
	}
	sb.WriteByte(']')
	kb.mu.Lock()
	kb.calls[key]++
	kb.records[key] += to - from
	kb.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(sb.String()))
}

// cost returns the calls and records key has cost the backend so far,
// the reads ahead of its walkers that its pages started among them.
func (kb *keyedBackend) cost(key string) (calls, records int) {
	caddymodule.SettleReadsAhead()
	kb.mu.Lock()
	defer kb.mu.Unlock()
	return kb.calls[key], kb.records[key]
}

// pageCalls is the calls key's pages made in their own requests: its
// cost less the reads ahead of walkers the gateways made in the
// background, which the tests that use it count for one key at a time.
func (kb *keyedBackend) pageCalls(key string) int {
	calls, _ := kb.cost(key)
	return calls - int(caddymodule.BackgroundCalls())
}

// keyedRecord is a record of a keyedBackend as a client sees it.
type keyedRecord struct {
	ID    int64  `json:"id"`
	Owner string `json:"owner"`
	Lang  string `json:"lang"`
}

// keyedWalker walks /calls by cursor as one caller: the headers its
// requests carry (each request's, so per-request headers may change).
type keyedWalker struct {
	base    string
	perPage int
	extra   string          // more query, e.g. "maxrows=30"
	headers func() []string // name, value pairs of each request

	cursor string
	ids    []int64
	owners map[string]bool
	langs  map[string]bool
	pages  int
	done   bool
}

// next asks for the walker's next page and takes it in.
func (kw *keyedWalker) next(t *testing.T) {
	t.Helper()
	u := kw.base + "/calls?_perPage=" + strconv.Itoa(kw.perPage)
	if kw.cursor != "" {
		u += "&_cursor=" + kw.cursor
	}
	if kw.extra != "" {
		u += "&" + kw.extra
	}
	a := get(t, u, kw.headers()...)
	require.Equal(t, http.StatusOK, a.status, string(a.body))
	var recs []keyedRecord
	require.NoError(t, json.Unmarshal(a.body, &recs))
	if kw.owners == nil {
		kw.owners, kw.langs = map[string]bool{}, map[string]bool{}
	}
	for _, r := range recs {
		kw.ids = append(kw.ids, r.ID)
		kw.owners[r.Owner] = true
		kw.langs[r.Lang] = true
	}
	kw.pages++
	kw.cursor = a.header.Get("next_page_cursor")
	kw.done = kw.cursor == ""
	require.Less(t, kw.pages, 100000)
}

// walkAll walks each walker to its end, interleaved page by page.
func walkAll(t *testing.T, walkers ...*keyedWalker) {
	t.Helper()
	for {
		left := false
		for _, kw := range walkers {
			if !kw.done {
				kw.next(t)
				left = true
			}
		}
		if !left {
			return
		}
	}
}

func fixed(headers ...string) func() []string { return func() []string { return headers } }

// TestCallersInterleaved: two API keys that see different records of
// /calls walk it interleaved, page by page, read-ahead on. Each gets
// exactly its own records, and each walk is read mostly from its own
// windows. Issue 22 point 3, issue 26 point 3.
func TestCallersInterleaved(t *testing.T) {
	kb := newKeyedBackend(600, 1000)
	c := gatewaytest.StartBehind(t, fmt.Sprintf(gatewaySite, ""), kb)
	caddymodule.TrustWalks()

	for _, tc := range []struct {
		header, a, b string
	}{
		{"X-Api-Key", "a-key", "b-key"},
		{"Authorization", "Bearer a-token", "Bearer b-token"},
	} {
		t.Run(tc.header, func(t *testing.T) {
			wa := &keyedWalker{base: c.URL, perPage: 10, headers: fixed(tc.header, tc.a)}
			wb := &keyedWalker{base: c.URL, perPage: 10, headers: fixed(tc.header, tc.b)}
			walkAll(t, wa, wb)
			for _, w := range []struct {
				walker *keyedWalker
				key    string
				want   []int64
			}{{wa, keyOfValue(tc.a), kb.a}, {wb, keyOfValue(tc.b), kb.b}} {
				assert.Equal(t, w.want, w.walker.ids, "%s: exactly its own records", w.key)
				assert.Equal(t, map[string]bool{w.key: true}, w.walker.owners, "%s: every record served was read with its own key", w.key)
				calls, _ := kb.cost(w.key)
				perPage := float64(calls) / float64(w.walker.pages)
				assert.Less(t, perPage, 0.2, "%s: backend calls per page, read-ahead on", w.key)
				t.Logf("%s: %d pages, %d backend calls", w.key, w.walker.pages, calls)
			}
		})
	}
}

func keyOfValue(v string) string { return strings.TrimPrefix(v, "Bearer ") }

// TestCallerIdentityOfAWindow: a caller walks three pages, so that a
// window holds the pages after its cursor; then one request with that
// cursor comes with the caller's headers changed. A per-request header
// (a request id, a trace, the forwarding chain) leaves it the same caller:
// the page is cut from the window, no backend call. Any other header that
// differs (another API key, a language, a cookie) makes another caller:
// the backend is asked, and the page is that caller's own records after
// the cursor, never a page of the first caller's window.
func TestCallerIdentityOfAWindow(t *testing.T) {
	kb := newKeyedBackend(300, 1000)
	c := gatewaytest.StartBehind(t, fmt.Sprintf(gatewaySite, "readahead_ttl 30s"), kb)
	caddymodule.TrustWalks()

	for i, tc := range []struct {
		name string
		// change makes the probe's headers from the walker's key.
		change  func(key string) []string
		another bool // the probe is another caller
	}{
		{"the same headers", func(k string) []string { return []string{"X-Api-Key", k} }, false},
		{"X-Request-Id", func(k string) []string { return []string{"X-Api-Key", k, "X-Request-Id", "probe-1"} }, false},
		{"Traceparent", func(k string) []string {
			return []string{"X-Api-Key", k, "Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
		}, false},
		{"X-Forwarded-For", func(k string) []string { return []string{"X-Api-Key", k, "X-Forwarded-For", "192.0.2.7"} }, false},
		{"Via", func(k string) []string { return []string{"X-Api-Key", k, "Via", "1.1 edge"} }, false},
		{"another API key", func(k string) []string { return []string{"X-Api-Key", "b" + k[1:]} }, true},
		{"Authorization added", func(k string) []string { return []string{"X-Api-Key", k, "Authorization", "Bearer b-other"} }, true},
		{"Accept-Language", func(k string) []string { return []string{"X-Api-Key", k, "Accept-Language", "de"} }, true},
		{"Cookie", func(k string) []string { return []string{"X-Api-Key", k, "Cookie", "session=2"} }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := "a-probe-" + strconv.Itoa(i)
			w := &keyedWalker{base: c.URL, perPage: 10, headers: fixed("X-Api-Key", key)}
			for range 3 {
				w.next(t)
			}
			require.Equal(t, kb.a[:30], w.ids)
			cursor := w.ids[len(w.ids)-1]
			headers := tc.change(key)
			probe := &keyedWalker{base: c.URL, perPage: 10, cursor: w.cursor, headers: fixed(headers...)}
			// The probe's own calls: keyOf reads X-Api-Key first.
			probeKey := headers[1]
			callsBefore := kb.pageCalls(probeKey)
			probe.next(t)
			callsAfter := kb.pageCalls(probeKey)

			view := kb.view(probeKey)
			want, _ := nextAfter(view, cursor, 10)
			assert.Equal(t, want, probe.ids, "the page after %d in the list its own key sees", cursor)
			assert.Equal(t, map[string]bool{probeKey: true}, probe.owners, "read with its own key")
			lang := http.Header{}
			for i := 0; i < len(headers); i += 2 {
				lang.Set(headers[i], headers[i+1])
			}
			assert.Equal(t, map[string]bool{lang.Get("Accept-Language"): true}, probe.langs, "read in its own language")
			if tc.another {
				assert.Greater(t, callsAfter, callsBefore, "another caller: the backend is asked (a cold cursor for it)")
			} else {
				assert.Equal(t, callsBefore, callsAfter, "the same caller: cut from its window")
			}
		})
	}
}

// TestPerRequestHeadersKeepAWalksWindows walks with a new request id,
// trace and forwarding chain on every request: still one caller, whose
// walk is read mostly from windows.
func TestPerRequestHeadersKeepAWalksWindows(t *testing.T) {
	kb := newKeyedBackend(1000, 1000)
	c := gatewaytest.StartBehind(t, fmt.Sprintf(gatewaySite, ""), kb)

	n := 0
	w := &keyedWalker{base: c.URL, perPage: 10, headers: func() []string {
		n++
		return []string{
			"X-Api-Key", "a-traced",
			"X-Request-Id", "req-" + strconv.Itoa(n),
			"Traceparent", fmt.Sprintf("00-%032x-%016x-01", n, n),
			"X-Forwarded-For", fmt.Sprintf("192.0.2.%d", n%250+1),
		}
	}}
	walkAll(t, w)
	require.Equal(t, kb.a, w.ids)
	calls, _ := kb.cost("a-traced")
	assert.Less(t, float64(calls)/float64(w.pages), 0.2, "backend calls per page (%d calls, %d pages)", calls, w.pages)
}

// TestCallersInterleavedWithoutReadahead: with readahead_ttl 0, two keys
// that see different records walking interleaved each cost what one
// caller alone costs: about one backend call a page (issue 26 measured
// 2.01 when the position index was shared), and the records fetched per
// record served of a walk alone.
func TestCallersInterleavedWithoutReadahead(t *testing.T) {
	kb := newKeyedBackend(1500, 1000)
	c := gatewaytest.StartBehind(t, fmt.Sprintf(gatewaySite, "readahead_ttl 0"), kb)

	for _, perPage := range []int{10, 100} {
		t.Run("perPage "+strconv.Itoa(perPage), func(t *testing.T) {
			suffix := "-" + strconv.Itoa(perPage)
			alone := &keyedWalker{base: c.URL, perPage: perPage, headers: fixed("X-Api-Key", "a-alone"+suffix)}
			walkAll(t, alone)
			aloneCalls, aloneFetched := kb.cost("a-alone" + suffix)
			aloneRatio := float64(aloneFetched) / float64(len(alone.ids))

			wa := &keyedWalker{base: c.URL, perPage: perPage, headers: fixed("X-Api-Key", "a-inter"+suffix)}
			wb := &keyedWalker{base: c.URL, perPage: perPage, headers: fixed("X-Api-Key", "b-inter"+suffix)}
			walkAll(t, wa, wb)
			require.Equal(t, kb.a, wa.ids)
			require.Equal(t, kb.b, wb.ids)
			for _, w := range []*keyedWalker{wa, wb} {
				key := w.headers()[1]
				calls, fetched := kb.cost(key)
				perPageCalls := float64(calls) / float64(w.pages)
				ratio := float64(fetched) / float64(len(w.ids))
				assert.LessOrEqual(t, perPageCalls, 1.05, "%s: backend calls per page", key)
				assert.LessOrEqual(t, ratio, aloneRatio+0.1, "%s: records fetched per record served, alone %.2f", key, aloneRatio)
				t.Logf("%s: %.3f calls a page, %.2f records fetched per served (alone: %.3f, %.2f)",
					key, perPageCalls, ratio, float64(aloneCalls)/float64(alone.pages), aloneRatio)
			}
		})
	}
}

// TestProxyIdentityHeadersSeparateCallers: an authenticating proxy in
// front of Caddy (oauth2-proxy, Envoy with client certificates) names the
// caller in X-Forwarded-User, X-Forwarded-Email, X-Forwarded-Access-Token
// or X-Forwarded-Client-Cert. Those identify the caller, unlike the
// forwarding chain (X-Forwarded-For, -Host, -Proto): another value is
// another caller, never served from the first one's window.
func TestProxyIdentityHeadersSeparateCallers(t *testing.T) {
	kb := newKeyedBackend(300, 1000)
	c := gatewaytest.StartBehind(t, fmt.Sprintf(gatewaySite, "readahead_ttl 30s"), kb)

	for i, name := range []string{"X-Forwarded-Email", "X-Forwarded-Access-Token", "X-Forwarded-Client-Cert", "X-Forwarded-Groups"} {
		t.Run(name, func(t *testing.T) {
			alice, bob := "a-alice-"+strconv.Itoa(i), "b-bob-"+strconv.Itoa(i)
			w := &keyedWalker{base: c.URL, perPage: 10, headers: fixed("X-Forwarded-User", alice, name, alice)}
			for range 3 {
				w.next(t)
			}
			require.Equal(t, kb.a[:30], w.ids)
			cursor := w.ids[len(w.ids)-1]
			// Bob's proxy names him in this header only; the backend
			// reads his key from X-Forwarded-User, which the proxy sets
			// on a path the gateway does not see (here: the same value).
			probe := &keyedWalker{base: c.URL, perPage: 10, cursor: w.cursor, headers: fixed("X-Forwarded-User", alice, name, bob)}
			before, _ := kb.cost(alice)
			probe.next(t)
			after, _ := kb.cost(alice)
			assert.Greater(t, after, before, "another caller: the backend is asked, not %s's window", alice)
			want, _ := nextAfter(kb.a, cursor, 10)
			assert.Equal(t, want, probe.ids)
		})
	}
	t.Run("X-Forwarded-User", func(t *testing.T) {
		w := &keyedWalker{base: c.URL, perPage: 10, headers: fixed("X-Forwarded-User", "a-carol", "X-Forwarded-Proto", "https")}
		for range 3 {
			w.next(t)
		}
		require.Equal(t, kb.a[:30], w.ids)
		cursor := w.ids[len(w.ids)-1]
		probe := &keyedWalker{base: c.URL, perPage: 10, cursor: w.cursor, headers: fixed("X-Forwarded-User", "b-dave", "X-Forwarded-Proto", "https")}
		probe.next(t)
		want, _ := nextAfter(kb.b, cursor, 10)
		assert.Equal(t, want, probe.ids, "b-dave's records, read with his name")
		assert.Equal(t, map[string]bool{"b-dave": true}, probe.owners)
	})
	t.Run("the forwarding chain is per request", func(t *testing.T) {
		w := &keyedWalker{base: c.URL, perPage: 10, headers: fixed("X-Api-Key", "a-erin", "X-Forwarded-Host", "api.example", "X-Forwarded-Proto", "https")}
		for range 2 + liststore.ProofHits { // her walk proves that her walks stay
			w.next(t)
		}
		probe := &keyedWalker{base: c.URL, perPage: 10, cursor: w.cursor, headers: fixed("X-Api-Key", "a-erin", "X-Forwarded-Host", "api.example:443", "X-Forwarded-Proto", "http", "X-Forwarded-Port", "80")}
		before := kb.pageCalls("a-erin")
		probe.next(t)
		after := kb.pageCalls("a-erin")
		assert.Equal(t, before, after, "the same caller: cut from its window")
	})
}
