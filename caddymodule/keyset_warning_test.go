package caddymodule

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// TestOneWarningPerKeysetMisread: a backend that ignores backend_keyset
// (the reference backend reads no condition here) is served right by
// offset; the first list whose answer shows it logs one warning per
// endpoint with the Caddyfile line, and other lists of the endpoint log
// at info. Keyset ids are never logged beyond the reason's clip, and no
// credential.
func TestOneWarningPerKeysetMisread(t *testing.T) {
	ctx, cancel := caddy.NewContext(caddy.Context{Context: t.Context()})
	defer cancel()
	g := &Gateway{BackendKeyset: "id_gt={id}"}
	require.NoError(t, g.Provision(ctx))
	core, logs := observer.New(zapcore.DebugLevel)
	g.logger = zap.New(core)
	b := reference.New(reference.Config{Seed: 1, Records: 300}) // reads no keyset condition
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		b.ServeHTTP(w, r)
		return nil
	})
	ids := b.IDs("calls")
	for _, path := range []string{"/calls", "/phone_numbers"} {
		for i, list := range []string{"", "&status=A", "&status=B"} {
			for range 2 {
				at := 100 + 10*i
				id := strconv.FormatInt(ids[at], 10)
				if path == "/phone_numbers" {
					id = strconv.FormatInt(b.IDs("phone_numbers")[at], 10)
				}
				w := httptest.NewRecorder()
				r := httptest.NewRequest(http.MethodGet, fmt.Sprintf("%s?_perPage=5&apikey=s3cret%s&_cursor=%s", path, list, cursor.Encode(id)), nil)
				require.NoError(t, g.ServeHTTP(w, r, next))
				require.Equal(t, http.StatusOK, w.Code, w.Body.String())
			}
		}
	}
	// Hand-built cursors of a list walked here also stand read-ahead down
	// (stay.go), with a warning of its own.
	warnings := logs.FilterMessageSnippet("backend_keyset").FilterLevelExact(zapcore.WarnLevel).All()
	require.Len(t, warnings, 2, "one per endpoint")
	for _, w := range warnings {
		assert.Contains(t, w.Message, "backend ignores or misreads backend_keyset")
		f := w.ContextMap()
		assert.Equal(t, `backend_keyset "id_gt={id}"`, f["caddyfile"])
		assert.Contains(t, f["reason"], "the backend answered with id")
	}
	assert.Len(t, logs.FilterMessageSnippet("misreads backend_keyset").FilterLevelExact(zapcore.InfoLevel).All(), 4,
		"the other lists (status=A, status=B) of each endpoint, at info")
	assertNoSecretLogged(t, logs)
}
