package caddymodule_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// backendList asks the reference backend itself, not through the gateway,
// for the whole of a list in id order with the _filters value raw, and
// returns its records.
func backendList(t *testing.T, b *reference.Backend, path, raw string) []map[string]any {
	t.Helper()
	rec := httptest.NewRecorder()
	b.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path+"?_perPage=1000&_sortField=id&_filters="+url.QueryEscape(raw), nil))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var recs []map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &recs))
	require.Less(t, len(recs), 1000, "one page holds the whole filtered list")
	return recs
}

func recordIDs(recs []map[string]any) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = strconv.FormatInt(int64(r["id"].(float64)), 10)
	}
	return out
}

// TestCursorListFiltersEndToEnd walks each cursor list by cursor through a
// real Caddy with a date range in _filters, as published clients send it,
// to the end. The filter is part of the list, so the walk must be exactly
// the backend's own filtered list: every record in the range, once, in id
// order, and nothing else.
func TestCursorListFiltersEndToEnd(t *testing.T) {
	c, b, rec := startGateway(t, reference.Config{Seed: 11, Records: 800}, "")
	for _, tc := range []struct {
		path, field string // field holds the date the filter ranges over
		raw         string
		from, to    string // the range, [from, to)
	}{
		// Keboola's extractor, as it pages /calls.
		{"/calls", "dateCreated", `[["dateCreated",">=","2025-01-01 00:00:00"],["dateCreated","<=","2025-06-30 23:59:59"]]`,
			"2025-01-01 00:00:00", "2025-07-01 00:00:00"},
		{"/calls", "dateCreated", `[["date_created","DP","L90D"]]`, "2025-10-02 00:00:00", "2026-01-01 00:00:00"},
		{"/grid/reports/time", "reportdate", `[["reportdate","D>=","2024-07-01 00:00:00"],["reportdate","D<","2025-01-01 00:00:00"]]`,
			"2024-07-01 00:00:00", "2025-01-01 00:00:00"},
		{"/grid/reports/time", "reportdate", `[["reportdate","DP","TM"]]`, "2025-12-01 00:00:00", "2026-01-01 00:00:00"},
		{"/phone_numbers", "date_created", `[["date_created",">","2025-03-15 12:00:00"],["date_created","<","2025-09-15 12:00:00"]]`,
			"2025-03-15 12:00:01", "2025-09-15 12:00:00"},
		{"/phone_numbers", "date_created", `[["date_created","DP","LY"]]`, "2024-01-01 00:00:00", "2025-01-01 00:00:00"},
		// date_from is the field Keboola's extractor names on ticket history.
		{"/tickets/history", "date_from", `[["date_from",">=","2025-02-01 00:00:00"],["date_from","<=","2025-05-31 23:59:59"]]`,
			"2025-02-01 00:00:00", "2025-06-01 00:00:00"},
		{"/tickets/history", "date_from", `[["date_from","DP","L2W"]]`, "2025-12-15 00:00:00", "2025-12-29 00:00:00"},
	} {
		t.Run(tc.path+" "+tc.raw, func(t *testing.T) {
			own := backendList(t, b, tc.path, tc.raw)
			require.NotEmpty(t, own, "the range holds records")
			require.Less(t, len(own), b.Len(tc.path[1:]), "the range leaves records out")
			for _, r := range own {
				d, _ := r[tc.field].(string)
				require.True(t, tc.from <= d && d < tc.to, "%s %s outside [%s, %s)", tc.field, d, tc.from, tc.to)
			}

			rec.reset()
			filters := "_filters=" + url.QueryEscape(tc.raw)
			ids, pages := walkCursor(t, c.URL, tc.path, 7, filters)
			assert.Equal(t, recordIDs(own), ids, "the walk is the backend's own filtered list")
			assert.Equal(t, (len(own)+6)/7, pages, "full pages but the last")
			for _, r := range rec.requests() {
				assert.Equal(t, tc.raw, r.URL.Query().Get("_filters"), "every backend call carries the filter")
				assert.Empty(t, r.URL.Query().Get("_cursor"), "the cursor stays with the gateway")
			}
		})
	}

	t.Run("a filter the backend cannot apply is a 400, not the whole list", func(t *testing.T) {
		for _, tc := range []struct{ path, raw, want string }{
			{"/calls", `[["dateCreated",">=","2025-02-30 00:00:00"]]`, `"2025-02-30 00:00:00" is not a real date-time`},
			{"/calls", `[["duration",">","60"]]`, "calls has no such field"},
			{"/tickets/history", `[["date_from","DP","last_7_days"]]`, "LiveAgent's period codes"},
			{"/phone_numbers", `{"active":"true"}`, "phone_numbers has no such field"},
		} {
			a := get(t, c.URL+tc.path+"?_perPage=5&_filters="+url.QueryEscape(tc.raw))
			require.Equal(t, http.StatusBadRequest, a.status, string(a.body))
			assert.Contains(t, a.message(t), tc.want)
			assert.Empty(t, a.header.Get("next_page_cursor"))
		}
	})
}

// TestTicketFiltersWithLiveAgentCodes sends LiveAgent's own status,
// channel and period codes to the ticket list through a gateway in its
// default configuration, and checks what comes back.
func TestTicketFiltersWithLiveAgentCodes(t *testing.T) {
	c, b, rec := startGateway(t, reference.Config{Seed: 12, Records: 600}, "")
	total := b.Len("tickets")
	for _, tc := range []struct {
		raw  string
		keep func(map[string]any) bool
	}{
		{`{"status":"C"}`, func(r map[string]any) bool { return r["status"] == "C" }}, // C is open
		{`[["status","IN","R,L"]]`, func(r map[string]any) bool {
			return (r["status"] == "R" || r["status"] == "L") && r["date_resolved"] != ""
		}},
		{`[["status","NI","X,B"],["channel_type","IN","E,C"]]`, func(r map[string]any) bool {
			return r["status"] != "X" && r["status"] != "B" && (r["channel_type"] == "E" || r["channel_type"] == "C")
		}},
		{`{"channel_type":"F"}`, func(r map[string]any) bool { return r["channel_type"] == "F" }},
		{`[["date_created","DP","L30D"]]`, func(r map[string]any) bool {
			d := r["date_created"].(string)
			return d >= "2025-12-01 00:00:00" && d < "2026-01-01 00:00:00"
		}},
		{`[["status","E","A"],["last_activity","DP","TY"]]`, func(r map[string]any) bool {
			return r["status"] == "A" && r["last_activity"].(string) >= "2025-01-01 00:00:00"
		}},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			rec.reset()
			a := get(t, c.URL+"/tickets?_perPage=1000&_sortField=id&_filters="+url.QueryEscape(tc.raw))
			require.Equal(t, http.StatusOK, a.status, string(a.body))
			require.Len(t, rec.requests(), 1)
			var recs []map[string]any
			require.NoError(t, json.Unmarshal(a.body, &recs))
			require.NotEmpty(t, recs)
			assert.Less(t, len(recs), total)
			for _, r := range recs {
				assert.True(t, tc.keep(r), "%v", r)
			}
			assert.Equal(t, recordIDs(backendList(t, b, "/tickets", tc.raw)), recordIDs(recs))
			// And none that the filter drops: the unfiltered list, sieved here.
			var want []string
			for _, r := range backendList(t, b, "/tickets", "") {
				if tc.keep(r) {
					want = append(want, strconv.FormatInt(int64(r["id"].(float64)), 10))
				}
			}
			assert.Equal(t, want, recordIDs(recs))
		})
	}
}
