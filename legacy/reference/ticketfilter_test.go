package reference

import (
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the DST case needs Europe/Berlin wherever the tests run

	"github.com/helpdesk-gateway/gateway/translate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ticketFilterFixture() []*Ticket {
	return []*Ticket{
		{
			ID: 1, Status: "open", Tags: []string{"vip", "printer"}, ChannelType: "email",
			Subject: "Printer jams on page 2", OwnerContactID: "c1", OwnerEmail: "ann@example.com", OwnerName: "Ann Lee",
			AgentID: "a1", DepartmentID: "d1",
			DateCreated: "2024-03-01 09:00:00", DateChanged: "2024-03-02 10:00:00", DateResolved: "", LastActivity: "2024-03-02 10:00:00",
			CustomFields: map[string]string{"color": "Blue"},
			Messages: []Message{
				{DateCreated: "2024-03-01 09:00:00", UserID: "", Body: "The printer is broken"},
				{DateCreated: "2024-03-01 10:00:00", UserID: "a1", Body: "Try turning it off"},
			},
			SLALevelID: "gold", Groups: []string{"VIP customers"}, SuggestCategories: []string{"10", "11"}, ForumCategories: []string{"20"},
		},
		{
			ID: 2, Status: "pending", ChannelType: "phone",
			Subject: "Scanner offline", OwnerContactID: "c2", OwnerEmail: "bob@example.org", OwnerName: "Bob Stone",
			AgentID: "a2", DepartmentID: "d2",
			DateCreated: "2024-02-28 23:59:59", DateChanged: "2024-03-05 08:00:00", DateResolved: "2024-03-05 08:00:00", LastActivity: "2024-03-05 08:00:00",
			Messages:          []Message{{DateCreated: "2024-03-05 07:00:00", UserID: "a2", Body: "Rebooted the scanner"}},
			SuggestCategories: []string{"11"},
		},
		{
			ID: 3, Status: "closed", Tags: []string{"urgent"}, ChannelType: "email",
			Subject: "Billing question", OwnerContactID: "c3", OwnerEmail: "cy@example.net", OwnerName: "Cy Young",
			AgentID: "a3", DepartmentID: "default",
			DateCreated: "2024-03-10 12:00:00", DateChanged: "2024-03-11 09:00:00", DateResolved: "2024-03-11 09:00:00", LastActivity: "2024-03-11 09:30:00",
			CustomFields: map[string]string{"color": "green", "size": "XL"},
			SLALevelID:   "silver", Groups: []string{"Partners"},
		},
	}
}

func filteredTicketIDs(tickets []*Ticket) []int64 {
	ids := []int64{}
	for _, t := range tickets {
		ids = append(ids, t.ID)
	}
	return ids
}

// ticketFilterNow is the clock of ticketFilterCases, a Wednesday.
var ticketFilterNow = time.Date(2024, 3, 13, 15, 30, 0, 0, time.UTC)

