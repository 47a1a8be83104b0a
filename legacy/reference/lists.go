package reference

import (
	"math/rand/v2"
	"strconv"
	"time"
)

// This file makes the records of the four cursor lists. Their fields are
// those of LiveAgent's list items as its generated API clients document
// them (CallListItem, TimeReportRow, PhoneNumber, TicketHistory), where
// the docs make a field's meaning plain; a field the docs leave opaque is
// left out, and the few fields of the backend's own are named below. Ids
// stay numbers, as the gateway's tests have always had them, though
// LiveAgent's clients type some as strings (and take a number there).
// liveagent_models_test.go holds every record of every list to what those
// models allow: keys, types, enum values and ranges.

// callTypes are CallListItem's type letters: incoming, outgoing, internal.
var callTypes = []string{"I", "O", "T"}

// ownLineNames name the help desk's own numbers, by ownLines' index.
var ownLineNames = []string{"Support line", "Sales", "Toll free", "Berlin office"}

// callFields are the fields of a call, as CallListItem has them: its JSON
// keys are camelCase (ticketId, dateCreated), unlike the other lists'.
// Filters and sorts take the snake_case spelling too (see lookupField).
var callFields = []listField{
	{"id", fieldNumber}, {"ticketId", fieldNumber}, {"type", fieldText},
	{"fromNumber", fieldText}, {"fromName", fieldText}, {"toNumber", fieldText}, {"toName", fieldText},
	{"viaNumber", fieldText}, {"dateCreated", fieldDateTime}, {"dateAnswered", fieldDateTime},
	{"dateFinished", fieldDateTime}, {"callDuration", fieldNumber},
}

// call makes a call: a customer calling in (I), an agent calling out (O),
// or two agents (T). Seven in ten are answered; the others have no
// dateAnswered and a callDuration of 0.
func (g *gen) call(id int64) *record {
	at := g.date()
	typ, agent := g.pick(callTypes), g.r.IntN(len(agents))
	customer, line := g.phone(), g.r.IntN(len(ownLines))
	var duration int64 // seconds talked
	answered := g.r.IntN(10) < 7
	if answered {
		duration = 5 + g.r.Int64N(3600)
	}

	x := g.details(ownCalls, id)
	name := personName(x)
	var from, fromName, to, toName, via string
	switch typ {
	case "I":
		from, fromName, to, toName, via = customer, name, ownLines[line], ownLineNames[line], ownLines[line]
	case "O":
		from, fromName, to, toName, via = ownLines[line], agentNames[agent], customer, name, ownLines[line]
	default: // internal: agent to agent, by extension
		other := (agent + 1 + x.IntN(len(agents)-1)) % len(agents)
		from, fromName, to, toName = agents[agent], agentNames[agent], agents[other], agentNames[other]
	}
	ringEnd := at.Add(time.Duration(3+x.IntN(40)) * time.Second)
	finished := ringEnd
	if answered {
		finished = ringEnd.Add(time.Duration(duration) * time.Second)
	}
	o := newObject(384).int("id", id).intText("ticketId", 1+x.Int64N(g.maxID)).str("type", typ).
		str("fromNumber", from).str("fromName", fromName).str("toNumber", to).str("toName", toName).
		optional("viaNumber", via).dateTime("dateCreated", at, true).dateTime("dateAnswered", ringEnd, answered).
		dateTime("dateFinished", finished, true).intText("callDuration", duration)
	return &record{id: id, json: o.json(), keys: sortKeys{at.Unix(), duration}}
}

// timeRowFields are the fields of a time report row, as TimeReportRow
// has them.
var timeRowFields = []listField{
	{"id", fieldNumber}, {"agentid", fieldText}, {"agent", fieldText}, {"conversationid", fieldNumber},
	{"contactid", fieldText}, {"customer", fieldText}, {"reportdate", fieldDateTime},
	{"reportedtime", fieldNumber}, {"spenttime", fieldNumber}, {"dateinvoiced", fieldDateTime}, {"note", fieldText},
}

// timeRow makes a row of time an agent reported on a ticket, on a day
// (reportdate, at midnight). Two in three are billable; of those, half
// are invoiced a few days later (dateinvoiced), the others not yet.
func (g *gen) timeRow(id int64) *record {
	y, m, d := g.date().Date()
	at := time.Date(y, m, d, 0, 0, 0, 0, g.epoch.Location()) // the day the time was spent
	reported := 60 * (1 + g.r.Int64N(240))
	agent := g.r.IntN(len(agents))
	ticket := 1 + g.r.Int64N(g.maxID)
	billable := g.r.IntN(3) > 0
	note := g.pick([]string{"", "phone call", "investigation", "follow-up", "on-site visit"})

	x := g.details(ownTimeRows, id)
	spent := reported - 60*x.Int64N(reported/120+1) // rounded up when reported
	invoiced := at.AddDate(0, 0, 1+x.IntN(10))
	isInvoiced := billable && x.IntN(2) == 0 && invoiced.Before(g.epoch)
	o := newObject(256).int("id", id).str("agentid", agents[agent]).str("agent", agentNames[agent]).
		intText("conversationid", ticket).str("contactid", contactIDs[x.IntN(len(contactIDs))]).
		str("customer", personName(x)).dateTime("reportdate", at, true).
		intText("reportedtime", reported).intText("spenttime", spent).
		dateTime("dateinvoiced", invoiced, isInvoiced).str("note", note)
	return &record{id: id, json: o.json(), keys: sortKeys{at.Unix(), reported}}
}

