package reference

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"
)

// This file holds the rules LiveAgent's own published API models put on
// the records of each list, as data, and a checker for them; the tests
// that run every record of the data set through it are in
// liveagent_models_data_test.go.
//
// The source is QualityUnit/LiveAgent-api-python, the API client Quality
// Unit generates from LiveAgent's API description, at commit 4196a87a7b29
// (2024-01-03 "Regenerate API"). A model's attribute_map gives each
// field's JSON key, its swagger_types the type, and its setters raise
// ValueError on what the description forbids: a null required field, a
// value outside an enum, a number outside a range. The client ignores JSON
// keys a model does not have (api_client.py, __deserialize_model), so a
// field under another name is not refused but lost: the table lists every
// field the backend writes, and a field of the backend's own must be named
// in own, with why. No setter of these five models checks a string's
// pattern or length, so the table has none; the date-time shape is the
// spec's (see dateTimeText). Every path below is in that repository.
//
// Which model describes which list, from the API docs of the same
// repository: docs/CallsApi.md (get_calls_list: list[CallListItem]),
// docs/GridApi.md (get_time_reports_grid_list: list[TimeReportRow]),
// docs/PhoneNumbersApi.md (get_phone_numbers_list: list[PhoneNumber]),
// docs/TicketsApi.md (get_ticket_history: list[TicketHistory];
// get_tickets_list: list[Ticket]; TicketListItem is the body of
// create_ticket, not an item of the list).

// wireType is a JSON value's type as a model declares it.
type wireType uint8

const (
	// wireString is swagger's "str": a JSON string.
	wireString wireType = iota
	// wireID is an id the model types "str", which the backend writes as
	// a JSON number, as the gateway's cursors have always had it (see
	// lists.go). The client takes it: a primitive is converted with
	// klass(data), so str(5) is "5" (api_client.py, __deserialize_primitive).
	wireID
	// wireInt is swagger's "int": a JSON number with no fraction.
	wireInt
	// wireBool is swagger's "bool".
	wireBool
	// wireDateTime is swagger's "datetime": a JSON string the client
	// parses with dateutil (api_client.py, __deserialize_datatime), and
	// an ApiException if it cannot.
	wireDateTime
	// wireStringList is swagger's "list[str]".
	wireStringList
	// wireCustomFields is "list[CustomFields]": a list of objects
	// {"code": str, "value": str} (models/custom_fields.py,
	// attribute_map). An object keyed by code is not a list of them.
	wireCustomFields
)

var wireTypeNames = [...]string{wireString: "a string", wireID: "an id (a string or a whole number)",
	wireInt: "a whole number", wireBool: "a boolean", wireDateTime: "a date-time string",
	wireStringList: "a list of strings", wireCustomFields: `a list of {"code","value"} objects`}

// textFormat is a shape a string value must have.
type textFormat uint8

const (
	anyText textFormat = iota
	// dateTimeText is "YYYY-MM-DD hh:mm:ss", a real time: how LiveAgent
	// writes date-times (the product spec, helpdesk-api.md 4.3 rule 7),
	// and a form dateutil parses. Models type some date fields "str"
	// (TicketHistory, TimeReportRow, most of Ticket's); they hold the same
	// values, so the same shape is required of them.
	dateTimeText
	// dateTimeOrEmpty is dateTimeText or "": Ticket.date_resolved, a
	// "str" in the model, is empty while a ticket is unresolved, which the
	// spec's IE filter finds.
	dateTimeOrEmpty
)

// modelField is the rules of one field of a model.
type modelField struct {
	name     string // the JSON key: the model's attribute_map value
	typ      wireType
	required bool     // the setter raises on None; an optional field may be null
	enum     []string // the allowed values, when the model has them
	bounds   *[2]int64
	format   textFormat
}

// liveAgentModel is the model of one list's items.
type liveAgentModel struct {
	list   string // the reference backend's list
	model  string // LiveAgent's model, by its name in the client
	fields []modelField
	own    map[string]string // fields the backend writes that the model lacks, with why
}

