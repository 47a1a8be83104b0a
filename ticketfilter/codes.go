package ticketfilter

import "slices"

// This file holds the values LiveAgent, the help desk whose v3 API the spec
// describes, gives the ticket list's closed-set filter values. The spec
// leaves them "not shown"; they come from LiveAgent's public API client
// docs (the generated clients' ticket status and channel descriptions) and
// Quality Unit's PHP framework (Gpf_Data_Filter and Gpf_SqlBuilder_Filter,
// the RANGE_* period constants and how they are computed).
//
// The gateway accepts any code by default (the codes are not the spec's),
// so these lists are documentation and defaults for others: the reference
// backend's data and periods, `caddy helpdesk filters check`'s help, and an
// OpenAPI document's enums. Each accessor returns a fresh copy, so no
// caller can change what another sees.

// CodesSource says where the code lists come from, for documents that
// show them.
const CodesSource = "LiveAgent's public API client docs and Quality Unit's Gpf_Data_Filter"

// Code is one value of a closed set, as LiveAgent writes it, with its
// meaning.
type Code struct {
	Code    string `json:"code"`
	Meaning string `json:"meaning"`
}

// statusCodes are the ticket status letters (filter parameter status).
var statusCodes = []Code{
	{"I", "init"},
	{"N", "new"},
	{"T", "chatting"},
	{"P", "calling"},
	{"R", "resolved"},
	{"X", "deleted"},
	{"B", "spam"},
	{"A", "answered"},
	{"C", "open"},
	{"W", "postponed"},
	{"L", "closed"},
}

// channelTypes are the ticket channel letters (filter parameter
// channel_type).
var channelTypes = []Code{
	{"E", "email"},
	{"B", "contact button"},
	{"M", "contact form"},
	{"I", "invitation"},
	{"C", "call"},
	{"W", "call button"},
	{"F", "facebook"},
	{"A", "facebook message"},
	{"T", "twitter"},
	{"Q", "forum"},
	{"S", "suggestion"},
}

// periodCodes are the date periods of operator DP, in Gpf_Data_Filter's
// order. The meanings say which calendar span each one selects.
var periodCodes = []Code{
	{"T", "today"},
	{"Y", "yesterday"},
	{"L7D", "last 7 days (today and the 7 before)"},
	{"L30D", "last 30 days (today and the 30 before)"},
	{"L90D", "last 90 days (today and the 90 before)"},
	{"TW", "this week (Monday to Sunday)"},
	{"LW", "last week (Monday to Sunday)"},
	{"L2W", "last 2 weeks (the two whole weeks before this one)"},
	{"LWW", "last working week (Monday to Friday of last week)"},
	{"TM", "this month"},
	{"LM", "last month"},
	{"TY", "this year"},
	{"LY", "last year"},
}

// StatusCodes returns LiveAgent's ticket status codes (C open, L closed,
// R resolved, ...).
func StatusCodes() []Code { return slices.Clone(statusCodes) }

// ChannelTypes returns LiveAgent's ticket channel_type codes (E email,
// C call, ...).
func ChannelTypes() []Code { return slices.Clone(channelTypes) }

// PeriodCodes returns LiveAgent's DP period codes (T today, L7D last 7
// days, ...).
func PeriodCodes() []Code { return slices.Clone(periodCodes) }

// CodeValues returns the codes of cs alone, in order: the form
// FilterConfig's lists take.
func CodeValues(cs []Code) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Code
	}
	return out
}
