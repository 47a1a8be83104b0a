package reference

import (
	"maps"
	"net/url"
	"slices"
	"testing"
	"time"
	_ "time/tzdata" // the DST cases need Europe/Berlin wherever the tests run

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/ticketfilter"
)

// TestPeriodBounds pins every DP code's span at the boundaries where a
// calendar computation goes wrong: a week seen from its Monday and its
// Sunday, a month's first and last second, a year's turn, a leap day and
// a DST change.
func TestPeriodBounds(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	at := func(y int, m time.Month, d, h, mi, s int) time.Time { return time.Date(y, m, d, h, mi, s, 0, time.UTC) }
	for _, tc := range []struct {
		name     string
		now      time.Time
		code     string
		from, to string
	}{
		{"today, first second", at(2024, 3, 13, 0, 0, 0), "T", "2024-03-13 00:00:00", "2024-03-14 00:00:00"},
		{"today, last second", at(2024, 3, 13, 23, 59, 59), "T", "2024-03-13 00:00:00", "2024-03-14 00:00:00"},
		{"today on a DST day", time.Date(2024, 3, 31, 12, 0, 0, 0, berlin), "T", "2024-03-31 00:00:00", "2024-04-01 00:00:00"},
		{"yesterday on the 1st of a leap March", at(2024, 3, 1, 8, 0, 0), "Y", "2024-02-29 00:00:00", "2024-03-01 00:00:00"},
		{"yesterday on New Year's Day", at(2025, 1, 1, 0, 0, 0), "Y", "2024-12-31 00:00:00", "2025-01-01 00:00:00"},

		{"last 7 days end with today", at(2024, 3, 13, 15, 30, 0), "L7D", "2024-03-06 00:00:00", "2024-03-14 00:00:00"},
		{"last 7 days over a DST change", time.Date(2024, 4, 2, 12, 0, 0, 0, berlin), "L7D", "2024-03-26 00:00:00", "2024-04-03 00:00:00"},
		{"last 30 days over a leap day", at(2024, 3, 13, 15, 30, 0), "L30D", "2024-02-12 00:00:00", "2024-03-14 00:00:00"},
		{"last 90 days over a year end", at(2024, 3, 13, 15, 30, 0), "L90D", "2023-12-14 00:00:00", "2024-03-14 00:00:00"},

		{"this week from its Monday", at(2024, 3, 11, 0, 0, 0), "TW", "2024-03-11 00:00:00", "2024-03-18 00:00:00"},
		{"this week from its Sunday", at(2024, 3, 17, 23, 59, 59), "TW", "2024-03-11 00:00:00", "2024-03-18 00:00:00"},
		{"this week over a month end", at(2024, 5, 1, 9, 0, 0), "TW", "2024-04-29 00:00:00", "2024-05-06 00:00:00"},
		{"last week from a Monday", at(2024, 3, 11, 0, 0, 0), "LW", "2024-03-04 00:00:00", "2024-03-11 00:00:00"},
		{"last week from a Sunday", at(2024, 3, 17, 10, 0, 0), "LW", "2024-03-04 00:00:00", "2024-03-11 00:00:00"},
		{"last week over a year end", at(2025, 1, 2, 8, 0, 0), "LW", "2024-12-23 00:00:00", "2024-12-30 00:00:00"},
		{"last 2 weeks from a Wednesday", at(2024, 3, 13, 8, 0, 0), "L2W", "2024-02-26 00:00:00", "2024-03-11 00:00:00"},
		{"last 2 weeks from a Sunday", at(2024, 3, 17, 8, 0, 0), "L2W", "2024-02-26 00:00:00", "2024-03-11 00:00:00"},
		{"last working week from a Monday", at(2024, 3, 11, 0, 0, 0), "LWW", "2024-03-04 00:00:00", "2024-03-09 00:00:00"},
		{"last working week from a Saturday", at(2024, 3, 16, 12, 0, 0), "LWW", "2024-03-04 00:00:00", "2024-03-09 00:00:00"},
		{"last working week from a Sunday", at(2024, 3, 17, 23, 59, 59), "LWW", "2024-03-04 00:00:00", "2024-03-09 00:00:00"},
		{"last working week over a year end", at(2025, 1, 1, 0, 0, 0), "LWW", "2024-12-23 00:00:00", "2024-12-28 00:00:00"},

		{"this month on its first second", at(2024, 3, 1, 0, 0, 0), "TM", "2024-03-01 00:00:00", "2024-04-01 00:00:00"},
		{"this month on the 31st", at(2024, 1, 31, 23, 59, 59), "TM", "2024-01-01 00:00:00", "2024-02-01 00:00:00"},
		{"this month in a leap February", at(2024, 2, 29, 12, 0, 0), "TM", "2024-02-01 00:00:00", "2024-03-01 00:00:00"},
		{"last month from March 31st", at(2024, 3, 31, 8, 0, 0), "LM", "2024-02-01 00:00:00", "2024-03-01 00:00:00"},
		{"last month in January", at(2025, 1, 31, 8, 0, 0), "LM", "2024-12-01 00:00:00", "2025-01-01 00:00:00"},

		{"this year on its first second", at(2025, 1, 1, 0, 0, 0), "TY", "2025-01-01 00:00:00", "2026-01-01 00:00:00"},
		{"this year on its last second", at(2024, 12, 31, 23, 59, 59), "TY", "2024-01-01 00:00:00", "2025-01-01 00:00:00"},
		{"last year on New Year's Day", at(2025, 1, 1, 0, 0, 0), "LY", "2024-01-01 00:00:00", "2025-01-01 00:00:00"},
		{"last year on New Year's Eve", at(2024, 12, 31, 23, 59, 59), "LY", "2023-01-01 00:00:00", "2024-01-01 00:00:00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			from, to, err := period(tc.code, tc.now)
			require.NoError(t, err)
			assert.Equal(t, tc.from, from, "from")
			assert.Equal(t, tc.to, to, "to")
		})
	}
}

