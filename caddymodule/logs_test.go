package caddymodule

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/helpdesk-gateway/gateway/legacy"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// TestWarningsCarryNoCredentialsOrBodies checks the warning logged for an
// unusable backend answer: structured, with the endpoint and the backend
// query, and without the client's key or the body.
func TestWarningsCarryNoCredentialsOrBodies(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	g := &Gateway{logger: zap.New(core)}
	require.NoError(t, registerMetrics(nil))
	f := &fetcher{queries: []string{"apikey=s3cret&status=open&_sortField=id&_sortDir=ASC&_page=1&_perPage=11"}}
	body := `{"secret body":1}`
	_, err := legacy.ParseBody([]byte(body), "data", "id")
	require.Error(t, err)

	outcome := g.pageFailed(httptest.NewRecorder(), &endpoint{name: "/calls"}, f, err)
	assert.Equal(t, outcomeUnusable, outcome)
	entries := logs.All()
	require.Len(t, entries, 1)
	e := entries[0]
	assert.Equal(t, zapcore.WarnLevel, e.Level)
	fields := e.ContextMap()
	assert.Equal(t, "/calls", fields["endpoint"])
	assert.Equal(t, "apikey=REDACTED&status=open&_sortField=id&_sortDir=ASC&_page=1&_perPage=11", fields["backend_query"])
	var all strings.Builder
	all.WriteString(e.Message)
	for k, v := range fields {
		all.WriteString(k)
		all.WriteString(strings.TrimSpace(strings.ReplaceAll(toString(v), "\n", " ")))
	}
	assert.NotContains(t, all.String(), "s3cret")
	assert.NotContains(t, all.String(), "secret body")
}

// provisioned returns a gateway provisioned with the defaults, for tests
// that call its ServeHTTP directly.
func provisioned(t *testing.T) *Gateway {
	ctx, cancel := caddy.NewContext(caddy.Context{Context: t.Context()})
	t.Cleanup(cancel)
	g := new(Gateway)
	require.NoError(t, g.Provision(ctx))
	return g
}

// assertNoSecretLogged checks that no logged field holds the test's
// credential, s3cret.
func assertNoSecretLogged(t *testing.T, logs *observer.ObservedLogs) {
	t.Helper()
	for _, e := range logs.All() {
		for k, v := range e.ContextMap() {
			assert.NotContains(t, toString(v), "s3cret", k)
		}
	}
}

func toString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return ""
}

func TestOneDebugLinePerCursorRequest(t *testing.T) {
	g := provisioned(t)
	core, logs := observer.New(zapcore.DebugLevel)
	g.logger = zap.New(core)
	b := reference.New(reference.Config{Seed: 1, Records: 50})
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		b.ServeHTTP(w, r)
		return nil
	})
	id := strconv.FormatInt(b.IDs("calls")[1], 10) // inside the first probe of a cold index
	r := httptest.NewRequest(http.MethodGet, "/calls?_perPage=4&apikey=s3cret&_cursor="+cursor.Encode(id), nil)
	w := httptest.NewRecorder()
	require.NoError(t, g.ServeHTTP(w, r, next))
	require.Equal(t, http.StatusOK, w.Code)

	entries := logs.FilterMessage("cursor page").All()
	require.Len(t, entries, 1)
	f := entries[0].ContextMap()
	assert.Equal(t, zapcore.DebugLevel, entries[0].Level)
	assert.Equal(t, "/calls", f["endpoint"])
	assert.Equal(t, id, f["cursor_id"])
	assert.EqualValues(t, 4, f["per_page"])
	assert.EqualValues(t, 1, f["subrequests"])
	assert.EqualValues(t, 4, f["records"])
	assertNoSecretLogged(t, logs)
}

