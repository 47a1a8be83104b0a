package reference

import (
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/helpdesk-gateway/gateway/ticketfilter"
)

// kind describes one list of the reference backend.
type kind struct {
	name string // the list's path, without the leading slash

	// sortable names the fields a request may sort by besides id. The
	// first is the date field of the default order, newest first: like
	// the real backend, a list asked for without a sort is not in id order.
	sortable []string

	// make returns a new record with id, drawing from g, with one sort key
	// per sortable field.
	make func(g *gen, id int64) *record

	// fields are the record fields _filters may name on this list, with
	// how they compare; nil for the ticket list, whose filters follow the
	// spec's grammar (ticketfilter.go).
	fields []listField
}

// kinds are the lists the backend serves. Their order is fixed: churn
// walks them in it, so that it is deterministic. The records of the four
// cursor lists carry the fields of LiveAgent's list items as its public
// API client docs show them (lists.go).
var kinds = []kind{
	{"calls", []string{"dateCreated", "callDuration"}, (*gen).call, callFields},
	{"grid/reports/time", []string{"reportdate", "reportedtime"}, (*gen).timeRow, timeRowFields},
	{"phone_numbers", []string{"date_created", "number"}, (*gen).phoneNumber, phoneNumberFields},
	{"tickets/history", []string{"date_from", "conversation_id"}, (*gen).historyEntry, historyFields},
	{"tickets", []string{"date_created", "date_changed", "date_resolved", "last_activity"}, (*gen).ticket, nil},
}

// maxGap is the widest gap between neighbouring ids of a new data set. The
// gaps leave room to insert records between existing ones.
const maxGap = 20

// gen makes plausible records from a random source. Dates fall in the two
// years before epoch, so that the data set depends on the seed alone and
// never on the wall clock. Dates are drawn independently of ids: a list's
// date order is far from its id order, so a client that forgets to ask for
// id order sees it at once.
//
// A list's ids and its records' main values are drawn in turn from r, so
// the number of draws a record makes fixes every later id of its seed.
// Tests and benchmarks rely on a seed's ids, so each maker keeps the draws
// it has always made, and draws whatever it added later (names, the
// details of LiveAgent's fields) from a stream of the record's own.
type gen struct {
	r     *rand.Rand
	epoch time.Time // dates are written in its location
	maxID int64     // about the largest id of a list, for references between lists

	seed    uint64    // the data set's seed, for the records' own streams
	ownSeed *rand.PCG // the source of own, reseeded for each record
	own     *rand.Rand
}

// Salts of the records' own streams, one per list, so that records with
// the same id in two lists differ.
const (
	ownCalls uint64 = iota + 1
	ownTimeRows
	ownPhoneNumbers
	ownHistory
)

// details returns the random stream of the record with id in the list of
// salt: the same for the same seed, list and id, and independent of r.
func (g *gen) details(salt uint64, id int64) *rand.Rand {
	g.ownSeed.Seed(g.seed^salt*0x9e3779b97f4a7c15, uint64(id))
	return g.own
}

// keepDraws makes n draws of r whose values are no longer used, for a
// maker that must keep the draws it has always made (see gen).
func (g *gen) keepDraws(n int) {
	for range n {
		g.r.Uint64()
	}
}

// dataSpan is how far back from the epoch dates go.
const dataSpan = 730 * 24 * time.Hour

