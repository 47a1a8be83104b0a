package caddymodule_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// TestMalformedPercentEncodingIsRefused: a query pair that is not valid
// percent-encoding, which a backend's parser (Go's, PHP's, most
// frameworks') drops in silence, is refused with 400 naming the pair on
// every endpoint the gateway owns, before any backend call: a client
// asking for calls of one type must not walk every call believing the
// list filtered. Paths the gateway does not own pass through as sent.
func TestMalformedPercentEncodingIsRefused(t *testing.T) {
	c, b, rec := startGateway(t, reference.Config{Seed: 26, Records: 200}, "")
	all := strIDs(b.IDs("calls"))

	for _, path := range []string{"/calls", "/grid/reports/time", "/phone_numbers", "/tickets/history", "/tickets"} {
		for _, tc := range []struct{ query, pair string }{
			{`_perPage=5&_filters=%7B%22type%22%3A%22I%22%7D%ZZ`, `"_filters=%7B%22type%22%3A%22I%22%7D%ZZ"`},
			{`_perPage=5&search=50%%20off`, `"search=50%%20off"`},
			{`search=50%+off&_perPage=5`, `"search=50%+off"`},
			{`_perPage=5&q=%`, `"q=%"`},
			{`_cursor=` + cursorFor(all[3]) + `&x=%e2%82`, ``}, // valid escapes, invalid UTF-8: a backend keeps the pair
		} {
			t.Run(path+"?"+tc.query, func(t *testing.T) {
				rec.reset()
				a := get(t, c.URL+path+"?"+tc.query)
				if tc.pair == "" {
					require.Equal(t, http.StatusOK, a.status, string(a.body))
					assert.NotEmpty(t, rec.requests())
					return
				}
				require.Equal(t, http.StatusBadRequest, a.status, string(a.body))
				msg := a.message(t)
				assert.Contains(t, msg, "the query pair "+tc.pair+" is not valid percent-encoding")
				assert.Contains(t, msg, "%25", "the message says how to send a literal %")
				assert.Empty(t, rec.requests(), "the backend must not be called")
			})
		}
	}

	t.Run("a literal percent sent as %25 is served", func(t *testing.T) {
		rec.reset()
		a := get(t, c.URL+"/calls?_perPage=5&search=50%25%20off")
		require.Equal(t, http.StatusOK, a.status, string(a.body))
		reqs := rec.requests()
		require.NotEmpty(t, reqs)
		assert.Equal(t, "50% off", reqs[0].URL.Query().Get("search"), "the backend reads the pair")
	})

	t.Run("a path the gateway does not own passes through as sent", func(t *testing.T) {
		rec.reset()
		a := get(t, c.URL+"/agents?q=50%%20off")
		assert.NotEqual(t, http.StatusBadRequest, a.status)
		reqs := rec.requests()
		require.Len(t, reqs, 1)
		assert.Equal(t, "q=50%%20off", reqs[0].URL.RawQuery)
	})
}
