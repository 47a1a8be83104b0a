package reference

import (
	"strings"
	"testing"
	"time"

	"github.com/helpdesk-gateway/gateway/ticketfilter"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ticketFilterFixture() []*Ticket {
	return []*Ticket{
		{
			ID: 1, Status: "C", Tags: []string{"vip", "printer"}, ChannelType: "E",
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
			ID: 2, Status: "N", ChannelType: "C",
			Subject: "Scanner offline", OwnerContactID: "c2", OwnerEmail: "bob@example.org", OwnerName: "Bob Stone",
			AgentID: "a2", DepartmentID: "d2",
			DateCreated: "2024-02-28 23:59:59", DateChanged: "2024-03-05 08:00:00", DateResolved: "2024-03-05 08:00:00", LastActivity: "2024-03-05 08:00:00",
			Messages:          []Message{{DateCreated: "2024-03-05 07:00:00", UserID: "a2", Body: "Rebooted the scanner"}},
			SuggestCategories: []string{"11"},
		},
		{
			ID: 3, Status: "L", Tags: []string{"urgent"}, ChannelType: "E",
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

	{`[["status","E","C"]]`, []int64{1}},
	{`[["status","E","c"]]`, []int64{}},
	{`[["status","IN","C,N"]]`, []int64{1, 2}},
	{`[["status","NI","C"]]`, []int64{2, 3}},
	{`{"status":"L"}`, []int64{3}},

	{`[["tags","E","vip"]]`, []int64{1}},
	{`[["tags","E","print"]]`, []int64{}},
	{`[["tags","L","PRINT"]]`, []int64{1}},
	{`[["tags","CY","urgent,vip"]]`, []int64{1, 3}},
	{`[["tags","NI","vip"]]`, []int64{2, 3}},
	{`[["tags","NI","vip,urgent"]]`, []int64{2}},
	{`[["tags","IE",""]]`, []int64{2}},
	{`[["tags","INE",""]]`, []int64{1, 3}},
	{`{"tags":"urgent"}`, []int64{3}},

	{`[["channel_type","E","E"]]`, []int64{1, 3}},
	{`[["channel_type","IN","C,F"]]`, []int64{2}},

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
	{`[["date_created","DP","LW"]]`, []int64{3}},
	{`[["date_created","DP","TM"]]`, []int64{1, 3}},
	{`[["date_changed","D<","2024-03-05 08:00:00"]]`, []int64{1}},
	{`[["date_changed","D>=","2024-03-05 08:00:00"]]`, []int64{2, 3}},
	{`[["date_changed","D<=","2024-03-02 10:00:00"]]`, []int64{1}},
	{`[["date_changed","DP","TW"]]`, []int64{3}},
	{`[["date_resolved","D>=","2024-03-11 09:00:00"]]`, []int64{3}},
	{`[["date_resolved","D<=","2024-03-05 08:00:00"]]`, []int64{2}},
	{`[["date_resolved","DP","L7D"]]`, []int64{3}},
	{`[["last_activity","D>","2024-03-05 08:00:00"]]`, []int64{3}},
	{`[["last_activity","D<","2024-03-02 10:00:01"]]`, []int64{1}},
	{`[["last_activity","D>=","2024-03-11 09:30:00"]]`, []int64{3}},
	{`[["last_activity","DP","LW"]]`, []int64{2}},

	{`[["m_datecreated","D>=","2024-03-01 10:00:00"]]`, []int64{1, 2}},
	{`[["m_datecreated","D<","2024-03-01 09:30:00"]]`, []int64{1}},
	{`[["m_datecreated","DP","TM"]]`, []int64{1, 2}},
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

	{`[["status","IN","C,L"],["channel_type","E","E"],["tags","CY","urgent"]]`, []int64{3}},
	{`{"channel_type":"E","search":"blue"}`, []int64{1}},
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
		`[["status","L","C"]]`,
		`{"date_created":"2024-01-01 00:00:00"}`,
		`[["date_created","DP","last_90_days"]]`, // any short code passes the gateway, not this backend
		`[["owner_email","E","ann@example.com"]]`,
		`not json`,
	} {
		_, err := filterTickets(ticketFilterFixture(), raw, now)
		var fe *ticketfilter.FilterError
		require.ErrorAs(t, err, &fe, raw)
		assert.NotEmpty(t, fe.Message)
	}
}

func TestCompileTicketFilterRefusesWhatItDoesNotKnow(t *testing.T) {
	_, err := compileTicketFilter(ticketfilter.Filter{Param: "status", Op: "XX", Value: "C"}, time.Now())
	assert.ErrorContains(t, err, `does not implement operator "XX"`)
	_, err = compileTicketFilter(ticketfilter.Filter{Param: "priority", Op: "E", Value: "1"}, time.Now())
	assert.ErrorContains(t, err, "does not know this parameter")
	_, err = compileTicketFilter(ticketfilter.Filter{Param: "date_created", Op: "DP", Value: "next_week"}, time.Now())
	assert.ErrorContains(t, err, `DP period "next_week"`)
}

// TestEveryParameterAndOperatorIsFiltered checks that ticketFilterCases
// use every operator of every parameter the gateway's grammar accepts, so
// that each is shown to do what docs/clients.md says. The grammar is asked, not
// copied: each candidate parameter is tried with each operator.
func TestEveryParameterAndOperatorIsFiltered(t *testing.T) {
	params := []string{"m_datecreated", "m_userid", "sla_levelid", "groups", "s_category", "f_category", "search", "field_color"}
	params = append(params, ticketJSONFields()...)
	operators := []string{"E", "NE", "IN", "NI", "CY", "L", "NL", "IE", "INE", "D>", "D<", "D>=", "D<=", "DP"}
	values := map[string]string{"IE": "", "INE": "", "D>": "2024-01-01 00:00:00", "D<": "2024-01-01 00:00:00",
		"D>=": "2024-01-01 00:00:00", "D<=": "2024-01-01 00:00:00", "DP": "T"}
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
