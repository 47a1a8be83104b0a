package reference

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestListFilters filters each cursor list through the backend and checks
// the answer against the list filtered here, by a predicate written apart
// from the backend's code, on the records as a client decodes them.
func TestListFilters(t *testing.T) {
	b := New(Config{Seed: 3, Records: 600})
	str := func(r map[string]any, f string) string { s, _ := r[f].(string); return s }
	num := func(r map[string]any, f string) float64 {
		switch v := r[f].(type) {
		case float64:
			return v
		case string:
			n, err := strconv.ParseFloat(v, 64)
			require.NoError(t, err, "%s %q", f, v)
			return n
		}
		t.Fatalf("%s: %v is not a number", f, r[f])
		return 0
	}
	within := func(f, from, to string) func(map[string]any) bool {
		return func(r map[string]any) bool { v := str(r, f); return v != "" && from <= v && v < to }
	}
	for _, tc := range []struct {
		list, raw string
		keep      func(map[string]any) bool
		some      bool // the filter keeps some records and drops others
	}{
		// Keboola's extractor, as it pages /calls.
		{"calls", `[["dateCreated",">=","2025-01-01 00:00:00"],["dateCreated","<=","2025-03-31 23:59:59"]]`,
			within("dateCreated", "2025-01-01 00:00:00", "2025-04-01 00:00:00"), true},
		{"calls", `[["date_created",">","2025-01-01 00:00:00"],["date_created","<","2025-01-31 00:00:00"]]`,
			func(r map[string]any) bool {
				v := str(r, "dateCreated")
				return v > "2025-01-01 00:00:00" && v < "2025-01-31 00:00:00"
			}, true},
		{"calls", `[["date_created","D<=","2024-06-30"]]`, within("dateCreated", "", "2024-07-01 00:00:00"), true},
		{"calls", `[["date_created","D>","2025-06-30"]]`, func(r map[string]any) bool { return str(r, "dateCreated") > "2025-06-30 00:00:00" }, true},
		{"calls", `[["date_created","DP","LM"]]`, within("dateCreated", "2025-11-01 00:00:00", "2025-12-01 00:00:00"), true},
		{"calls", `[["date_answered","DP","TY"]]`, within("dateAnswered", "2025-01-01 00:00:00", "2026-01-01 00:00:00"), true},
		{"calls", `{"type":"I"}`, func(r map[string]any) bool { return r["type"] == "I" }, true},
		{"calls", `[["type","=","T"]]`, func(r map[string]any) bool { return r["type"] == "T" }, true},
		{"calls", `[["type","IN","I,O"]]`, func(r map[string]any) bool { return r["type"] != "T" }, true},
		{"calls", `[["type","NI","I,O"]]`, func(r map[string]any) bool { return r["type"] == "T" }, true},
		{"calls", `[["type","NE","O"]]`, func(r map[string]any) bool { return r["type"] != "O" }, true},
		{"calls", `[["call_duration",">","600"]]`, func(r map[string]any) bool { return num(r, "callDuration") > 600 }, true},
		{"calls", `[["callDuration","<=","600"],["call_duration",">=","1"]]`, func(r map[string]any) bool {
			d := num(r, "callDuration")
			return d >= 1 && d <= 600
		}, true},
		{"calls", `[["date_answered","IE",""]]`, func(r map[string]any) bool { return r["dateAnswered"] == nil }, true},
		{"calls", `[["date_answered","INE",""]]`, func(r map[string]any) bool { return r["dateAnswered"] != nil }, true},
		{"calls", `[["from_name","L","SMITH"]]`, func(r map[string]any) bool { return strings.Contains(str(r, "fromName"), "Smith") }, true},
		{"calls", `[["from_name","NL","smith"]]`, func(r map[string]any) bool { return !strings.Contains(str(r, "fromName"), "Smith") }, true},
		{"calls", `[]`, func(map[string]any) bool { return true }, false},
		{"calls", `{}`, func(map[string]any) bool { return true }, false},

		{"grid/reports/time", `[["reportdate","D>=","2025-01-01 00:00:00"],["reportdate","D<","2025-02-01 00:00:00"]]`,
			within("reportdate", "2025-01-01 00:00:00", "2025-02-01 00:00:00"), true},
		{"grid/reports/time", `[["reportedtime",">=","3600"]]`, func(r map[string]any) bool { return num(r, "reportedtime") >= 3600 }, true},
		{"grid/reports/time", `[["dateinvoiced","INE",""]]`, func(r map[string]any) bool { return r["dateinvoiced"] != nil }, true},
		{"grid/reports/time", `{"agentid":"101"}`, func(r map[string]any) bool { return r["agentid"] == "101" }, true},
		{"grid/reports/time", `[["conversationid","IN","1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20"]]`,
			func(r map[string]any) bool { return num(r, "conversationid") <= 20 }, false},

		{"phone_numbers", `{"status":"I"}`, func(r map[string]any) bool { return r["status"] == "I" }, true},
		{"phone_numbers", `[["type","IN","T,T-O"]]`, func(r map[string]any) bool { return r["type"] == "T" || r["type"] == "T-O" }, true},
		{"phone_numbers", `[["date_created","DP","LY"]]`, within("date_created", "2024-01-01 00:00:00", "2025-01-01 00:00:00"), true},
		{"phone_numbers", `[["record_in_call","E","true"]]`, func(r map[string]any) bool { return r["record_in_call"] == true }, true},
		{"phone_numbers", `[["dialOutPrefix","<","5"]]`, func(r map[string]any) bool { return num(r, "dial_out_prefix") < 5 }, true},

		// date_from is the field Keboola's extractor names on ticket history.
		{"tickets/history", `[["date_from",">=","2025-06-01 00:00:00"],["date_from","<","2025-07-01 00:00:00"]]`,
			within("date_from", "2025-06-01 00:00:00", "2025-07-01 00:00:00"), true},
		{"tickets/history", `[["dateFrom","DP","L90D"]]`, within("date_from", "2025-10-02 00:00:00", "2026-01-01 00:00:00"), true},
		{"tickets/history", `{"status":"C"}`, func(r map[string]any) bool { return r["status"] == "C" }, true},
		{"tickets/history", `[["elapsed_time","<","36000"]]`, func(r map[string]any) bool { return num(r, "elapsed_time") < 36000 }, true},
		{"tickets/history", `[["conversationId","=","15"]]`, func(r map[string]any) bool { return r["conversation_id"] == "15" }, false},
		{"tickets/history", `[["department_name","L","bill"],["agent_id","NI","101,102"]]`, func(r map[string]any) bool {
			return r["department_name"] == "Billing" && r["agent_id"] != "101" && r["agent_id"] != "102"
		}, true},
	} {
		t.Run(tc.list+" "+tc.raw, func(t *testing.T) {
			all := get(t, b, "/"+tc.list+"?_perPage=1000&_sortField=id").recs
			require.Len(t, all, 600)
			var want []int64
			for _, r := range all {
				if tc.keep(r) {
					want = append(want, int64(r["id"].(float64)))
				}
			}
			a := get(t, b, "/"+tc.list+"?_perPage=1000&_sortField=id&_filters="+url.QueryEscape(tc.raw))
			require.Equal(t, http.StatusOK, a.code, string(a.body))
			assert.Equal(t, want, nilIfEmpty(a.ids()))
			if tc.some {
				assert.NotEmpty(t, want, "the case keeps some records")
				assert.Less(t, len(want), len(all), "the case drops some records")
			}
		})
	}
}

