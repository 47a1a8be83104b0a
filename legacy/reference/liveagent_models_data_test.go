package reference

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLiveAgentModelCheckerRefuses shows that the checker of
// liveagent_models_test.go bites: each record breaks one rule of the
// table, and the checker names it.
func TestLiveAgentModelCheckerRefuses(t *testing.T) {
	phone := `"id":7,"type":"A","number":"+447000000001","status":"A","record_in_call":true,"dial_out_prefix":%s`
	for _, tc := range []struct {
		name, list, record, want string // want "" means accepted
	}{
		{"a phone number as LiveAgent has it", "phone_numbers", `{` + fmt.Sprintf(phone, "1") + `}`, ""},
		{"the largest prefix", "phone_numbers", `{` + fmt.Sprintf(phone, "999") + `}`, ""},
		{"dial_out_prefix 0", "phone_numbers", `{` + fmt.Sprintf(phone, "0") + `}`, "dial_out_prefix: 0 is outside [1, 999]"},
		{"dial_out_prefix 1000", "phone_numbers", `{` + fmt.Sprintf(phone, "1000") + `}`, "dial_out_prefix: 1000 is outside [1, 999]"},
		{"dial_out_prefix a string", "phone_numbers", `{` + fmt.Sprintf(phone, `"5"`) + `}`, "dial_out_prefix: 5 (string) is not a whole number"},
		{"dial_out_prefix a fraction", "phone_numbers", `{` + fmt.Sprintf(phone, "1.5") + `}`, "is not a whole number"},
		{"no number", "phone_numbers", `{"id":7,"status":"A"}`, "number is required by PhoneNumber, and is missing"},
		{"a null number", "phone_numbers", `{"id":7,"number":null}`, "number is required by PhoneNumber, and is null"},
		{"a phone type LiveAgent lacks", "phone_numbers", `{"id":7,"number":"1","type":"X"}`, `type: "X" is not one of [A C T T-O S]`},
		{"a boolean as a string", "phone_numbers", `{"id":7,"number":"1","record_in_call":"Y"}`, "record_in_call: Y (string) is not a boolean"},
		{"a field of the backend's own", "phone_numbers", `{"id":7,"number":"1","date_created":"2025-01-01 00:00:00"}`, ""},
		{"a snake_case call field", "calls", `{"id":1,"ticket_id":"2"}`, "ticket_id is not a field of CallListItem"},
		{"a null optional field", "calls", `{"id":1,"dateAnswered":null,"viaNumber":null}`, ""},
		{"a call type LiveAgent lacks", "calls", `{"id":1,"type":"incoming"}`, `type: "incoming" is not one of [I O T]`},
		{"an ISO date-time", "calls", `{"id":1,"dateCreated":"2025-01-01T00:00:00Z"}`, "is not a date-time YYYY-MM-DD hh:mm:ss"},
		{"a date that is not", "tickets/history", `{"id":1,"date_from":"2025-02-30 00:00:00"}`, "is not a date-time"},
		{"a duration as a number", "calls", `{"id":1,"callDuration":60}`, "callDuration: 60 (json.Number) is not a string"},
		{"an id that is not a whole number", "calls", `{"id":1.5}`, "id: 1.5 (json.Number) is not an id"},
		{"a time row's id as a string", "grid/reports/time", `{"id":"1"}`, "id: 1 (string) is not a whole number"},
		{"custom fields as an object", "tickets", `{"id":1,"custom_fields":{"region":"EU"}}`, "custom_fields: map[region:EU]"},
		{"custom fields as LiveAgent has them", "tickets", `{"id":1,"custom_fields":[{"code":"region","value":"EU"}]}`, ""},
		{"a ticket status LiveAgent lacks", "tickets", `{"id":1,"status":"open"}`, `status: "open" is not one of`},
		{"a channel LiveAgent lacks", "tickets", `{"id":1,"channel_type":"Z"}`, `channel_type: "Z" is not one of`},
		{"an unresolved ticket", "tickets", `{"id":1,"date_resolved":""}`, ""},
		{"a tag that is not text", "tickets", `{"id":1,"tags":[1]}`, "tags: [1] ([]interface {}) is not a list of strings"},
		{"not an object", "tickets", `[1]`, "not a JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := modelOf(tc.list)
			require.NotNil(t, m)
			got := m.violations([]byte(tc.record))
			if tc.want == "" {
				assert.Empty(t, got)
				return
			}
			require.Len(t, got, 1, "%v", got)
			assert.Contains(t, got[0], tc.want)
		})
	}
}

// TestRecordsFitLiveAgentModels holds every record of every list to the
// rules LiveAgent's published models put on it (liveagent_models_test.go):
// the default data set of the Caddyfile (seed 1, 20,000 records a list),
// with records the churn inserted, and smaller data sets of 16 other
// seeds, as the backend stores them and as it serves them. Under the race
// detector it runs smaller (see raceEnabled).
func TestRecordsFitLiveAgentModels(t *testing.T) {
	for _, l := range Lists() {
		require.NotNil(t, modelOf(l), "%s has a LiveAgent model in the table", l)
	}
	require.Len(t, liveAgentModels, len(Lists()), "no model without a list")

	check := func(t *testing.T, b *Backend) {
		t.Helper()
		for _, l := range Lists() {
			m := modelOf(l)
			var served []json.RawMessage
			require.NoError(t, json.Unmarshal(get(t, b, "/"+l+"?_perPage=500").body, &served))
			require.NotEmpty(t, served)
			records := make([][]byte, 0, len(b.lists[l].recs)+len(served))
			for _, r := range b.lists[l].recs {
				records = append(records, r.json)
			}
			for _, raw := range served {
				records = append(records, raw)
			}
			bad := 0
			for _, raw := range records {
				if v := m.violations(raw); len(v) > 0 {
					if bad++; bad <= 3 { // a few, not 20,000 alike
						t.Errorf("%s: %s refuses %v\n%s", l, m.model, v, raw)
					}
				}
			}
			assert.Zero(t, bad, "%s: records %s refuses, stored or served", l, m.model)
		}
	}

	records, seeds := 20000, uint64(16) // the Caddyfile's data set, and 16 more seeds
	if raceEnabled {
		records, seeds = 2000, 3
	}
	t.Run("the default data set", func(t *testing.T) {
		b := New(Config{Seed: 1, Records: records})
		b.Churn(500) // inserts make records from the churn's stream
		check(t, b)
	})
	t.Run("other seeds", func(t *testing.T) {
		for seed := uint64(2); seed <= 1+seeds && !t.Failed(); seed++ {
			b := New(Config{Seed: seed, Records: 1000})
			b.Churn(50)
			check(t, b)
		}
	})
}