// ticketFilterCases are filters on ticketFilterFixture and the tickets
// each keeps. TestEveryParameterAndOperatorIsFiltered checks that they use
// every operator of every parameter.
var ticketFilterCases = []struct {
	raw  string
	want []int64
}{
	{``, []int64{1, 2, 3}},
	{`[]`, []int64{1, 2, 3}},
	{`{}`, []int64{1, 2, 3}},

	{`[["status","E","open"]]`, []int64{1}},
	{`[["status","E","Open"]]`, []int64{}},
	{`[["status","IN","open,pending"]]`, []int64{1, 2}},
	{`[["status","NI","open"]]`, []int64{2, 3}},
	{`{"status":"closed"}`, []int64{3}},

	{`[["tags","E","vip"]]`, []int64{1}},
	{`[["tags","E","print"]]`, []int64{}},
	{`[["tags","L","PRINT"]]`, []int64{1}},
	{`[["tags","CY","urgent,vip"]]`, []int64{1, 3}},
	{`[["tags","NI","vip"]]`, []int64{2, 3}},
	{`[["tags","NI","vip,urgent"]]`, []int64{2}},
	{`[["tags","IE",""]]`, []int64{2}},
	{`[["tags","INE",""]]`, []int64{1, 3}},
	{`{"tags":"urgent"}`, []int64{3}},

	{`[["channel_type","E","email"]]`, []int64{1, 3}},
	{`[["channel_type","IN","phone,fax"]]`, []int64{2}},

	{`[["subject","E","printer"]]`, []int64{1}},
	{`[["subject","E","JAMS ON"]]`, []int64{1}},
	{`[["subject","IN","scanner,billing"]]`, []int64{2, 3}},
	{`{"subject":"PRINTER"}`, []int64{1}},

	{`[["owner_contactid","E","c2"]]`, []int64{2}},
	{`[["owner_contactid","E","c"]]`, []int64{}},
	{`[["owner_contactid","IN","c1,c3"]]`, []int64{1, 3}},

	{`[["agentid","IN","a1,a2"]]`, []int64{1, 2}},
	{`{"agentid":"a2"}`, []int64{2}},

	{`[["departmentid","E","default"]]`, []int64{3}},
	{`[["departmentid","IN","d1,d2"]]`, []int64{1, 2}},
	{`[["departmentid","NI","d1"]]`, []int64{2, 3}},

	{`[["date_created","D>","2024-03-01 09:00:00"]]`, []int64{3}},
	{`[["date_created","D>=","2024-03-01 09:00:00"]]`, []int64{1, 3}},
	{`[["date_created","D<","2024-03-01 09:00:00"]]`, []int64{2}},
	{`[["date_created","D<=","2024-03-01 09:00:00"]]`, []int64{1, 2}},
	{`[["date_created","D>=","2024-02-29 00:00:00"],["date_created","D<","2024-03-10 00:00:00"]]`, []int64{1}},
	{`[["date_changed","D>","2024-03-05 08:00:00"]]`, []int64{3}},
	{`[["date_resolved","D>","2000-01-01 00:00:00"]]`, []int64{2, 3}},
	{`[["date_resolved","D<","2100-01-01 00:00:00"]]`, []int64{2, 3}},
	{`[["last_activity","D<=","2024-03-05 08:00:00"]]`, []int64{1, 2}},
	{`[["date_created","DP","last_week"]]`, []int64{3}},
	{`[["date_created","DP","this_month"]]`, []int64{1, 3}},
	{`[["date_changed","D<","2024-03-05 08:00:00"]]`, []int64{1}},
	{`[["date_changed","D>=","2024-03-05 08:00:00"]]`, []int64{2, 3}},
	{`[["date_changed","D<=","2024-03-02 10:00:00"]]`, []int64{1}},
	{`[["date_changed","DP","this_week"]]`, []int64{3}},
	{`[["date_resolved","D>=","2024-03-11 09:00:00"]]`, []int64{3}},
	{`[["date_resolved","D<=","2024-03-05 08:00:00"]]`, []int64{2}},
	{`[["date_resolved","DP","last_7_days"]]`, []int64{3}},
	{`[["last_activity","D>","2024-03-05 08:00:00"]]`, []int64{3}},
	{`[["last_activity","D<","2024-03-02 10:00:01"]]`, []int64{1}},
	{`[["last_activity","D>=","2024-03-11 09:30:00"]]`, []int64{3}},
	{`[["last_activity","DP","last_week"]]`, []int64{2}},

	{`[["m_datecreated","D>=","2024-03-01 10:00:00"]]`, []int64{1, 2}},
	{`[["m_datecreated","D<","2024-03-01 09:30:00"]]`, []int64{1}},
	{`[["m_datecreated","DP","this_month"]]`, []int64{1, 2}},
	{`[["m_datecreated","D>","2024-03-01 09:00:00"]]`, []int64{1, 2}},
	{`[["m_datecreated","D<=","2024-03-01 09:00:00"]]`, []int64{1}},

	{`[["m_userid","IN","a1"]]`, []int64{1}},
	{`[["m_userid","IN","a2,a9"]]`, []int64{2}},
	{`{"m_userid":"a1,a2"}`, []int64{1, 2}},

	{`[["sla_levelid","E","gold"]]`, []int64{1}},
	{`[["sla_levelid","NE","gold"]]`, []int64{2, 3}},
	{`[["sla_levelid","IE",""]]`, []int64{2}},
	{`[["sla_levelid","INE",""]]`, []int64{1, 3}},

	{`[["groups","L","vip"]]`, []int64{1}},
	{`[["groups","L","partner"]]`, []int64{3}},
	{`{"groups":"CUSTOMERS"}`, []int64{1}},

	{`[["s_category","IN","11"]]`, []int64{1, 2}},
	{`[["s_category","IN","10,99"]]`, []int64{1}},
	{`[["f_category","IN","20"]]`, []int64{1}},
	{`{"f_category":"21"}`, []int64{}},

	{`[["search","L","ann@"]]`, []int64{1}},
	{`[["search","L","stone"]]`, []int64{2}},
	{`[["search","L","c3"]]`, []int64{3}},
	{`[["search","L","billing"]]`, []int64{3}},
	{`[["search","L","REBOOTED"]]`, []int64{2}},
	{`[["search","L","xl"]]`, []int64{3}},
	{`{"search":"printer"}`, []int64{1}},
	{`{"search":"nothing like it"}`, []int64{}},

	{`[["field_color","E","Blue"]]`, []int64{1}},
	{`[["field_color","E","blue"]]`, []int64{}},
	{`[["field_color","E",""]]`, []int64{2}},
	{`[["field_color","NE","Blue"]]`, []int64{2, 3}},
	{`[["field_color","L","GREEN"]]`, []int64{3}},
	{`[["field_color","NL","e"]]`, []int64{2}},
	{`[["field_size","E","XL"]]`, []int64{3}},
	{`{"field_color":"green"}`, []int64{3}},

	{`[["status","IN","open,closed"],["channel_type","E","email"],["tags","CY","urgent"]]`, []int64{3}},
	{`{"channel_type":"email","search":"blue"}`, []int64{1}},
}

