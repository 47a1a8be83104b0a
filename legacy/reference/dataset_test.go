package reference

import (
	"encoding/json"
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
		"calls":             {"id", "date", "direction", "from", "to", "duration", "agentid", "status", "recording_url"},
		"grid/reports/time": {"id", "agentid", "date", "ticketid", "seconds", "billable", "note"},
		"phone_numbers":     {"id", "number", "name", "type", "departmentid", "active", "date_created"},
		"tickets/history":   {"id", "ticketid", "date", "userid", "type", "from", "to"},
		"tickets":           ticketJSONFields(),
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
		assert.Contains(t, statuses, tk.Status)
		assert.Contains(t, channels, tk.ChannelType)
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
		if tk.Status == "resolved" || tk.Status == "closed" {
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
	assert.Len(t, seen["status"], len(statuses), "every status occurs")
	assert.Len(t, seen["channel"], len(channels))
	assert.Len(t, seen["tag"], len(tagCodes))
}

func TestOtherRecordsArePlausible(t *testing.T) {
	b := New(Config{Seed: 5, Records: 500})
	for _, c := range get(t, b, "/calls?_perPage=500").recs {
		assert.Regexp(t, dateTimeRE, c["date"])
		assert.Regexp(t, e164RE, c["from"])
		assert.Regexp(t, e164RE, c["to"])
		if c["status"] == "answered" {
			assert.Positive(t, c["duration"])
			assert.NotNil(t, c["recording_url"])
		} else {
			assert.Zero(t, c["duration"])
			assert.Nil(t, c["recording_url"])
		}
	}
	for _, p := range get(t, b, "/phone_numbers?_perPage=500").recs {
		assert.Regexp(t, e164RE, p["number"])
		assert.Contains(t, []string{"landline", "mobile", "toll_free"}, p["type"])
	}
	for _, row := range get(t, b, "/grid/reports/time?_perPage=500").recs {
		assert.Regexp(t, `^\d{4}-\d\d-\d\d$`, row["date"])
		assert.Positive(t, row["seconds"])
	}
	for _, h := range get(t, b, "/tickets/history?_perPage=500").recs {
		changes := h["type"] == "status_change" || h["type"] == "assignment"
		assert.Equal(t, changes, h["from"] != nil, "%v", h)
		assert.Equal(t, changes, h["to"] != nil, "%v", h)
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
	assert.Equal(t, x[0]["duration"], y[0]["duration"])
	assert.True(t, strings.HasPrefix(y[0]["date"].(string), "202"), y[0]["date"])
	assert.NotEqual(t, x[0]["date"], y[0]["date"])
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
