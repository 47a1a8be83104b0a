package caddymodule_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// TestFiltersByteForByte sends valid _filters spelt in every way a client
// might (raw brackets and quotes, '+' and %20 for spaces, lower-case hex,
// escapes inside the JSON, other parameters around) and checks that the
// backend receives the query exactly as sent.
func TestFiltersByteForByte(t *testing.T) {
	c, _, rec := startGateway(t, reference.Config{Seed: 4, Records: 200}, "")
	for _, rawQuery := range []string{
		`_filters=[["status","IN","C,L"]]`,
		`_filters={"subject":"printer"}&_perPage=5`,
		`_perPage=50&_filters=%5B%5B%22subject%22%2C%22E%22%2C%22Printer+not%22%5D%5D&x=1`,
		`_filters=%5b%5b%22subject%22,%22E%22,%22printer%20not%22%5d%5d`,
		`_filters=[["date_created","D>=","2025-01-01+00:00:00"],["tags","CY","vip,urgent"]]`,
		`_filters=[["search","L","caf\u00e9"],["field_region","NE",""]]`,
		`_filters=+[+]+`,
		`_filters={}&_sortField=date_created&_sortDir=DESC&_page=2`,
		`a=1&_filters=[]&b=2`,
	} {
		t.Run(rawQuery, func(t *testing.T) {
			rec.reset()
			a := get(t, c.URL+"/tickets?"+rawQuery)
			require.Equal(t, http.StatusOK, a.status, string(a.body))
			reqs := rec.requests()
			require.Len(t, reqs, 1)
			assert.Equal(t, rawQuery, reqs[0].URL.RawQuery, "the backend gets the query byte for byte")
			assert.Equal(t, "/tickets", reqs[0].URL.Path)
		})
	}
}

// TestFilterErrorsEndToEnd checks the whole 400 a client gets for an
// invalid filter: JSON, a message naming the filter's position, the
// parameter and what is allowed, and no backend call.
func TestFilterErrorsEndToEnd(t *testing.T) {
	c, _, rec := startGateway(t, reference.Config{Seed: 4, Records: 50}, "")
	for _, tc := range []struct{ raw, message string }{
		{`[["status","IN","C"],["status","L","C"]]`,
			`invalid _filters: filter 2 ("status"): operator "L" is not allowed; status takes E, IN, NI`},
		{`{"status":"C","date_created":"2024-01-01 00:00:00"}`,
			`invalid _filters: filter 2 ("date_created"): date_created has no equality operator, so the object form cannot use it; use the list form with D>, D<, D>=, D<= or DP, e.g. [["date_created","D>","2024-01-31 13:45:00"]]`},
		{`[["owner_email","E","a@b.c"]]`,
			`invalid _filters: filter 1 ("owner_email"): owner_email cannot be used as a filter; search covers the owner's details: [["search","L","<email>"]]`},
		{`[["tags","IE","vip"]]`,
			`invalid _filters: filter 1 ("tags"): IE takes the empty value "", not "vip"`},
		{`[["status","E"]]`, `invalid _filters: filter 1 ("status"): a filter is a triple ["<parameter>","<operator>","<value>"]; this one has 2 items`},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			rec.reset()
			a := get(t, c.URL+"/tickets?_filters="+url.QueryEscape(tc.raw))
			require.Equal(t, http.StatusBadRequest, a.status)
			assert.Equal(t, "application/json", a.header.Get("Content-Type"))
			var body map[string]any
			require.NoError(t, json.Unmarshal(a.body, &body))
			assert.Contains(t, body["message"], tc.message)
			assert.Empty(t, rec.requests(), "the backend is not called")
		})
	}
}

// TestFilterCodeListsAndPlaces configures the allowed status, channel and
// period codes, another filter endpoint and a base path in the Caddyfile,
// and checks each through a real Caddy.
func TestFilterCodeListsAndPlaces(t *testing.T) {
	c, b, rec := startGateway(t,
		reference.Config{Seed: 4, Records: 300, BasePath: "/api/v3", Now: func() time.Time { return time.Date(2025, 12, 31, 12, 0, 0, 0, time.UTC) }},
		"base_path /api/v3\n\t\tcursor_endpoints /calls /phone_numbers\n\t\tfilter_endpoints /tickets /tickets/history\n\t\tstatus_codes C L\n\t\tchannel_types E C\n\t\tperiod_codes TM LM")
	total := b.Len("tickets")
	for _, tc := range []struct {
		path, raw string
		message   string // "" when valid
	}{
		{"/api/v3/tickets", `[["status","IN","C,L"]]`, ""},
		{"/api/v3/tickets", `{"status":"R"}`, `filter 1 ("status"): "R" is not an allowed status code; E takes one of C, L`},
		{"/api/v3/tickets", `{"status":"c"}`, `filter 1 ("status"): "c" is not an allowed status code (codes are case-sensitive: "C"); E takes one of C, L`},
		{"/api/v3/tickets", `[["channel_type","IN","E,C"]]`, ""},
		{"/api/v3/tickets", `[["channel_type","E","F"]]`, `filter 1 ("channel_type"): "F" is not an allowed channel type code; E takes one of E, C`},
		{"/api/v3/tickets", `[["date_created","DP","TM"]]`, ""},
		{"/api/v3/tickets", `[["m_datecreated","DP","T"]]`, `filter 1 ("m_datecreated"): "T" is not a period code; DP takes one of TM, LM`},
		{"/api/v3/tickets", `[["tags","E","any_tag_code"]]`, ""},
		{"/api/v3/tickets/history", `[["status","L","x"]]`, `operator "L" is not allowed`},
		{"/api/v3/tickets/history", `{"status":"C"}`, ""},
	} {
		t.Run(tc.path+" "+tc.raw, func(t *testing.T) {
			rec.reset()
			a := get(t, c.URL+tc.path+"?_perPage=1000&_filters="+url.QueryEscape(tc.raw))
			if tc.message != "" {
				require.Equal(t, http.StatusBadRequest, a.status, string(a.body))
				assert.Contains(t, a.message(t), tc.message)
				assert.Empty(t, rec.requests())
				return
			}
			require.Equal(t, http.StatusOK, a.status, string(a.body))
			require.Len(t, rec.requests(), 1)
			if tc.path == "/api/v3/tickets" && tc.raw != `[["tags","E","any_tag_code"]]` {
				n := len(a.ids(t))
				assert.Positive(t, n, "some tickets match")
				assert.Less(t, n, total, "the reference backend filters")
			}
		})
	}
	// Without the base path the gateway does not own /tickets: nothing is
	// checked, the backend (which is under /api/v3) answers 404.
	rec.reset()
	a := get(t, c.URL+"/tickets?_filters="+url.QueryEscape(`{"status":"R"}`))
	assert.Equal(t, http.StatusNotFound, a.status)
	assert.Len(t, rec.requests(), 1)
}
