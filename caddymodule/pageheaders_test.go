package caddymodule

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/stretchr/testify/assert"
)

// TestRequestedURL: a page's Link names the path the client asked for,
// before a rewrite inside Caddy.
func TestRequestedURL(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/calls?_perPage=25", nil)
	assert.Equal(t, "/calls", requestedURL(r).Path)
	orig := httptest.NewRequest(http.MethodGet, "/v3/calls?_perPage=25", nil)
	r = r.WithContext(context.WithValue(r.Context(), caddyhttp.OriginalRequestCtxKey, *orig))
	assert.Equal(t, "/v3/calls", requestedURL(r).Path)
}
