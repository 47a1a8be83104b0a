package legacy

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"
)

// dateLayout is how the API writes date-times; in it, text order is time order.
const dateLayout = "2006-01-02 15:04:05"

// kind describes one list of the reference backend: its path, the date
// field it is listed by (newest first) when no sort is asked for, the other
// fields it can be sorted by, and how to make one of its records.
type kind struct {
	name      string
	dateField string
	sortable  []string
	make      func(g *gen, id int64) *record
}

// kinds are the lists the backend serves, in a fixed order.
var kinds = []kind{
	{"calls", "date", []string{"duration"}, (*gen).call},
	{"grid/reports/time", "date", []string{"seconds"}, (*gen).timeRow},
	{"phone_numbers", "date_created", []string{"number"}, (*gen).phoneNumber},
	{"tickets/history", "date", nil, (*gen).historyEntry},
	{"tickets", "date_created", []string{"date_changed", "last_activity", "status"}, (*gen).ticket},
}

// gen makes plausible records from a random source. Dates fall in the two
// years before epoch, so the data set never depends on the wall clock.
type gen struct {
	r     *rand.Rand
	epoch time.Time
}

var (
	agents      = []string{"101", "102", "103", "104", "105", "106", "107", "108"}
	departments = []string{"1", "2", "3", "default_1"}
	statuses    = []string{"open", "pending", "resolved", "closed", "spam"}
	channels    = []string{"email", "phone", "chat", "web", "facebook", "twitter"}
	tagCodes    = []string{"vip", "urgent", "billing", "bug", "feature", "refund", "newsletter", "follow_up"}
	subjects    = []string{"Printer not working", "Refund for order", "Cannot log in", "Invoice question",
		"Delivery delayed", "Feature request: dark mode", "Password reset", "Billing address change",
		"App crashes on start", "Thank you!", "Upgrade my plan", "Wrong item received"}
	names   = []string{"Anna Smith", "Jan Novak", "Maria Garcia", "Li Wei", "Olivia Brown", "Ahmed Khan", "Sofia Rossi", "Tom Becker"}
	regions = []string{"EU", "US", "APAC", "LATAM"}
	groups  = []string{"retail", "wholesale", "partners", "gold customers"}
)

func (g *gen) pick(from []string) string { return from[g.r.IntN(len(from))] }

// date returns a date-time up to two years before epoch, and its text.
func (g *gen) date() (time.Time, string) {
	t := g.epoch.Add(-time.Duration(g.r.Int64N(int64(730 * 24 * time.Hour))))
	t = t.Truncate(time.Second)
	return t, t.Format(dateLayout)
}

func (g *gen) phone() string { return fmt.Sprintf("+4420%08d", g.r.IntN(100000000)) }

func encode(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // the record types always encode
	}
	return b
}

func sortNum(n int) string { return fmt.Sprintf("%012d", n) }

func (g *gen) call(id int64) *record {
	_, date := g.date()
	duration := g.r.IntN(3600)
	status := g.pick([]string{"answered", "answered", "answered", "missed", "voicemail"})
	if status != "answered" {
		duration = 0
	}
	return &record{id: id, date: date, sorts: []string{sortNum(duration)}, value: (struct {
		ID        int64  `json:"id"`
		Date      string `json:"date"`
		Direction string `json:"direction"`
		From      string `json:"from"`
		To        string `json:"to"`
		Duration  int    `json:"duration"`
		AgentID   string `json:"agentid"`
		Status    string `json:"status"`
		Recording string `json:"recording_url,omitempty"`
	}{id, date, g.pick([]string{"in", "out"}), g.phone(), g.phone(), duration, g.pick(agents), status,
		map[bool]string{true: fmt.Sprintf("https://recordings.example.com/%d.mp3", id)}[duration > 0]})}
}

func (g *gen) timeRow(id int64) *record {
	t, _ := g.date()
	day := t.Format("2006-01-02")
	seconds := 60 * (1 + g.r.IntN(240))
	return &record{id: id, date: day, sorts: []string{sortNum(seconds)}, value: (struct {
		ID       int64  `json:"id"`
		AgentID  string `json:"agentid"`
		Date     string `json:"date"`
		TicketID int64  `json:"ticketid"`
		Seconds  int    `json:"seconds"`
		Billable bool   `json:"billable"`
		Note     string `json:"note"`
	}{id, g.pick(agents), day, 1 + g.r.Int64N(50000), seconds, g.r.IntN(3) > 0, g.pick([]string{"", "phone call", "investigation", "follow-up"})})}
}

