package reference

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/ticketfilter"
)

func kindNamed(name string) *kind {
	for i := range kinds {
		if kinds[i].name == name {
			return &kinds[i]
		}
	}
	return nil
}

// ticketJSONFields returns the JSON names of Ticket's returned fields.
func ticketJSONFields() []string {
	var out []string
	for f := range reflect.TypeFor[Ticket]().Fields() {
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "-" {
			out = append(out, name)
		}
	}
	return out
}

func TestRecordFields(t *testing.T) {
	b := New(Config{Seed: 3, Records: 50})
	want := map[string][]string{
		// LiveAgent's CallListItem, TimeReportRow, PhoneNumber (with a
		// date_created of the backend's own) and TicketHistory.
		"calls": {"id", "ticketId", "type", "fromNumber", "fromName", "toNumber", "toName", "viaNumber",
			"dateCreated", "dateAnswered", "dateFinished", "callDuration"},
		"grid/reports/time": {"id", "agentid", "agent", "conversationid", "contactid", "customer", "reportdate",
			"reportedtime", "spenttime", "dateinvoiced", "note"},
		"phone_numbers": {"id", "type", "number", "name", "departmentid", "status", "record_in_call", "record_out_call",
			"dial_out_prefix", "date_created"},
		"tickets/history": {"id", "conversation_id", "conversation_code", "department_id", "department_name", "agent_id",
			"status", "date_from", "date_to", "elapsed_time"},
		"tickets": ticketJSONFields(),
	}
	require.Len(t, want["tickets"], 18)
	require.ElementsMatch(t, Lists(), slices.Collect(maps.Keys(want)))
	for l, fields := range want {
		for _, r := range get(t, b, "/"+l+"?_perPage=50").recs {
			var got []string
			for f := range r {
				got = append(got, f)
			}
			require.ElementsMatch(t, fields, got, "%s record %v", l, r["id"])
			for _, f := range kindNamed(l).sortable {
				assert.Contains(t, r, f, "%s sorts by a field it returns", l)
			}
			for _, f := range kindNamed(l).fields {
				assert.Contains(t, r, f.name, "%s filters on a field it returns", l)
			}
		}
	}
}

