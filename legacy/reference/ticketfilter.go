package reference

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/helpdesk-gateway/gateway/ticketfilter"
)

// ticketFilterRules checks _filters for the reference backend with the
// gateway's own grammar, except that DP takes only the period codes this
// backend can compute: LiveAgent's. Status and channel codes are not
// narrowed: an unknown one matches no ticket, as in LiveAgent.
var ticketFilterRules = ticketfilter.NewFilterValidator(ticketfilter.FilterConfig{PeriodCodes: periodCodes})

// filterTickets returns, in their order, the tickets that match every
// condition of the _filters value raw (the conditions are ANDed). An empty
// raw, "[]" and "{}" match every ticket. raw is checked with the gateway's
// grammar; a *ticketfilter.FilterError says why it is refused. now anchors the
// DP periods, in now's location, which is taken to be the location of the
// tickets' date-times.
//
// What each operator means here (the spec leaves it open):
//
//   - E: equals, exactly, for codes and identifiers. For subject it is a
//     case-insensitive substring match; for tags it means the ticket has
//     that tag; for a custom field field_<name> it compares the field's
//     value ("" when the ticket has no such field).
//   - NE: does not equal (sla_levelid, custom fields).
//   - IN, NI: the value is a comma-separated list; the ticket's value is
//     (IN) or is not (NI) one of them. subject IN: the subject contains any
//     of the words, case-insensitive. m_userid IN: some message was written
//     by one of the agents. s_category, f_category IN: the ticket has one
//     of the categories. tags NI: the ticket has none of the tags.
//   - CY (tags): the ticket has at least one of the listed tags.
//   - L, NL: contains, does not contain, case-insensitive. tags, groups L:
//     some tag or group contains the text. search L: the text appears in
//     the owner's name, email or contact id, the subject, any message body
//     or any custom field value.
//   - IE, INE: the value is empty, not empty (tags: no tags, some tags;
//     sla_levelid: no SLA, some SLA).
//   - D>, D<, D>=, D<=: the date-time is after, before, at or after, at or
//     before the given one. An empty date-time (an unresolved ticket's
//     date_resolved) matches no comparison. m_datecreated: some message's
//     date-time does.
//   - DP: the date-time falls in the period, one of LiveAgent's codes
//     (T today, Y yesterday, L7D last 7 days, TW this week, ...; see
//     period for each span).
func filterTickets(tickets []*Ticket, raw string, now time.Time) ([]*Ticket, error) {
	match, err := compileTicketFilters(raw, now)
	if err != nil {
		return nil, err
	}
	out := make([]*Ticket, 0, len(tickets))
	for _, t := range tickets {
		if match(t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// compileTicketFilters returns whether a ticket matches every filter of
// the _filters value raw; "" matches every ticket.
func compileTicketFilters(raw string, now time.Time) (func(*Ticket) bool, error) {
	var filters []ticketfilter.Filter
	if raw != "" {
		var err error
		if filters, err = ticketFilterRules.Parse(raw); err != nil {
			return nil, err
		}
	}
	matches := make([]func(*Ticket) bool, len(filters))
	for i, f := range filters {
		m, err := compileTicketFilter(f, now)
		if err != nil {
			return nil, err
		}
		matches[i] = m
	}
	return func(t *Ticket) bool {
		return !slices.ContainsFunc(matches, func(m func(*Ticket) bool) bool { return !m(t) })
	}, nil
}

// ticketField reads a filter parameter out of a ticket: one value, or many
// when the ticket has a list of them.
type ticketField struct {
	one  func(*Ticket) string
	many func(*Ticket) []string
	text bool // E and IN match substrings, case-insensitive
}

// ticketFields maps every parameter of the grammar but field_<name> to the
// part of a ticket it filters on.
var ticketFields = map[string]ticketField{
	"status":          {one: func(t *Ticket) string { return t.Status }},
	"tags":            {many: func(t *Ticket) []string { return t.Tags }},
	"channel_type":    {one: func(t *Ticket) string { return t.ChannelType }},
	"subject":         {one: func(t *Ticket) string { return t.Subject }, text: true},
	"owner_contactid": {one: func(t *Ticket) string { return t.OwnerContactID }},
	"agentid":         {one: func(t *Ticket) string { return t.AgentID }},
	"departmentid":    {one: func(t *Ticket) string { return t.DepartmentID }},
	"date_created":    {one: func(t *Ticket) string { return t.DateCreated }},
	"date_changed":    {one: func(t *Ticket) string { return t.DateChanged }},
	"date_resolved":   {one: func(t *Ticket) string { return t.DateResolved }},
	"last_activity":   {one: func(t *Ticket) string { return t.LastActivity }},
	"m_datecreated":   {many: messageParts(func(m Message) string { return m.DateCreated })},
	"m_userid":        {many: messageParts(func(m Message) string { return m.UserID })},
	"sla_levelid":     {one: func(t *Ticket) string { return t.SLALevelID }},
	"groups":          {many: func(t *Ticket) []string { return t.Groups }},
	"s_category":      {many: func(t *Ticket) []string { return t.SuggestCategories }},
	"f_category":      {many: func(t *Ticket) []string { return t.ForumCategories }},
	"search":          {many: searchedText},
}

// messageParts reads one part of every message of a ticket.
func messageParts(part func(Message) string) func(*Ticket) []string {
	return func(t *Ticket) []string {
		out := make([]string, len(t.Messages))
		for i, m := range t.Messages {
			out[i] = part(m)
		}
		return out
	}
}

// searchedText is what the search pseudo-field looks in (spec 2.3): the
// owner's details, the subject, the message bodies and the custom fields.
func searchedText(t *Ticket) []string {
	out := []string{t.OwnerName, t.OwnerEmail, t.OwnerContactID, t.Subject}
	for _, m := range t.Messages {
		out = append(out, m.Body)
	}
	for _, v := range t.CustomFields {
		out = append(out, v)
	}
	return out
}

// compileTicketFilter turns a validated condition into a test of a ticket.
func compileTicketFilter(f ticketfilter.Filter, now time.Time) (func(*Ticket) bool, error) {
	field, ok := ticketFields[f.Param]
	if name, custom := strings.CutPrefix(f.Param, "field_"); custom {
		field, ok = ticketField{one: func(t *Ticket) string { return t.CustomFields[name] }}, true
	}
	if !ok {
		return nil, fmt.Errorf("filter on %q: the reference backend does not know this parameter", f.Param)
	}
	var test func(string) bool // a test of one value; a ticket with many passes when one does
	switch f.Op {
	case "E", "NE":
		test = func(s string) bool { return s == f.Value }
		if field.text {
			test = containsFold(f.Value)
		}
	case "IN", "NI", "CY":
		items := strings.Split(f.Value, ",")
		test = func(s string) bool { return slices.Contains(items, s) }
		if field.text {
			words := make([]func(string) bool, len(items))
			for i, item := range items {
				words[i] = containsFold(item)
			}
			test = func(s string) bool { return slices.ContainsFunc(words, func(w func(string) bool) bool { return w(s) }) }
		}
	case "L", "NL":
		test = containsFold(f.Value)
	case "IE", "INE":
		empty := func(t *Ticket) bool {
			if field.many != nil {
				return len(field.many(t)) == 0
			}
			return field.one(t) == ""
		}
		return func(t *Ticket) bool { return empty(t) == (f.Op == "IE") }, nil
	case "D>", "D<", "D>=", "D<=":
		order := ticketDateOrders[f.Op]
		test = func(s string) bool { return s != "" && order(strings.Compare(s, f.Value)) }
	case "DP":
		from, to, err := period(f.Value, now)
		if err != nil {
			return nil, err
		}
		test = func(s string) bool { return s != "" && from <= s && s < to }
	default:
		return nil, fmt.Errorf("filter on %q: the reference backend does not implement operator %q", f.Param, f.Op)
	}
	some := func(t *Ticket) bool {
		if field.many != nil {
			return slices.ContainsFunc(field.many(t), test)
		}
		return test(field.one(t))
	}
	if f.Op == "NE" || f.Op == "NI" || f.Op == "NL" {
		return func(t *Ticket) bool { return !some(t) }, nil
	}
	return some, nil
}

// ticketDateOrders says, for each comparison operator, which results of
// strings.Compare(ticket's date-time, filter's date-time) match. Date-times
// in the spec's layout compare as text in time order.
var ticketDateOrders = map[string]func(int) bool{
	"D>":  func(c int) bool { return c > 0 },
	"D<":  func(c int) bool { return c < 0 },
	"D>=": func(c int) bool { return c >= 0 },
	"D<=": func(c int) bool { return c <= 0 },
}

// containsFold returns a test of whether a text contains sub, ignoring case.
func containsFold(sub string) func(string) bool {
	sub = strings.ToLower(sub)
	return func(s string) bool { return strings.Contains(strings.ToLower(s), sub) }
}
