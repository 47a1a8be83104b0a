package reference

import (
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
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
}

// kinds are the lists the backend serves. Their order is fixed: churn
// walks them in it, so that it is deterministic.
var kinds = []kind{
	{"calls", []string{"date", "duration"}, (*gen).call},
	{"grid/reports/time", []string{"date", "seconds"}, (*gen).timeRow},
	{"phone_numbers", []string{"date_created", "number"}, (*gen).phoneNumber},
	{"tickets/history", []string{"date", "ticketid"}, (*gen).historyEntry},
	{"tickets", []string{"date_created", "date_changed", "date_resolved", "last_activity"}, (*gen).ticket},
}

// maxGap is the widest gap between neighbouring ids of a new data set. The
// gaps leave room to insert records between existing ones.
const maxGap = 20

// gen makes plausible records from a random source. Dates fall in the two
// years before epoch, so that the data set depends on the seed alone and
// never on the wall clock. Dates are drawn independently of ids: a list's
// date order is far from its id order, so a client that forgets to ask for
// id order sees it at once.
type gen struct {
	r     *rand.Rand
	epoch time.Time // dates are written in its location
	maxID int64     // about the largest id of a list, for references between lists
}

// dataSpan is how far back from the epoch dates go.
const dataSpan = 730 * 24 * time.Hour

var (
	agents       = []string{"101", "102", "103", "104", "105", "106", "107", "108"}
	departments  = []string{"1", "2", "3", "default_1"}
	statuses     = []string{"open", "pending", "resolved", "closed", "spam"}
	statusWeight = []int{25, 15, 30, 25, 5} // percent, in the order of statuses
	channels     = []string{"email", "phone", "chat", "web", "facebook", "twitter"}
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
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	b := make([]byte, 0, len("2006-01-02 15:04:05"))
	b = appendDigits(b, y, 4)
	for _, part := range [...]struct {
		sep byte
		n   int
	}{{'-', int(mo)}, {'-', d}, {' ', h}, {':', mi}, {':', s}} {
		b = appendDigits(append(b, part.sep), part.n, 2)
	}
	return string(b)
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

func (g *gen) call(id int64) *record {
	at := g.date()
	direction, agent := g.pick([]string{"in", "out"}), g.pick(agents)
	from, to := g.phone(), g.pick(ownLines)
	if direction == "out" {
		from, to = to, from
	}
	var status, recording string
	var duration int64 // seconds talked
	switch n := g.r.IntN(10); {
	case n < 7:
		status, duration = "answered", 5+g.r.Int64N(3600)
		recording = "https://recordings.example.com/calls/" + strconv.FormatInt(id, 10) + ".mp3"
	case n < 9:
		status = "missed"
	default:
		status = "voicemail"
	}
	o := newObject(256).int("id", id).str("date", dateTime(at)).str("direction", direction).
		str("from", from).str("to", to).int("duration", duration).str("agentid", agent).
		str("status", status).optional("recording_url", recording)
	return &record{id: id, json: o.json(), keys: sortKeys{at.Unix(), duration}}
}

func (g *gen) timeRow(id int64) *record {
	y, m, d := g.date().Date()
	at := time.Date(y, m, d, 0, 0, 0, 0, g.epoch.Location()) // the day the time was spent
	seconds := 60 * (1 + g.r.Int64N(240))
	o := newObject(160).int("id", id).str("agentid", g.pick(agents)).str("date", day(at)).
		int("ticketid", 1+g.r.Int64N(g.maxID)).int("seconds", seconds).bool("billable", g.r.IntN(3) > 0).
		str("note", g.pick([]string{"", "phone call", "investigation", "follow-up", "on-site visit"}))
	return &record{id: id, json: o.json(), keys: sortKeys{at.Unix(), seconds}}
}

func (g *gen) phoneNumber(id int64) *record {
	at := g.date()
	number := g.phone()
	digits, _ := strconv.ParseInt(number[1:], 10, 64)
	o := newObject(192).int("id", id).str("number", number).
		str("name", g.pick([]string{"Support line", "Sales", "Billing", "After hours"})).
		str("type", g.pick([]string{"landline", "mobile", "toll_free"})).str("departmentid", g.pick(departments)).
		bool("active", g.r.IntN(5) > 0).str("date_created", dateTime(at))
	return &record{id: id, json: o.json(), keys: sortKeys{at.Unix(), digits}}
}

func (g *gen) historyEntry(id int64) *record {
	at := g.date()
	ticket := 1 + g.r.Int64N(g.maxID)
	userID := g.pick(agents)
	typ := g.pick([]string{"status_change", "reply", "note", "assignment"})
	var from, to string // the value before and after a change; null for replies and notes
	switch typ {
	case "status_change":
		from, to = g.pick(statuses), g.pick(statuses)
	case "assignment":
		from, to = g.pick(agents), g.pick(agents)
	}
	o := newObject(160).int("id", id).int("ticketid", ticket).str("date", dateTime(at)).
		str("userid", userID).str("type", typ).optional("from", from).optional("to", to)
	return &record{id: id, json: o.json(), keys: sortKeys{at.Unix(), ticket}}
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
	if t.Status == "resolved" || t.Status == "closed" {
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
		stringMap("custom_fields", t.CustomFields).json()
}

// status draws a ticket status with the weights of statusWeight.
func (g *gen) status() string {
	n := g.r.IntN(100)
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