var (
	agents      = []string{"101", "102", "103", "104", "105", "106", "107", "108"}
	agentNames  = []string{"Eva Horvat", "Peter Kral", "Lucia Bella", "Marek Novy", "Zoe Adams", "Ravi Patel", "Ines Costa", "Karl Berg"} // by agents' index
	departments = []string{"1", "2", "3", "default_1"}
	deptNames   = []string{"Support", "Sales", "Billing", "Default department"} // by departments' index

	// Ticket statuses and channels are LiveAgent's letters (translate's
	// StatusCodes and ChannelTypes), open and resolved tickets the most
	// common, the transient and deleted states rare.
	statuses     = ticketfilter.CodeValues(ticketfilter.StatusCodes()) // I N T P R X B A C W L
	statusWeight = []int{1, 10, 2, 2, 25, 1, 4, 15, 20, 5, 15}         // percent, in the order of statuses
	channels     = ticketfilter.CodeValues(ticketfilter.ChannelTypes())
	tagCodes     = []string{"vip", "urgent", "billing", "bug", "feature", "refund", "newsletter", "follow_up"}
	subjects     = []string{"Printer not working", "Refund for order", "Cannot log in", "Invoice question",
		"Delivery delayed", "Feature request: dark mode", "Password reset", "Billing address change",
		"App crashes on start", "Thank you!", "Upgrade my plan", "Wrong item received"}
	messageBodies = []string{"Hello, I need help with this.", "Please send a refund.", "We are looking into it.",
		"Could you send a screenshot?", "Thanks, that worked.", "The issue is fixed in the latest version."}
	firstNames     = []string{"Anna", "Jan", "Maria", "Li", "Olivia", "Ahmed", "Sofia", "Tom"}
	lastNames      = []string{"Smith", "Novak", "Garcia", "Wei", "Brown", "Khan", "Rossi", "Becker"}
	customerGroups = []string{"retail", "wholesale", "partners", "gold customers"}
	ownLines       = []string{"+442071234500", "+442071234511", "+18005550100", "+4930123456700"}
)

func (g *gen) pick(from []string) string { return from[g.r.IntN(len(from))] }

// date returns a random second in the two years before the epoch.
func (g *gen) date() time.Time {
	return g.epoch.Add(-time.Duration(1+g.r.Int64N(int64(dataSpan/time.Second))) * time.Second)
}

// after returns a random time at most within after t, and not past the
// epoch.
func (g *gen) after(t time.Time, within time.Duration) time.Time {
	t = t.Add(time.Duration(g.r.Int64N(int64(within/time.Second))) * time.Second)
	if t.After(g.epoch) {
		return g.epoch
	}
	return t
}

// phone returns a random E.164 number.
func (g *gen) phone() string {
	return "+44" + strconv.FormatInt(7000000000+g.r.Int64N(1000000000), 10)
}

// dateTime formats t the way the API writes date-times, "YYYY-MM-DD
// hh:mm:ss", in which text order is time order. It does by hand what
// t.Format does, several times faster: a large data set has millions of
// dates.
func dateTime(t time.Time) string {
	return string(appendDateTime(make([]byte, 0, len("2006-01-02 15:04:05")), t))
}

// appendDateTime appends t as dateTime writes it.
func appendDateTime(b []byte, t time.Time) []byte {
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	b = appendDigits(b, y, 4)
	for _, part := range [...]struct {
		sep byte
		n   int
	}{{'-', int(mo)}, {'-', d}, {' ', h}, {':', mi}, {':', s}} {
		b = appendDigits(append(b, part.sep), part.n, 2)
	}
	return b
}

// day formats the date of t as "YYYY-MM-DD".
func day(t time.Time) string { return dateTime(t)[:10] }

// appendDigits appends n, which is not negative, zero-padded to width digits.
func appendDigits(b []byte, n, width int) []byte {
	start := len(b)
	for range width {
		b = append(b, '0')
	}
	for i := len(b) - 1; i >= start && n > 0; i-- {
		b[i], n = byte('0'+n%10), n/10
	}
	return b
}

func encode(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only called with values that always encode
	}
	return b
}