func nilIfEmpty(ids []int64) []int64 {
	if len(ids) == 0 {
		return nil
	}
	return ids
}

func TestListFiltersPageTheFilteredList(t *testing.T) {
	b := New(Config{Seed: 3, Records: 600})
	raw := url.QueryEscape(`[["dateCreated",">=","2025-01-01 00:00:00"]]`)
	all := get(t, b, "/calls?_perPage=1000&_sortField=id&_filters="+raw).ids()
	require.Greater(t, len(all), 30)
	page := get(t, b, "/calls?_page=2&_perPage=10&_sortField=id&_filters="+raw)
	assert.Equal(t, all[10:20], page.ids())
}

// TestListFiltersRefuseWhatTheyCannotApply checks that a filter the
// backend cannot apply is a 400 with a message, never a silent no-op.
func TestListFiltersRefuseWhatTheyCannotApply(t *testing.T) {
	b := New(Config{Seed: 3, Records: 50})
	for _, tc := range []struct{ list, raw, want string }{
		{"calls", `[["duration",">","1"]]`, `filter 1 ("duration"): calls has no such field; it filters on id, ticketId, type, fromNumber`},
		{"calls", `{"agentid":"101"}`, `filter 1 ("agentid"): calls has no such field`},
		{"calls", `[["type",">","I"]]`, `filter 1 ("type"): operator ">" does not apply to type, a text field; use E, NE, IN, NI, L, NL, IE, INE, =`},
		{"calls", `[["date_created","L","2024"]]`, `operator "L" does not apply to dateCreated, a date-time field; use D>, D<, D>=, D<=, DP, IE, INE, =, >, <, >=, <=`},
		{"calls", `[["call_duration","L","1"]]`, `operator "L" does not apply to callDuration, a number field`},
		{"calls", `[["type","e","I"]]`, `operator "e" does not apply`},
		{"calls", `[["dateCreated",">=","2024-02-30 00:00:00"]]`, `filter 1 ("dateCreated"): "2024-02-30 00:00:00" is not a real date-time; >= takes a date-time "YYYY-MM-DD hh:mm:ss"`},
		{"calls", `[["dateCreated",">=","2024-01-01T00:00:00Z"]]`, `is not a real date-time`},
		{"calls", `[["dateCreated",">=",""]]`, `"" is not a real date-time`},
		{"calls", `[["date_created","=","yesterday"]]`, `"yesterday" is not a real date-time, and dateCreated is a date-time field`},
		{"calls", `[["call_duration",">","ten"]]`, `"ten" is not a number; > compares numbers`},
		{"calls", `{"call_duration":"long"}`, `"long" is not a number, and callDuration is a number field`},
		{"calls", `[["date_created","DP","last_7_days"]]`, `DP period "last_7_days": the backend knows LiveAgent's period codes T, Y, L7D`},
		{"calls", `[["date_answered","IE","x"]]`, `IE takes the empty value "", not "x"`},
		{"calls", `[["type","IN","I,,O"]]`, `item 2 of the IN list "I,,O" is empty`},
		{"calls", `[["ticket_id","IN","1,x"]]`, `item 2 of the IN list: "x" is not a number`},
		{"calls", `[["from_name","L",""]]`, `L takes the text to look for; the value is empty`},
		{"calls", `[["type","E","I"],["nope","E","x"]]`, `filter 2 ("nope")`},
		{"calls", `not json`, `_filters: not JSON`},
		{"calls", `"type"`, `neither an object nor a list`},
		{"calls", `[["type","E"]]`, `filter 1 is not a triple`},
		{"calls", `[["type","E","I","x"]]`, `filter 1 is not a triple`},
		{"calls", `[["type","E",1]]`, `the field, the operator and the value are strings`},
		{"calls", `{"type":1}`, `the value of "type" is not a string`},
		{"grid/reports/time", `[["date",">","2024-01-01"]]`, `grid/reports/time has no such field; it filters on id, agentid, agent`},
		{"phone_numbers", `[["active","E","true"]]`, `phone_numbers has no such field`},
		{"tickets/history", `[["ticketid","E","1"]]`, `tickets/history has no such field; it filters on id, conversation_id`},
		{"tickets/history", `[["date_from","D>=","2024-13-01 00:00:00"]]`, `"2024-13-01 00:00:00" is not a real date-time`},
	} {
		t.Run(tc.list+" "+tc.raw, func(t *testing.T) {
			a := get(t, b, "/"+tc.list+"?_filters="+url.QueryEscape(tc.raw))
			require.Equal(t, http.StatusBadRequest, a.code, string(a.body))
			assert.Contains(t, a.message(t), tc.want)
			assert.True(t, strings.HasPrefix(a.message(t), "_filters: "), a.message(t))
		})
	}
}

func TestSnakeCase(t *testing.T) {
	for in, want := range map[string]string{
		"dateCreated": "date_created", "date_created": "date_created", "conversationId": "conversation_id",
		"callDuration": "call_duration", "id": "id", "dialOutPrefix": "dial_out_prefix",
	} {
		assert.Equal(t, want, snakeCase(in), in)
	}
}
