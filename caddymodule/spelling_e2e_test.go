package caddymodule_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// TestOtherSpellingsOfAnEndpointAreRefused: a GET for an owned list under
// another spelling (case, repeated or trailing slash, dot segment, escaped
// letter or slash) is refused with a JSON 400 that names the endpoint,
// and the backend never sees it, on a filter endpoint (with _filters that
// are not valid) and a cursor endpoint, with and without base_path. The
// endpoint's own spelling is served. Issue 30: each of these reached the
// backend unchecked.
func TestOtherSpellingsOfAnEndpointAreRefused(t *testing.T) {
	for _, tc := range []struct{ name, options, base string }{
		{"no base_path", "", ""},
		{"base_path", "base_path /api/v3", "/api/v3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _, rec := startGateway(t, reference.Config{Seed: 3, Records: 50}, tc.options)
			for _, ep := range []struct{ path, query string }{
				{"/tickets", "_filters=" + "%7Bbogus"},
				{"/calls", "_perPage=10&_cursor=" + cursorFor("5")},
			} {
				own := tc.base + ep.path
				spellings := []string{
					own + "/", strings.ToUpper(own), "/" + own, own + "/.", own + "%2F",
					own + "//", tc.base + "/." + ep.path, tc.base + "/x/.." + ep.path,
					own[:len(own)-1] + "%" + strings.ToUpper(hexByte(own[len(own)-1])), // /ticket%73
				}
				if tc.base != "" {
					spellings = append(spellings, strings.ToUpper(tc.base)+ep.path, tc.base+"/"+ep.path, "/api%2Fv3"+ep.path)
				}
				for _, p := range spellings {
					for _, method := range []string{http.MethodGet, http.MethodHead} {
						rec.reset()
						a := send(t, http.DefaultClient, c.URL+p+"?"+ep.query, nil, method)
						assert.Equal(t, http.StatusBadRequest, a.status, "%s %s", method, p)
						assert.Empty(t, rec.requests(), "%s %s: the backend never sees it", method, p)
						if method == http.MethodGet && a.status == http.StatusBadRequest {
							assert.Contains(t, a.message(t), "endpoint "+own, p)
						}
					}
				}
				rec.reset()
				a := send(t, http.DefaultClient, c.URL+own+"?"+ep.query, nil, http.MethodGet)
				if ep.path == "/tickets" {
					assert.Equal(t, http.StatusBadRequest, a.status, "%s: the endpoint's own spelling is checked", own)
					assert.Empty(t, rec.requests())
				} else {
					assert.NotEmpty(t, rec.requests(), "%s: the endpoint's own spelling is served", own)
				}
			}
			a := send(t, http.DefaultClient, c.URL+tc.base+"/tickets/", nil, http.MethodPost)
			assert.NotEqual(t, http.StatusBadRequest, a.status, "other methods pass on, as under the endpoint's own spelling")
		})
	}
}

func hexByte(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&15]})
}