func TestEveryLiveAgentPeriodIsImplemented(t *testing.T) {
	for _, c := range ticketfilter.PeriodCodes() {
		from, to, err := period(c.Code, time.Now())
		require.NoError(t, err, c.Code)
		assert.Less(t, from, to, c.Code)
	}
	for _, invented := range []string{"today", "last_7_days", "t", "l7d", ""} {
		_, _, err := period(invented, time.Now())
		assert.ErrorContains(t, err, "the backend knows LiveAgent's period codes T, Y, L7D", invented)
	}
}

// TestFilterTicketsPeriods filters tickets whose dates sit on each side of
// every boundary, so that each code keeps exactly the tickets in its span.
func TestFilterTicketsPeriods(t *testing.T) {
	loc := time.FixedZone("UTC+1", 3600)
	now := time.Date(2024, 3, 13, 15, 30, 0, 0, loc) // a Wednesday
	dates := []string{
		1:  "2024-03-13 15:30:00", // now
		2:  "2024-03-13 23:59:59", // end of today
		3:  "2024-03-14 00:00:00", // tomorrow
		4:  "2024-03-13 00:00:00", // start of today
		5:  "2024-03-12 23:59:59", // end of yesterday
		6:  "2024-03-11 00:00:00", // Monday of this week
		7:  "2024-03-10 23:59:59", // Sunday of last week
		8:  "2024-03-09 00:00:00", // Saturday of last week
		9:  "2024-03-08 23:59:59", // end of last working week
		10: "2024-03-06 00:00:00", // start of the last 7 days
		11: "2024-03-05 23:59:59",
		12: "2024-03-04 00:00:00", // Monday of last week
		13: "2024-03-03 23:59:59", // Sunday two weeks ago
		14: "2024-03-01 00:00:00", // start of this month
		15: "2024-02-29 23:59:59", // end of last month
		16: "2024-02-26 00:00:00", // start of the last 2 weeks
		17: "2024-02-25 23:59:59",
		18: "2024-02-12 00:00:00", // start of the last 30 days
		19: "2024-02-11 23:59:59",
		20: "2024-02-01 00:00:00", // start of last month
		21: "2024-01-31 23:59:59",
		22: "2024-01-01 00:00:00", // start of this year
		23: "2023-12-31 23:59:59", // end of last year
		24: "2023-12-14 00:00:00", // start of the last 90 days
		25: "2023-12-13 23:59:59",
		26: "2023-01-01 00:00:00", // start of last year
		27: "2022-12-31 23:59:59",
		28: "", // never resolved
	}
	var tickets []*Ticket
	for id := 1; id < len(dates); id++ {
		tickets = append(tickets, &Ticket{ID: int64(id), DateResolved: dates[id]})
	}
	span := func(from, to int64) []int64 {
		var out []int64
		for id := from; id <= to; id++ {
			out = append(out, id)
		}
		return out
	}
	for code, want := range map[string][]int64{
		"T":    {1, 2, 4},
		"Y":    {5},
		"L7D":  append([]int64{1, 2}, span(4, 10)...),
		"L30D": append([]int64{1, 2}, span(4, 18)...),
		"L90D": append([]int64{1, 2}, span(4, 24)...),
		"TW":   span(1, 6),
		"LW":   span(7, 12),
		"L2W":  span(7, 16),
		"LWW":  span(9, 12),
		"TM":   span(1, 14),
		"LM":   span(15, 20),
		"TY":   span(1, 22),
		"LY":   span(23, 26),
	} {
		t.Run(code, func(t *testing.T) {
			got, err := filterTickets(tickets, `[["date_resolved","DP","`+code+`"]]`, now)
			require.NoError(t, err)
			assert.Equal(t, want, filteredTicketIDs(got))
		})
	}
}