// TestWarningForRelocations deletes records before a position the index
// has learned, so that the next cursor request finds its hint stale: it
// logs one warning with the count, and the debug line agrees.
func TestWarningForRelocations(t *testing.T) {
	g := provisioned(t)
	core, logs := observer.New(zapcore.DebugLevel)
	g.logger = zap.New(core)
	b := reference.New(reference.Config{Seed: 1, Records: 300})
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		b.ServeHTTP(w, r)
		return nil
	})
	ids := b.IDs("calls")
	after := strconv.FormatInt(ids[199], 10)
	page := func() {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodGet, "/calls?_perPage=10&apikey=s3cret&_cursor="+cursor.Encode(after), nil)
		require.NoError(t, g.ServeHTTP(w, r, next))
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	}
	page()
	require.Empty(t, logs.FilterLevelExact(zapcore.WarnLevel).All(), "a cold index has nothing stale")
	for _, id := range ids[10:70] {
		require.True(t, b.Delete("calls", id))
	}
	page()

	warnings := logs.FilterMessage("relocated a stale position").All()
	require.Len(t, warnings, 1)
	w := warnings[0]
	assert.Equal(t, zapcore.WarnLevel, w.Level)
	assert.Equal(t, "/calls", w.ContextMap()["endpoint"])
	assert.Equal(t, after, w.ContextMap()["cursor_id"])
	relocations, ok := w.ContextMap()["relocations"].(int64)
	require.True(t, ok)
	assert.Positive(t, relocations)
	debug := logs.FilterMessage("cursor page").All()
	require.Len(t, debug, 2)
	assert.Equal(t, relocations, debug[1].ContextMap()["relocations"])
	assertNoSecretLogged(t, logs)
}

// TestOneDebugLinePerOwnedRequest checks that every request on an owned
// path logs exactly one debug line, whatever became of it: refused for its
// query or its filters, failed at the backend, or served.
func TestOneDebugLinePerOwnedRequest(t *testing.T) {
	g := provisioned(t)
	b := reference.New(reference.Config{Seed: 1, Records: 50})
	backend := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		b.ServeHTTP(w, r)
		return nil
	})
	broken := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		_, err := w.Write([]byte("<html>not json</html>"))
		return err
	})
	long := strings.Repeat("9", 500)
	for _, tc := range []struct {
		name, target string
		next         caddyhttp.Handler
		status       int
		message      string
		fields       map[string]any
	}{
		{"cursor refused for its query", "/calls?_perPage=0&apikey=s3cret", backend, 400, "cursor page",
			map[string]any{"outcome": outcomeClientError, "subrequests": int64(0), "records": int64(0)}},
		{"cursor id not a number", "/calls?_cursor=" + cursor.Encode("abc"), backend, 400, "cursor page",
			map[string]any{"outcome": outcomeClientError, "cursor_id": "abc", "subrequests": int64(0)}},
		{"long cursor id is cut", "/calls?_cursor=" + cursor.Encode(long), backend, 200, "cursor page",
			map[string]any{"outcome": outcomeOK, "cursor_id": long[:128] + "…"}},
		{"unusable backend answer", "/calls?_perPage=3&apikey=s3cret", broken, 502, "cursor page",
			map[string]any{"outcome": outcomeUnusable, "subrequests": int64(1), "records": int64(0), "per_page": int64(3)}},
		{"served", "/calls?_perPage=3&apikey=s3cret", backend, 200, "cursor page",
			map[string]any{"outcome": outcomeOK, "subrequests": int64(1), "records": int64(3)}},
		{"filters forwarded", `/tickets?apikey=s3cret&_filters={"status":"C"}`, backend, 200, "filter request",
			map[string]any{"outcome": outcomeOK, "rejection": ""}},
		{"filters refused", `/tickets?apikey=s3cret&_filters={"status":"s3cret","owner_email":"x"}`, backend, 400, "filter request",
			map[string]any{"outcome": outcomeClientError, "rejection": "not_filterable"}},
		{"no filters", "/tickets?apikey=s3cret", backend, 200, "filter request",
			map[string]any{"outcome": outcomeOK}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			core, logs := observer.New(zapcore.DebugLevel)
			g.logger = zap.New(core)
			w := httptest.NewRecorder()
			r := httptest.NewRequest(http.MethodGet, tc.target, nil)
			require.NoError(t, g.ServeHTTP(w, r, tc.next))
			require.Equal(t, tc.status, w.Code, w.Body.String())

			lines := logs.FilterLevelExact(zapcore.DebugLevel).All()
			require.Len(t, lines, 1)
			assert.Equal(t, tc.message, lines[0].Message)
			fields := lines[0].ContextMap()
			assert.Equal(t, r.URL.Path, fields["endpoint"])
			for k, want := range tc.fields {
				assert.Equal(t, want, fields[k], k)
			}
			assertNoSecretLogged(t, logs)
		})
	}
}

func TestClipKeepsWholeCharacters(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"abc", "abc"},
		{"abcdef", "abcd…"},
		{"abcé", "abc…"}, // é is two bytes: not cut in half
		{"ééé", "éé…"},
	} {
		assert.Equal(t, tc.want, clip(tc.in, 4), tc.in)
	}
}