func (g *gen) ticket(id int64) *record {
	contact := g.r.IntN(len(firstNames) * len(lastNames) * 8)
	first, last := firstNames[contact%len(firstNames)], lastNames[contact/len(firstNames)%len(lastNames)]
	t := &Ticket{
		ID: id, Code: g.ticketCode(), Status: g.status(), ChannelType: g.pick(channels),
		Subject: g.pick(subjects), OwnerContactID: "c" + strconv.Itoa(1000+contact),
		OwnerEmail: strings.ToLower(first+"."+last) + strconv.Itoa(contact) + "@example.com",
		OwnerName:  first + " " + last, AgentID: g.pick(agents), DepartmentID: g.pick(departments),
		Tags: []string{}, // [] rather than null when there are none
		CustomFields: map[string]string{
			"region":       g.pick([]string{"EU", "US", "APAC", "LATAM"}),
			"priority":     g.pick([]string{"low", "normal", "high", "urgent"}),
			"product":      g.pick([]string{"basic", "pro", "enterprise"}),
			"order_number": "ORD-" + strconv.Itoa(10000+g.r.IntN(90000)),
		},
		Groups: []string{customerGroups[contact%len(customerGroups)]},
	}
	t.PublicAccessURL = "https://support.example.com/ticket/" + t.Code
	for _, tag := range tagCodes {
		if g.r.IntN(7) == 0 {
			t.Tags = append(t.Tags, tag)
		}
	}
	if g.r.IntN(2) == 0 {
		t.SLALevelID = strconv.Itoa(1 + g.r.IntN(3))
	}
	t.SuggestCategories = g.categories()
	t.ForumCategories = g.categories()

	// The customer writes first; agents and customer then take turns.
	created := g.date()
	at := created
	for i := range 1 + g.r.IntN(4) {
		m := Message{DateCreated: dateTime(at), Body: g.pick(messageBodies)}
		if i == 0 {
			m.Body = t.Subject + ". " + m.Body
		}
		if i%2 == 1 {
			m.UserID = t.AgentID
			if g.r.IntN(4) == 0 {
				m.UserID = g.pick(agents) // a colleague stepped in
			}
		}
		t.Messages = append(t.Messages, m)
		at = g.after(at, 48*time.Hour)
	}
	changed := g.after(at, 72*time.Hour)
	t.DateCreated = dateTime(created)
	t.DateChanged = dateTime(changed)
	t.LastActivity = t.DateChanged
	t.LastActivityPublic = t.Messages[len(t.Messages)-1].DateCreated
	var resolved int64 // 0 sorts unresolved tickets first, as "" would
	if t.Status == statusResolved || t.Status == statusClosed {
		t.DateResolved, resolved = t.DateChanged, changed.Unix()
	}
	return &record{id: id, json: encodeTicket(t), ticket: t,
		keys: sortKeys{created.Unix(), changed.Unix(), resolved, changed.Unix()}}
}

// encodeTicket writes t as json.Marshal would, only faster.
func encodeTicket(t *Ticket) []byte {
	return newObject(768).int("id", t.ID).str("code", t.Code).str("status", t.Status).
		stringList("tags", t.Tags).str("channel_type", t.ChannelType).str("subject", t.Subject).
		str("owner_contactid", t.OwnerContactID).str("owner_email", t.OwnerEmail).str("owner_name", t.OwnerName).
		str("agentid", t.AgentID).str("departmentid", t.DepartmentID).str("date_created", t.DateCreated).
		str("date_changed", t.DateChanged).str("date_resolved", t.DateResolved).str("last_activity", t.LastActivity).
		str("last_activity_public", t.LastActivityPublic).str("public_access_url", t.PublicAccessURL).
		customFields("custom_fields", t.CustomFields).json()
}

// The statuses of a ticket that is done with: it has a date_resolved.
const (
	statusResolved = "R"
	statusClosed   = "L"
)

// status draws a ticket status with the weights of statusWeight.
func (g *gen) status() string { return weightedStatus(g.r) }

// weightedStatus draws a ticket status from r with the weights of
// statusWeight, in one draw.
func weightedStatus(r *rand.Rand) string {
	n := r.IntN(100)
	for i, w := range statusWeight {
		if n < w {
			return statuses[i]
		}
		n -= w
	}
	return statuses[0]
}

// ticketCode returns a code like "KQX-48213".
func (g *gen) ticketCode() string {
	b := make([]byte, 0, 9)
	for range 3 {
		b = append(b, byte('A'+g.r.IntN(26)))
	}
	return string(appendDigits(append(b, '-'), 10000+g.r.IntN(90000), 5))
}

// categories returns zero to two category identifiers.
func (g *gen) categories() []string {
	var out []string
	for range g.r.IntN(3) {
		out = append(out, strconv.Itoa(1+g.r.IntN(12)))
	}
	return out
}