// liveAgentModels is the table: every constraint the published models put
// on the fields the reference backend writes.
var liveAgentModels = []liveAgentModel{
	{list: "calls", model: "CallListItem", fields: []modelField{
		// liveagent_api/models/call_list_item.py: swagger_types (line 35)
		// and attribute_map (line 50), whose JSON keys are camelCase.
		{name: "id", typ: wireID},
		{name: "ticketId", typ: wireString},
		// call_list_item.py, type setter (line 172): allowed_values.
		{name: "type", typ: wireString, enum: []string{"I", "O", "T"}},
		{name: "fromNumber", typ: wireString},
		{name: "fromName", typ: wireString},
		{name: "toNumber", typ: wireString},
		{name: "toName", typ: wireString},
		{name: "viaNumber", typ: wireString},
		// call_list_item.py swagger_types: "datetime".
		{name: "dateCreated", typ: wireDateTime, format: dateTimeText},
		{name: "dateAnswered", typ: wireDateTime, format: dateTimeText},
		{name: "dateFinished", typ: wireDateTime, format: dateTimeText},
		{name: "callDuration", typ: wireString},
	}},
	{list: "grid/reports/time", model: "TimeReportRow", fields: []modelField{
		// liveagent_api/models/time_report_row.py: swagger_types (line 35)
		// and attribute_map (line 58). Its one enum, type (line 567), is
		// a field the backend does not write.
		{name: "id", typ: wireInt},
		{name: "agentid", typ: wireString},
		{name: "agent", typ: wireString},
		{name: "conversationid", typ: wireString},
		{name: "contactid", typ: wireString},
		{name: "customer", typ: wireString},
		{name: "reportdate", typ: wireString, format: dateTimeText},
		{name: "reportedtime", typ: wireString},
		{name: "spenttime", typ: wireString},
		{name: "dateinvoiced", typ: wireString, format: dateTimeText},
		{name: "note", typ: wireString},
	}},
	{list: "phone_numbers", model: "PhoneNumber", fields: []modelField{
		// liveagent_api/models/phone_number.py: swagger_types (line 35)
		// and attribute_map (line 61).
		// phone_number.py, id setter (line 182): must not be None.
		{name: "id", typ: wireID, required: true},
		// phone_number.py, type setter (line 206): allowed_values.
		{name: "type", typ: wireString, enum: []string{"A", "C", "T", "T-O", "S"}},
		// phone_number.py, dial_out_prefix setter (lines 238 and 241):
		// at most 999, at least 1.
		{name: "dial_out_prefix", typ: wireInt, bounds: &[2]int64{1, 999}},
		{name: "record_in_call", typ: wireBool},
		{name: "record_out_call", typ: wireBool},
		// phone_number.py, number setter (line 329): must not be None.
		{name: "number", typ: wireString, required: true},
		{name: "name", typ: wireString},
		{name: "departmentid", typ: wireString},
		// phone_number.py, status setter (line 416): allowed_values.
		{name: "status", typ: wireString, enum: []string{"A", "I"}},
	}, own: map[string]string{
		"date_created": "the backend's own, so that a date range can be paged (docs/reference-backend.md)",
	}},
	{list: "tickets/history", model: "TicketHistory", fields: []modelField{
		// liveagent_api/models/ticket_history.py: swagger_types (line 35)
		// and attribute_map (line 48); every field a "str", no setter
		// checks a value.
		{name: "id", typ: wireID},
		{name: "conversation_id", typ: wireString},
		{name: "conversation_code", typ: wireString},
		{name: "department_id", typ: wireString},
		{name: "department_name", typ: wireString},
		{name: "agent_id", typ: wireString},
		{name: "status", typ: wireString},
		{name: "date_from", typ: wireString, format: dateTimeText},
		{name: "date_to", typ: wireString, format: dateTimeText},
		{name: "elapsed_time", typ: wireString},
	}},
	{list: "tickets", model: "Ticket", fields: []modelField{
		// liveagent_api/models/ticket.py: swagger_types (line 35) and
		// attribute_map (line 58).
		{name: "id", typ: wireID},
		{name: "owner_contactid", typ: wireString},
		{name: "owner_email", typ: wireString},
		{name: "owner_name", typ: wireString},
		{name: "departmentid", typ: wireString},
		{name: "agentid", typ: wireString},
		// ticket.py, status setter (line 296): allowed_values.
		{name: "status", typ: wireString, enum: []string{"I", "N", "T", "P", "R", "X", "B", "A", "C", "W", "L"}},
		{name: "tags", typ: wireStringList},
		{name: "code", typ: wireString},
		// ticket.py, channel_type's doc comment (line 352) and
		// docs/Ticket.md: the codes, documented but not checked by the
		// setter.
		{name: "channel_type", typ: wireString, enum: []string{"E", "B", "M", "I", "C", "W", "F", "A", "T", "Q", "S"}},
		{name: "date_created", typ: wireString, format: dateTimeText},
		{name: "date_changed", typ: wireString, format: dateTimeText},
		{name: "date_resolved", typ: wireString, format: dateTimeOrEmpty},
		// ticket.py swagger_types: "datetime".
		{name: "last_activity", typ: wireDateTime, format: dateTimeText},
		{name: "last_activity_public", typ: wireString, format: dateTimeText},
		{name: "subject", typ: wireString},
		// ticket.py swagger_types: "list[CustomFields]".
		{name: "custom_fields", typ: wireCustomFields},
	}, own: map[string]string{
		"public_access_url": "the product spec's name (helpdesk-api.md 2.1); LiveAgent's model has public_access_urlcode",
	}},
}