func TestFilterTickets(t *testing.T) {
	for _, tc := range ticketFilterCases {
		t.Run(tc.raw, func(t *testing.T) {
			tickets := ticketFilterFixture()
			got, err := filterTickets(tickets, tc.raw, ticketFilterNow)
			require.NoError(t, err)
			assert.Equal(t, tc.want, filteredTicketIDs(got))
			assert.Equal(t, []int64{1, 2, 3}, filteredTicketIDs(tickets), "the input is left alone")
		})
	}
}

func TestFilterTicketsRefusesInvalidFilters(t *testing.T) {
	now := time.Now()
	for _, raw := range []string{
		`[["status","L","open"]]`,
		`{"date_created":"2024-01-01 00:00:00"}`,
		`[["date_created","DP","last_90_days"]]`, // any short code passes the gateway, not this backend
		`[["owner_email","E","ann@example.com"]]`,
		`not json`,
	} {
		_, err := filterTickets(ticketFilterFixture(), raw, now)
		var fe *translate.FilterError
		require.ErrorAs(t, err, &fe, raw)
		assert.NotEmpty(t, fe.Message)
	}
}

func TestFilterTicketsPeriods(t *testing.T) {
	loc := time.FixedZone("UTC+1", 3600)
	now := time.Date(2024, 3, 13, 15, 30, 0, 0, loc) // a Wednesday
	dates := map[int64]string{
		1:  "2024-03-13 15:30:00", // now
		2:  "2024-03-13 15:30:01", // later today
		3:  "2024-03-13 00:00:00",
		4:  "2024-03-12 23:59:59",
		5:  "2024-03-11 00:00:00", // Monday of this week
		6:  "2024-03-10 23:59:59", // Sunday of last week
		7:  "2024-03-07 00:00:00", // start of the last 7 days
		8:  "2024-03-06 23:59:59",
		9:  "2024-03-04 00:00:00", // Monday of last week
		10: "2024-03-03 23:59:59",
		11: "2024-03-01 00:00:00",
		12: "2024-02-29 23:59:59",
		13: "2024-02-13 00:00:00", // start of the last 30 days
		14: "2024-02-12 23:59:59",
		15: "2024-01-01 00:00:00",
		16: "2023-12-31 23:59:59",
		17: "", // never resolved
	}
	var tickets []*Ticket
	for id := int64(1); id <= 17; id++ {
		tickets = append(tickets, &Ticket{ID: id, DateResolved: dates[id]})
	}
	for period, want := range map[string][]int64{
		"today":        {1, 2, 3},
		"yesterday":    {4},
		"last_7_days":  {1, 3, 4, 5, 6, 7},
		"last_30_days": {1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13},
		"this_week":    {1, 2, 3, 4, 5},
		"last_week":    {6, 7, 8, 9},
		"this_month":   {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11},
		"last_month":   {12, 13, 14},
		"this_year":    {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
	} {
		t.Run(period, func(t *testing.T) {
			got, err := filterTickets(tickets, `[["date_resolved","DP","`+period+`"]]`, now)
			require.NoError(t, err)
			assert.Equal(t, want, filteredTicketIDs(got))
		})
	}
}

func TestTicketPeriodBounds(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	for _, tc := range []struct {
		name     string
		now      time.Time
		code     string
		from, to string
	}{
		{"week from a Sunday", time.Date(2024, 3, 17, 10, 0, 0, 0, time.UTC), "this_week", "2024-03-11 00:00:00", "2024-03-18 00:00:00"},
		{"week from a Monday", time.Date(2024, 3, 11, 0, 0, 0, 0, time.UTC), "this_week", "2024-03-11 00:00:00", "2024-03-18 00:00:00"},
		{"last week over a year end", time.Date(2025, 1, 2, 8, 0, 0, 0, time.UTC), "last_week", "2024-12-23 00:00:00", "2024-12-30 00:00:00"},
		{"last month in January", time.Date(2025, 1, 31, 8, 0, 0, 0, time.UTC), "last_month", "2024-12-01 00:00:00", "2025-01-01 00:00:00"},
		{"this month on the 31st", time.Date(2024, 1, 31, 8, 0, 0, 0, time.UTC), "this_month", "2024-01-01 00:00:00", "2024-02-01 00:00:00"},
		{"yesterday on the 1st", time.Date(2024, 3, 1, 8, 0, 0, 0, time.UTC), "yesterday", "2024-02-29 00:00:00", "2024-03-01 00:00:00"},
		{"last 7 days end this second", time.Date(2024, 3, 13, 15, 30, 0, 999, time.UTC), "last_7_days", "2024-03-07 00:00:00", "2024-03-13 15:30:01"},
		{"last 7 days over a DST change", time.Date(2024, 4, 2, 12, 0, 0, 0, berlin), "last_7_days", "2024-03-27 00:00:00", "2024-04-02 12:00:01"},
		{"today on a DST day", time.Date(2024, 3, 31, 12, 0, 0, 0, berlin), "today", "2024-03-31 00:00:00", "2024-04-01 00:00:00"},
		{"this year", time.Date(2024, 12, 31, 23, 59, 59, 0, time.UTC), "this_year", "2024-01-01 00:00:00", "2025-01-01 00:00:00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			from, to, err := ticketPeriod(tc.code, tc.now)
			require.NoError(t, err)
			assert.Equal(t, tc.from, from)
			assert.Equal(t, tc.to, to)
		})
	}

	_, _, err = ticketPeriod("last_90_days", time.Now())
	assert.ErrorContains(t, err, `DP period "last_90_days": the reference backend knows today, yesterday`)
}