// TestPeriodsFollowTheBackendClock checks that DP is relative to the
// backend's clock: by default the last second of its data set, so that
// every period a client tries holds records, whatever the wall clock says.
func TestPeriodsFollowTheBackendClock(t *testing.T) {
	b := New(Config{Seed: 2, Records: 3000})
	created := func(raw string) []string {
		var out []string
		for _, r := range get(t, b, "/tickets?_perPage=1000&_sortField=id&_filters="+url.QueryEscape(raw)).recs {
			out = append(out, r["date_created"].(string))
		}
		return out
	}
	// The default clock reads 2025-12-31 23:59:59, a Wednesday.
	for _, tc := range []struct{ code, from, to string }{
		{"T", "2025-12-31 00:00:00", "2026-01-01 00:00:00"},
		{"Y", "2025-12-30 00:00:00", "2025-12-31 00:00:00"},
		{"LW", "2025-12-22 00:00:00", "2025-12-29 00:00:00"},
		{"LWW", "2025-12-22 00:00:00", "2025-12-27 00:00:00"},
		{"LM", "2025-11-01 00:00:00", "2025-12-01 00:00:00"},
		{"LY", "2024-01-01 00:00:00", "2025-01-01 00:00:00"},
	} {
		got := created(`[["date_created","DP","` + tc.code + `"]]`)
		require.NotEmpty(t, got, tc.code)
		for _, d := range got {
			assert.True(t, tc.from <= d && d < tc.to, "%s: %s outside [%s, %s)", tc.code, d, tc.from, tc.to)
		}
		// The same span written as comparisons selects the same tickets.
		same := created(`[["date_created","D>=","` + tc.from + `"],["date_created","D<","` + tc.to + `"]]`)
		assert.Equal(t, same, got, tc.code)
	}

	// A clock of one's own moves the periods with it.
	moved := New(Config{Seed: 2, Records: 3000, Now: func() time.Time { return time.Date(2025, 6, 15, 12, 0, 0, 0, time.UTC) }})
	got := get(t, moved, "/tickets?_perPage=1000&_filters="+url.QueryEscape(`[["date_created","DP","TM"]]`)).recs
	require.NotEmpty(t, got)
	months := map[string]bool{}
	for _, r := range got {
		months[r["date_created"].(string)[:7]] = true
	}
	assert.Equal(t, []string{"2025-06"}, slices.Sorted(maps.Keys(months)))
}