// modelOf returns the table's model of list.
func modelOf(list string) *liveAgentModel {
	for i := range liveAgentModels {
		if liveAgentModels[i].list == list {
			return &liveAgentModels[i]
		}
	}
	return nil
}

// violations returns every way the JSON object raw breaks m's rules, as
// messages naming the field; none when the model accepts it.
func (m *liveAgentModel) violations(raw []byte) []string {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var rec map[string]any
	if err := d.Decode(&rec); err != nil {
		return []string{fmt.Sprintf("not a JSON object: %v", err)}
	}
	var out []string
	for _, key := range slices.Sorted(maps.Keys(rec)) {
		if _, own := m.own[key]; own || slices.ContainsFunc(m.fields, func(f modelField) bool { return f.name == key }) {
			continue
		}
		out = append(out, fmt.Sprintf("%s is not a field of %s", key, m.model))
	}
	for _, f := range m.fields {
		v, present := rec[f.name]
		if v == nil {
			if f.required {
				out = append(out, fmt.Sprintf("%s is required by %s, and is %s", f.name, m.model,
					map[bool]string{true: "null", false: "missing"}[present]))
			}
			continue
		}
		if err := f.check(v); err != nil {
			out = append(out, fmt.Sprintf("%s: %v", f.name, err))
		}
	}
	return out
}

// check returns why v, not null, breaks f's rules, or nil.
func (f modelField) check(v any) error {
	wrongType := fmt.Errorf("%v (%T) is not %s", v, v, wireTypeNames[f.typ])
	var text string
	switch f.typ {
	case wireString, wireDateTime:
		s, ok := v.(string)
		if !ok {
			return wrongType
		}
		text = s
	case wireID:
		switch v := v.(type) {
		case string:
			text = v
		case json.Number:
			if _, err := strconv.ParseInt(string(v), 10, 64); err != nil {
				return wrongType
			}
			text = string(v)
		default:
			return wrongType
		}
	case wireInt:
		n, ok := v.(json.Number)
		if !ok {
			return wrongType
		}
		i, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil {
			return wrongType
		}
		if f.bounds != nil && (i < f.bounds[0] || i > f.bounds[1]) {
			return fmt.Errorf("%d is outside [%d, %d]", i, f.bounds[0], f.bounds[1])
		}
		text = string(n)
	case wireBool:
		if _, ok := v.(bool); !ok {
			return wrongType
		}
	case wireStringList:
		items, ok := v.([]any)
		if !ok {
			return wrongType
		}
		for _, item := range items {
			if _, ok := item.(string); !ok {
				return wrongType
			}
		}
	case wireCustomFields:
		items, ok := v.([]any)
		if !ok {
			return wrongType
		}
		for _, item := range items {
			obj, ok := item.(map[string]any)
			if !ok {
				return wrongType
			}
			for k, x := range obj {
				if _, ok := x.(string); !ok || (k != "code" && k != "value") {
					return fmt.Errorf("%v is not a CustomFields {\"code\",\"value\"} of strings", obj)
				}
			}
		}
	}
	if f.enum != nil && !slices.Contains(f.enum, text) {
		return fmt.Errorf("%q is not one of %v", text, f.enum)
	}
	switch {
	case f.format == dateTimeOrEmpty && text == "":
	case f.format == dateTimeText || f.format == dateTimeOrEmpty:
		if _, err := time.Parse(time.DateTime, text); err != nil {
			return fmt.Errorf("%q is not a date-time YYYY-MM-DD hh:mm:ss", text)
		}
	}
	return nil
}