func (g *gen) phoneNumber(id int64) *record {
	_, date := g.date()
	number := g.phone()
	return &record{id: id, date: date, sorts: []string{number}, value: (struct {
		ID           int64  `json:"id"`
		Number       string `json:"number"`
		Name         string `json:"name"`
		Type         string `json:"type"`
		DepartmentID string `json:"departmentid"`
		Active       bool   `json:"active"`
		DateCreated  string `json:"date_created"`
	}{id, number, g.pick([]string{"Support line", "Sales", "Billing", "After hours"}), g.pick([]string{"landline", "mobile", "toll_free"}),
		g.pick(departments), g.r.IntN(5) > 0, date})}
}

func (g *gen) historyEntry(id int64) *record {
	_, date := g.date()
	typ := g.pick([]string{"status_change", "reply", "note", "assignment"})
	from, to := "", ""
	switch typ {
	case "status_change":
		from, to = g.pick(statuses), g.pick(statuses)
	case "assignment":
		from, to = g.pick(agents), g.pick(agents)
	}
	return &record{id: id, date: date, value: (struct {
		ID       int64  `json:"id"`
		TicketID int64  `json:"ticketid"`
		Date     string `json:"date"`
		UserID   string `json:"userid"`
		Type     string `json:"type"`
		From     string `json:"from,omitempty"`
		To       string `json:"to,omitempty"`
	}{id, 1 + g.r.Int64N(50000), date, g.pick(agents), typ, from, to})}
}

func (g *gen) ticket(id int64) *record {
	created, createdText := g.date()
	changed := created.Add(time.Duration(g.r.Int64N(int64(30 * 24 * time.Hour))))
	if changed.After(g.epoch) {
		changed = g.epoch
	}
	status := g.pick(statuses)
	resolved := ""
	if status == "resolved" || status == "closed" {
		resolved = changed.Format(dateLayout)
	}
	owner := g.pick(names)
	t := &Ticket{
		ID: id, Code: fmt.Sprintf("HD-%06d", id), Status: status, ChannelType: g.pick(channels),
		Subject: g.pick(subjects), OwnerContactID: fmt.Sprintf("c%d", 1000+g.r.IntN(500)),
		OwnerEmail: fmt.Sprintf("customer%d@example.com", g.r.IntN(500)), OwnerName: owner,
		AgentID: g.pick(agents), DepartmentID: g.pick(departments),
		DateCreated: createdText, DateChanged: changed.Format(dateLayout), DateResolved: resolved,
		LastActivity: changed.Format(dateLayout), LastActivityPublic: changed.Format(dateLayout),
		PublicAccessURL: fmt.Sprintf("https://help.example.com/t/%d", id),
		CustomFields: map[string]string{
			"region": g.pick(regions), "priority": g.pick([]string{"low", "normal", "high"}),
			"product": g.pick([]string{"basic", "pro", "enterprise"}), "order_number": fmt.Sprintf("ORD-%05d", g.r.IntN(100000)),
		},
		Groups: []string{g.pick(groups)},
	}
	for range g.r.IntN(3) {
		t.Tags = append(t.Tags, g.pick(tagCodes))
	}
	if t.Tags == nil {
		t.Tags = []string{}
	}
	if g.r.IntN(2) == 0 {
		t.SLALevelID = fmt.Sprint(1 + g.r.IntN(3))
	}
	t.SuggestCategories = []string{fmt.Sprint(1 + g.r.IntN(10))}
	t.ForumCategories = []string{fmt.Sprint(1 + g.r.IntN(10))}
	for i := range 1 + g.r.IntN(3) {
		author := ""
		if i%2 == 1 {
			author = g.pick(agents)
		}
		at := created.Add(time.Duration(i) * time.Hour)
		t.Messages = append(t.Messages, Message{DateCreated: at.Format(dateLayout), UserID: author,
			Body: g.pick([]string{"Hello, I need help with this.", "Please send a refund.", "We are looking into it.", "Thanks, that worked."})})
	}
	return &record{id: id, date: createdText, ticket: t, value: t, sorts: []string{t.DateChanged, t.LastActivity, t.Status}}
}