func TestEveryDefaultPeriodIsImplemented(t *testing.T) {
	for _, code := range translate.DefaultPeriodCodes() {
		_, _, err := ticketPeriod(code, time.Now())
		assert.NoError(t, err, code)
	}
}

func TestCompileTicketFilterRefusesWhatItDoesNotKnow(t *testing.T) {
	_, err := compileTicketFilter(translate.Filter{Param: "status", Op: "XX", Value: "open"}, time.Now())
	assert.ErrorContains(t, err, `does not implement operator "XX"`)
	_, err = compileTicketFilter(translate.Filter{Param: "priority", Op: "E", Value: "1"}, time.Now())
	assert.ErrorContains(t, err, "does not know this parameter")
	_, err = compileTicketFilter(translate.Filter{Param: "date_created", Op: "DP", Value: "next_week"}, time.Now())
	assert.ErrorContains(t, err, `DP period "next_week"`)
}

// TestEveryParameterAndOperatorIsFiltered checks that ticketFilterCases
// use every operator of every parameter the gateway's grammar accepts, so
// that each is shown to do what the README says. The grammar is asked, not
// copied: each candidate parameter is tried with each operator.
func TestEveryParameterAndOperatorIsFiltered(t *testing.T) {
	params := []string{"m_datecreated", "m_userid", "sla_levelid", "groups", "s_category", "f_category", "search", "field_color"}
	params = append(params, ticketJSONFields()...)
	operators := []string{"E", "NE", "IN", "NI", "CY", "L", "NL", "IE", "INE", "D>", "D<", "D>=", "D<=", "DP"}
	values := map[string]string{"IE": "", "INE": "", "D>": "2024-01-01 00:00:00", "D<": "2024-01-01 00:00:00",
		"D>=": "2024-01-01 00:00:00", "D<=": "2024-01-01 00:00:00", "DP": "today"}
	allowed := map[string]bool{}
	for _, p := range params {
		for _, op := range operators {
			value, ok := values[op]
			if !ok {
				value = "x1"
			}
			if _, err := ticketFilterRules.Parse(`[["` + p + `","` + op + `","` + value + `"]]`); err == nil {
				allowed[p+" "+op] = true
			}
		}
	}
	require.Len(t, allowed, 57, "the spec's tables have 57 parameter-operator pairs")

	used := map[string]bool{}
	for _, tc := range ticketFilterCases {
		if tc.raw == "" {
			continue // no _filters at all
		}
		filters, err := ticketFilterRules.Parse(tc.raw)
		require.NoError(t, err, tc.raw)
		for _, f := range filters {
			if strings.HasPrefix(f.Param, "field_") {
				f.Param = "field_color"
			}
			used[f.Param+" "+f.Op] = true
		}
	}
	for pair := range allowed {
		assert.True(t, used[pair], "no case of TestFilterTickets filters with %s", pair)
	}
}
