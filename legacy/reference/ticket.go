package reference

// Ticket is one help-desk ticket of the reference backend, with the fields of
// the spec's section 2.1. Date-times are kept as "YYYY-MM-DD hh:mm:ss" strings:
// that is how the API writes them, and in that shape string order is time order.
type Ticket struct {
	ID                 int64        `json:"id"`
	Code               string       `json:"code"`
	Status             string       `json:"status"`
	Tags               []string     `json:"tags"`
	ChannelType        string       `json:"channel_type"`
	Subject            string       `json:"subject"`
	OwnerContactID     string       `json:"owner_contactid"`
	OwnerEmail         string       `json:"owner_email"`
	OwnerName          string       `json:"owner_name"`
	AgentID            string       `json:"agentid"`
	DepartmentID       string       `json:"departmentid"`
	DateCreated        string       `json:"date_created"`
	DateChanged        string       `json:"date_changed"`
	DateResolved       string       `json:"date_resolved"` // "" while unresolved
	LastActivity       string       `json:"last_activity"`
	LastActivityPublic string       `json:"last_activity_public"`
	PublicAccessURL    string       `json:"public_access_url"`
	CustomFields       CustomFields `json:"custom_fields"` // filtered as field_<name>

	// Filter-only attributes (spec 2.2): usable in _filters, never returned.
	Messages          []Message `json:"-"`
	SLALevelID        string    `json:"-"` // "" when no SLA applies
	Groups            []string  `json:"-"` // customer groups of the owner
	SuggestCategories []string  `json:"-"`
	ForumCategories   []string  `json:"-"`
}

// Message is one message of a ticket; only its filterable parts are modelled.
type Message struct {
	DateCreated string // "YYYY-MM-DD hh:mm:ss"
	UserID      string // agent id, "" for a message from the customer
	Body        string // searched by the search pseudo-field
}

// CustomFields are a ticket's custom fields, value by code. They are kept
// as a map, for the field_<code> filters, and written as LiveAgent's Ticket
// model has them: a list of {"code": ..., "value": ...} (its
// list[CustomFields]), which its clients read, where an object keyed by
// code is not.
type CustomFields map[string]string

// MarshalJSON writes f as a list of {"code", "value"} in code order.
func (f CustomFields) MarshalJSON() ([]byte, error) { return appendCustomFields(nil, f), nil }
