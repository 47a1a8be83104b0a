package caddymodule_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

func TestFiltersEndToEnd(t *testing.T) {
	c, b, rec := startGateway(t, reference.Config{Seed: 4, Records: 400}, "status_codes C L R A")
	total := b.Len("tickets")

	t.Run("valid filters reach the backend byte for byte and filter", func(t *testing.T) {
		for _, raw := range []string{
			`{"status":"C"}`,
			`[["status","IN","C,L"],["date_created","D>=","2025-06-01 00:00:00"]]`,
			`[ ["subject" , "E" , "printer"] ]`,
			`{"search":"refund"}`,
		} {
			rec.reset()
			rawQuery := "_perPage=1000&_filters=" + url.QueryEscape(raw)
			a := get(t, c.URL+"/tickets?"+rawQuery)
			require.Equal(t, http.StatusOK, a.status, string(a.body))
			reqs := rec.requests()
			require.Len(t, reqs, 1)
			assert.Equal(t, rawQuery, reqs[0].URL.RawQuery, "forwarded unchanged")
			n := len(a.ids(t))
			assert.Positive(t, n, raw)
			assert.Less(t, n, total, "%s filters something", raw)
		}
	})

	t.Run("invalid filters get 400 and never reach the backend", func(t *testing.T) {
		for _, tc := range []struct{ raw, want string }{
			{`[["status","L","C"]]`, "status takes E, IN, NI"},
			{`{"id":"5"}`, `"id"`},
			{`{"status":"open"}`, "C, L, R, A"},
			{`[["date_created","D>","2024-02-30 00:00:00"]]`, "date_created"},
			{`[["tags","IE","x"]]`, "tags"},
			{`not json`, "filter"},
		} {
			rec.reset()
			a := get(t, c.URL+"/tickets?_filters="+url.QueryEscape(tc.raw))
			require.Equal(t, http.StatusBadRequest, a.status, tc.raw)
			assert.Contains(t, a.message(t), tc.want)
			assert.Empty(t, rec.requests(), "the backend must not be called for %s", tc.raw)
		}
	})

	t.Run("repeated _filters", func(t *testing.T) {
		rec.reset()
		a := get(t, c.URL+"/tickets?_filters=[]&_filters=[]")
		assert.Equal(t, http.StatusBadRequest, a.status)
		assert.Contains(t, a.message(t), "repeated")
		assert.Empty(t, rec.requests())
	})
}