var (
	dateTimeRE   = regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$`)
	ticketCodeRE = regexp.MustCompile(`^[A-Z]{3}-\d{5}$`)
	e164RE       = regexp.MustCompile(`^\+[1-9]\d{7,14}$`)
)

func TestTicketsAreCoherent(t *testing.T) {
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b := New(Config{Seed: 4, Records: 2000})
	oldest := dateTime(epoch.Add(-dataSpan))
	seen := map[string]map[string]bool{"status": {}, "channel": {}, "tag": {}}
	for _, r := range b.lists["tickets"].recs {
		tk := r.ticket
		require.NotNil(t, tk)
		assert.Regexp(t, ticketCodeRE, tk.Code)
		assert.Contains(t, tk.PublicAccessURL, tk.Code)
		assert.Contains(t, ticketfilter.CodeValues(ticketfilter.StatusCodes()), tk.Status)
		assert.Contains(t, ticketfilter.CodeValues(ticketfilter.ChannelTypes()), tk.ChannelType)
		assert.Len(t, tk.CustomFields, 4)
		assert.True(t, slices.IsSortedFunc(tk.Tags, func(a, b string) int {
			return slices.Index(tagCodes, a) - slices.Index(tagCodes, b)
		}) && len(slices.Compact(slices.Clone(tk.Tags))) == len(tk.Tags), "tags are distinct codes: %v", tk.Tags)
		for _, d := range []string{tk.DateCreated, tk.DateChanged, tk.LastActivity, tk.LastActivityPublic} {
			assert.Regexp(t, dateTimeRE, d)
			assert.True(t, oldest <= d && d <= dateTime(epoch), "%s within the two years before the epoch", d)
		}
		assert.LessOrEqual(t, tk.DateCreated, tk.LastActivityPublic)
		assert.LessOrEqual(t, tk.LastActivityPublic, tk.LastActivity)
		assert.Equal(t, tk.DateChanged, tk.LastActivity)
		if tk.Status == "R" || tk.Status == "L" {
			assert.Equal(t, tk.DateChanged, tk.DateResolved)
		} else {
			assert.Empty(t, tk.DateResolved, "a %s ticket is unresolved", tk.Status)
		}
		require.NotEmpty(t, tk.Messages)
		assert.Empty(t, tk.Messages[0].UserID, "the customer writes first")
		assert.Equal(t, tk.DateCreated, tk.Messages[0].DateCreated)
		assert.True(t, slices.IsSortedFunc(tk.Messages, func(a, b Message) int { return strings.Compare(a.DateCreated, b.DateCreated) }))
		seen["status"][tk.Status] = true
		seen["channel"][tk.ChannelType] = true
		for _, tag := range tk.Tags {
			seen["tag"][tag] = true
		}
	}
	assert.Len(t, seen["status"], len(ticketfilter.StatusCodes()), "every LiveAgent status occurs")
	assert.Len(t, seen["channel"], len(ticketfilter.ChannelTypes()), "every LiveAgent channel occurs")
	assert.Len(t, seen["tag"], len(tagCodes))
}

func TestOtherRecordsArePlausible(t *testing.T) {
	b := New(Config{Seed: 5, Records: 500})
	epoch := dateTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	types := map[string]int{}
	for _, c := range get(t, b, "/calls?_perPage=500").recs {
		types[c["type"].(string)]++
		assert.Regexp(t, dateTimeRE, c["dateCreated"])
		assert.Less(t, c["dateCreated"], epoch)
		assert.Regexp(t, `^\d+$`, c["ticketId"])
		assert.NotEmpty(t, c["fromName"])
		assert.NotEmpty(t, c["toName"])
		if c["type"] == "T" {
			assert.Regexp(t, `^1\d\d$`, c["fromNumber"], "internal calls go between extensions")
			assert.Regexp(t, `^1\d\d$`, c["toNumber"])
			assert.NotEqual(t, c["fromNumber"], c["toNumber"])
			assert.Nil(t, c["viaNumber"])
		} else {
			assert.Regexp(t, e164RE, c["fromNumber"])
			assert.Regexp(t, e164RE, c["toNumber"])
			assert.Contains(t, ownLines, c["viaNumber"])
			assert.Contains(t, []any{c["fromNumber"], c["toNumber"]}, c["viaNumber"], "the own line is one end")
		}
		assert.Less(t, c["dateCreated"], c["dateFinished"])
		if c["dateAnswered"] != nil {
			assert.Regexp(t, `^[1-9]\d*$`, c["callDuration"])
			assert.Less(t, c["dateCreated"], c["dateAnswered"])
			assert.Less(t, c["dateAnswered"], c["dateFinished"])
		} else {
			assert.Equal(t, "0", c["callDuration"])
		}
	}
	assert.Len(t, types, 3, "incoming, outgoing and internal calls: %v", types)
	for _, p := range get(t, b, "/phone_numbers?_perPage=500").recs {
		assert.Regexp(t, e164RE, p["number"])
		assert.Contains(t, phoneNumberTypes, p["type"])
		assert.Contains(t, []string{"A", "I"}, p["status"])
		assert.IsType(t, true, p["record_in_call"])
	}
	for _, row := range get(t, b, "/grid/reports/time?_perPage=500").recs {
		assert.Regexp(t, `^\d{4}-\d\d-\d\d 00:00:00$`, row["reportdate"])
		assert.Regexp(t, `^[1-9]\d*$`, row["reportedtime"])
		if row["dateinvoiced"] != nil {
			assert.Greater(t, row["dateinvoiced"], row["reportdate"])
		}
	}
	codes := map[string]string{}
	for _, h := range get(t, b, "/tickets/history?_perPage=500").recs {
		assert.Contains(t, ticketfilter.CodeValues(ticketfilter.StatusCodes()), h["status"])
		assert.Regexp(t, ticketCodeRE, h["conversation_code"])
		if code, seen := codes[h["conversation_id"].(string)]; seen {
			assert.Equal(t, code, h["conversation_code"], "one ticket, one code")
		}
		codes[h["conversation_id"].(string)] = h["conversation_code"].(string)
		if h["date_to"] != nil {
			assert.Less(t, h["date_from"], h["date_to"])
		}
		assert.Regexp(t, `^[1-9]\d*$`, h["elapsed_time"])
	}
}

func TestIDsAscendWithGaps(t *testing.T) {
	b := New(Config{Seed: 6, Records: 3000})
	for _, l := range Lists() {
		ids := b.IDs(l)
		require.Len(t, ids, 3000)
		prev := int64(0)
		for _, id := range ids {
			require.Greater(t, id, prev)
			require.LessOrEqual(t, id-prev, int64(maxGap))
			prev = id
		}
		assert.Greater(t, prev, int64(3000*5), "%s: gaps leave room to insert", l)
	}
}

func TestTicketsEncodeAsJSONMarshalWould(t *testing.T) {
	b := New(Config{Seed: 9, Records: 500})
	for _, r := range b.lists["tickets"].recs {
		require.Equal(t, string(encode(r.ticket)), string(r.json))
	}
	odd := &Ticket{Subject: "<b>\"Ärger\" & more</b>\n", CustomFields: map[string]string{"z": "1", "a": "\u2028"}}
	assert.Equal(t, string(encode(odd)), string(encodeTicket(odd)), "escapes, null tags, key order")
}

func TestKindsFitSortKeys(t *testing.T) {
	for _, k := range kinds {
		assert.LessOrEqual(t, len(k.sortable), len(sortKeys{}), k.name)
		assert.NotContains(t, k.sortable, "id", "%s: id is always sortable", k.name)
	}
}

func TestDataSetIsDeterministic(t *testing.T) {
	pages := func(cfg Config) map[string][]byte {
		b := New(cfg)
		out := map[string][]byte{}
		for _, l := range Lists() {
			out[l] = get(t, b, "/"+l+"?_perPage=200&_sortField=id").body
		}
		return out
	}
	a := pages(Config{Seed: 7, Records: 200})
	same := pages(Config{Seed: 7, Records: 200, Now: func() time.Time { return time.Unix(0, 0) }})
	other := pages(Config{Seed: 8, Records: 200})
	for _, l := range Lists() {
		assert.Equal(t, string(a[l]), string(same[l]), "%s: the same seed gives the same bytes, whatever the clock", l)
		assert.NotEqual(t, string(a[l]), string(other[l]), "%s: another seed, another data set", l)
	}

	// The epoch moves every date with it, and nothing else.
	shifted := pages(Config{Seed: 7, Records: 200, DataEpoch: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)})
	var x, y []map[string]any
	require.NoError(t, json.Unmarshal(a["calls"], &x))
	require.NoError(t, json.Unmarshal(shifted["calls"], &y))
	assert.Equal(t, x[0]["id"], y[0]["id"])
	assert.Equal(t, x[0]["callDuration"], y[0]["callDuration"])
	assert.True(t, strings.HasPrefix(y[0]["dateCreated"].(string), "202"), y[0]["dateCreated"])
	assert.NotEqual(t, x[0]["dateCreated"], y[0]["dateCreated"])
}

func TestDateTime(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		tm := time.Unix(r.Int64N(1<<35), 0).UTC()
		require.Equal(t, tm.Format(time.DateTime), dateTime(tm))
	}
	assert.Equal(t, "0001-01-01 00:00:00", dateTime(time.Time{}))
	assert.Equal(t, "2024-02-29", day(time.Date(2024, 2, 29, 23, 59, 59, 0, time.UTC)))
}

// TestIDsOfASeedStay pins the ids a seed gives, before and after churn:
// the gateway's tests and the benchmarks rely on them, and a record maker
// that changes how many values it draws would move them (see gen). The
// fingerprints were taken before the records took LiveAgent's fields.
func TestIDsOfASeedStay(t *testing.T) {
	want := map[uint64]map[string]string{
		1: {"calls": "f9c4f2754313c2c3", "grid/reports/time": "542ab2018021bf5f", "phone_numbers": "871738ef130fca4e",
			"tickets/history": "16447e0dd1b5e0b7", "tickets": "408e7ec0a89980fe"},
		4: {"calls": "fa1c854a9d7fd822", "grid/reports/time": "d42e220a4e95089f", "phone_numbers": "5bfa2ae9954d2bc2",
			"tickets/history": "5a8f483e91e085a5", "tickets": "123304b0ed22f241"},
	}
	for seed, lists := range want {
		b := New(Config{Seed: seed, Records: 3000})
		b.Churn(50) // inserts make records too, from the churn's stream
		for l, fingerprint := range lists {
			h := fnv.New64a()
			for _, id := range b.IDs(l) {
				fmt.Fprintf(h, "%d,", id)
			}
			assert.Equal(t, fingerprint, fmt.Sprintf("%x", h.Sum64()), "seed %d, %s", seed, l)
		}
	}
}