// phoneNumberTypes are PhoneNumber's type codes: API controlled, Twilio,
// Twilio outgoing, Asterisk.
var phoneNumberTypes = []string{"A", "T", "T-O", "S"}

// phoneNumberFields are the fields of a phone number, as PhoneNumber has
// them, and date_created, the backend's own: LiveAgent's docs show no date
// on a phone number, and a date lets a client page through a range.
var phoneNumberFields = []listField{
	{"id", fieldNumber}, {"type", fieldText}, {"number", fieldText}, {"name", fieldText},
	{"departmentid", fieldText}, {"status", fieldText}, {"record_in_call", fieldText},
	{"record_out_call", fieldText}, {"dial_out_prefix", fieldNumber}, {"date_created", fieldDateTime},
}

// phoneNumber makes one of the help desk's numbers; four in five are
// active (status A), the others inactive (I). Its dial_out_prefix is 1 to
// 9: LiveAgent's PhoneNumber takes 1 to 999, and refuses 0.
func (g *gen) phoneNumber(id int64) *record {
	at := g.date()
	number := g.phone()
	digits, _ := strconv.ParseInt(number[1:], 10, 64)
	name := g.pick([]string{"Support line", "Sales", "Billing", "After hours"})
	typ := g.pick(phoneNumberTypes)
	department := g.pick(departments)
	status := "I"
	if g.r.IntN(5) > 0 {
		status = "A"
	}

	x := g.details(ownPhoneNumbers, id)
	o := newObject(256).int("id", id).str("type", typ).str("number", number).str("name", name).
		str("departmentid", department).str("status", status).bool("record_in_call", x.IntN(2) == 0).
		bool("record_out_call", x.IntN(2) == 0).int("dial_out_prefix", 1+int64(x.IntN(9))).
		dateTime("date_created", at, true)
	return &record{id: id, json: o.json(), keys: sortKeys{at.Unix(), digits}}
}

// historyFields are the fields of a ticket history entry, as
// TicketHistory has them.
var historyFields = []listField{
	{"id", fieldNumber}, {"conversation_id", fieldNumber}, {"conversation_code", fieldText},
	{"department_id", fieldText}, {"department_name", fieldText}, {"agent_id", fieldText},
	{"status", fieldText}, {"date_from", fieldDateTime}, {"date_to", fieldDateTime}, {"elapsed_time", fieldNumber},
}

// historyEntry makes a span of time a ticket spent in one status, with
// one agent and department: from date_from to date_to (null while it
// lasts at the epoch), elapsed_time seconds long.
func (g *gen) historyEntry(id int64) *record {
	from := g.date()
	ticket := 1 + g.r.Int64N(g.maxID)
	agent := g.r.IntN(len(agents))
	if kind := g.r.IntN(4); kind == 0 || kind == 3 {
		g.keepDraws(2) // the first data set's status changes and assignments drew twice more
	}

	x := g.details(ownHistory, id)
	department := x.IntN(len(departments))
	end := from.Add(time.Duration(60+x.Int64N(72*3600)) * time.Second)
	ended := end.Before(g.epoch)
	if !ended {
		end = g.epoch
	}
	o := newObject(256).int("id", id).intText("conversation_id", ticket).
		str("conversation_code", codeOf(ticket)).str("department_id", departments[department]).
		str("department_name", deptNames[department]).str("agent_id", agents[agent]).
		str("status", weightedStatus(x)).dateTime("date_from", from, true).dateTime("date_to", end, ended).
		intText("elapsed_time", int64(end.Sub(from)/time.Second))
	return &record{id: id, json: o.json(), keys: sortKeys{from.Unix(), ticket}}
}

// personName draws a customer's name from r.
func personName(r *rand.Rand) string { return personNames[r.IntN(len(personNames))] }

// personNames are every first name with every last name, made once so
// that drawing one costs no allocation: a large data set has a million.
var personNames = func() []string {
	var out []string
	for _, first := range firstNames {
		for _, last := range lastNames {
			out = append(out, first+" "+last)
		}
	}
	return out
}()

// contactIDs are the contact ids time rows name, made once like personNames.
var contactIDs = func() []string {
	out := make([]string, 512)
	for i := range out {
		out[i] = "c" + strconv.Itoa(1000+i)
	}
	return out
}()

// codeOf returns a ticket code like "KQX-48213" that depends on the
// ticket's id alone, so that entries of one ticket share it.
func codeOf(ticket int64) string {
	h := uint64(ticket) * 0x9e3779b97f4a7c15
	b := make([]byte, 0, 9)
	for i := range 3 {
		b = append(b, byte('A'+(h>>(8*i))%26))
	}
	return string(appendDigits(append(b, '-'), 10000+int((h>>32)%90000), 5))
}
