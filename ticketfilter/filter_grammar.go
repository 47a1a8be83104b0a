package ticketfilter

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/helpdesk-gateway/gateway/internal/jsonstr"
)

// This file is the ticket-filter grammar of the API spec (sections 2 and 4.3)
// written as data: which parameters exist, which operators each takes, and
// what their values look like. The validator in filter.go only interprets
// these tables, so adding a parameter or an operator is a one-line change
// here.

// filterKind is what one value of a parameter is: the whole value of E and
// NE, and each item of an IN, NI or CY list.
type filterKind uint8

const (
	filterText       filterKind = iota // free text, not empty
	filterFieldValue                   // a custom field's value: free text, may be empty
	filterID                           // an identifier
	filterTag                          // a tag code
	filterStatus                       // a status code, checked against FilterConfig.StatusCodes
	filterChannel                      // a channel_type code, checked against FilterConfig.ChannelTypes
	filterDateTime                     // a date-time; its parameters take only the date operators
	filterKindCount
)

// filterKinds names each kind in the error messages, with an example value
// and an example list.
var filterKinds = [filterKindCount]struct{ name, plural, example, exampleList string }{
	filterText:       {"text", "words", "printer", "printer,scanner"},
	filterFieldValue: {"a value", "values", "blue", "blue,green"},
	filterID:         {"an identifier", "identifiers", "42", "42,43"},
	filterTag:        {"a tag code", "tag codes", "vip", "vip,urgent"},
	filterStatus:     {"a status code", "status codes", "C", "C,L"},
	filterChannel:    {"a channel type code", "channel type codes", "E", "E,C"},
	filterDateTime:   {"a date-time", "date-times", "2024-01-31 13:45:00", ""},
}

// filterShape is what a whole value must look like for an operator.
type filterShape uint8

const (
	filterShapeOne    filterShape = iota // one value of the parameter's kind
	filterShapeList                      // values of the parameter's kind, comma-separated, no empty item
	filterShapeText                      // text to look for, not empty
	filterShapeEmpty                     // exactly ""
	filterShapeDate                      // a date-time YYYY-MM-DD hh:mm:ss
	filterShapePeriod                    // a period code
)

// filterOperators lists every operator with the shape of its value. The
// comments give the meaning the reference backend implements; the spec
// itself does not define them.
var filterOperators = map[string]filterShape{
	"E":   filterShapeOne,    // equals (for subject: contains)
	"NE":  filterShapeOne,    // does not equal
	"IN":  filterShapeList,   // is one of
	"NI":  filterShapeList,   // is none of
	"CY":  filterShapeList,   // has any of (tags)
	"L":   filterShapeText,   // contains, case-insensitive
	"NL":  filterShapeText,   // does not contain
	"IE":  filterShapeEmpty,  // is empty
	"INE": filterShapeEmpty,  // is not empty
	"D>":  filterShapeDate,   // after
	"D<":  filterShapeDate,   // before
	"D>=": filterShapeDate,   // at or after
	"D<=": filterShapeDate,   // at or before
	"DP":  filterShapePeriod, // within a period
}

// filterParamSpec is one row of the spec's operator tables.
type filterParamSpec struct {
	name string
	ops  string // allowed operators, space-separated, in the spec's order
	kind filterKind
}

// filterParams are the parameters _filters accepts (spec 4.3).
var filterParams = []filterParamSpec{
	// Ticket fields (spec 2.1).
	{"status", "E IN NI", filterStatus},
	{"tags", "E L CY NI IE INE", filterTag},
	{"channel_type", "E IN", filterChannel},
	{"subject", "E IN", filterText},
	{"owner_contactid", "E IN", filterID},
	{"agentid", "IN", filterID},
	{"departmentid", "E IN NI", filterID},
	{"date_created", "D> D< D>= D<= DP", filterDateTime},
	{"date_changed", "D> D< D>= D<= DP", filterDateTime},
	{"date_resolved", "D> D< D>= D<= DP", filterDateTime},
	{"last_activity", "D> D< D>= D<= DP", filterDateTime},

	// Filter-only parameters (spec 2.2).
	{"m_datecreated", "D> D< D>= D<= DP", filterDateTime},
	{"m_userid", "IN", filterID},
	{"sla_levelid", "E NE IE INE", filterID},
	{"groups", "L", filterText},
	{"s_category", "IN", filterID},
	{"f_category", "IN", filterID},

	// The full-text pseudo-field (spec 2.3).
	{"search", "L", filterText},
}

// filterCustomField is the rule for custom fields, named by prefix: the
// parameter field_<name> filters on the custom field <name>.
var filterCustomField = filterParamSpec{"field_", "E NE L NL", filterFieldValue}

// filterNotAccepted are ticket fields the spec (2.1, 4.3 rule 6) says cannot
// be filtered on, each with a hint for the client, or "".
var filterNotAccepted = map[string]string{
	"id":                   "",
	"code":                 "",
	"owner_email":          `search covers the owner's details: [["search","L","<email>"]]`,
	"owner_name":           `search covers the owner's details: [["search","L","<name>"]]`,
	"last_activity_public": "filter on last_activity instead",
	"public_access_url":    "",
}

// filterObjectOp is the operator a parameter gets in the object form, its
// equality-type behaviour (spec 4.3 rule 2): E where the parameter has it,
// otherwise its only operator when that is IN or L. Date parameters have
// none, so they need the list form.
func filterObjectOp(ops []string) string {
	for _, op := range ops {
		if op == "E" {
			return "E"
		}
	}
	if len(ops) == 1 && (ops[0] == "IN" || ops[0] == "L") {
		return ops[0]
	}
	return ""
}

// filterCodes is a configured list of allowed codes. An empty list allows
// any code of the right syntax.
type filterCodes struct {
	set  map[string]struct{}
	all  []string
	list string // "C, L" for messages
}

func newFilterCodes(codes []string) filterCodes {
	if len(codes) == 0 {
		return filterCodes{}
	}
	c := filterCodes{set: make(map[string]struct{}, len(codes)), all: slices.Clone(codes), list: strings.Join(codes, ", ")}
	for _, code := range codes {
		c.set[code] = struct{}{}
	}
	return c
}

func (c filterCodes) allows(code string) bool {
	if c.set == nil {
		return true
	}
	_, ok := c.set[code]
	return ok
}

// caseHint returns, for a code that is not allowed, a hint naming the
// allowed code it matches but for case, or "": LiveAgent's codes are upper
// case, and a client writing "c" for "C" should be told so.
func (c filterCodes) caseHint(code string) string {
	for _, allowed := range c.all {
		if strings.EqualFold(allowed, code) {
			return fmt.Sprintf(" (codes are case-sensitive: %q)", allowed)
		}
	}
	return ""
}

// checkValue checks f.Value against the shape of f.Op and the kind of the
// parameter.
func (v *FilterValidator) checkValue(pos int, rule *filterRule, f *Filter) error {
	fail := func(format string, args ...any) error {
		return filterFail(pos, f.Param, filterReasonValue, format, args...)
	}
	if filterHasControl(f.Value) {
		return fail("the value contains a control character; remove it")
	}
	switch filterOperators[f.Op] {
	case filterShapeOne:
		if rule.kind != filterText && rule.kind != filterFieldValue && strings.IndexByte(f.Value, ',') >= 0 {
			hint := ""
			if rule.listOp != "" {
				hint = fmt.Sprintf("; for several use %s, e.g. [[%q,%q,%q]]", rule.listOp, f.Param, rule.listOp, v.example(rule.kind, true))
			}
			return fail("%s takes a single value, not a list%s", f.Op, hint)
		}
		if problem := v.itemProblem(rule.kind, f.Value); problem != "" {
			if f.Value == "" {
				return fail("the value is empty; %s takes %s", f.Op, v.describe(rule.kind, false))
			}
			return fail("%s %s; %s takes %s", filterQuote(f.Value), problem, f.Op, v.describe(rule.kind, false))
		}
	case filterShapeList:
		rest, n := f.Value, 1
		for more := true; more; n++ {
			var item string
			item, rest, more = strings.Cut(rest, ",")
			if item == "" {
				return fail("item %d of the %s list %s is empty; %s takes %s", n, f.Op, filterQuote(f.Value), f.Op, v.describe(rule.kind, true))
			}
			if problem := v.itemProblem(rule.kind, item); problem != "" {
				return fail("item %d of the %s list, %s, %s; %s takes %s", n, f.Op, filterQuote(item), problem, f.Op, v.describe(rule.kind, true))
			}
		}
	case filterShapeText:
		if f.Value == "" {
			return fail("the value is empty; %s takes the text to look for, e.g. %q", f.Op, filterKinds[filterText].example)
		}
	case filterShapeEmpty:
		if f.Value != "" {
			return fail(`%s takes the empty value "", not %s`, f.Op, filterQuote(f.Value))
		}
	case filterShapeDate:
		switch problem := filterDateTimeProblem(f.Value); problem {
		case "":
		case "shape":
			return fail(`%s is not a date-time; %s takes "YYYY-MM-DD hh:mm:ss", e.g. %q`, filterQuote(f.Value), f.Op, filterKinds[filterDateTime].example)
		default:
			return fail(`%s is not a real date-time (%s); %s takes "YYYY-MM-DD hh:mm:ss", e.g. %q`, filterQuote(f.Value), problem, f.Op, filterKinds[filterDateTime].example)
		}
	case filterShapePeriod:
		if v.periods.set != nil {
			if !v.periods.allows(f.Value) {
				return fail("%s is not a period code%s; %s takes one of %s", filterQuote(f.Value), v.periods.caseHint(f.Value), f.Op, v.periods.list)
			}
		} else if !filterIsShortCode(f.Value) {
			return fail("%s is not a period code; %s takes a short code of 1 to 32 characters A-Z, a-z, 0-9 and _, such as LiveAgent's %s", filterQuote(f.Value), f.Op, filterPeriodList)
		}
	}
	return nil
}

// itemProblem says what is wrong with s as one value of kind, completing
// the sentence "<s> ...", or returns "" when s is fine.
func (v *FilterValidator) itemProblem(kind filterKind, s string) string {
	switch kind {
	case filterText:
		if s == "" {
			return "is empty"
		}
	case filterFieldValue:
	default:
		if problem := filterTokenProblem(s); problem != "" {
			return "is not " + filterKinds[kind].name + " (" + problem + ")"
		}
		if codes := v.codes[kind]; !codes.allows(s) {
			return "is not an allowed " + strings.TrimPrefix(filterKinds[kind].name, "a ") + codes.caseHint(s)
		}
	}
	return ""
}

// describe says what values of kind look like, as a single value or as a
// list, naming the allowed codes when a list is configured.
func (v *FilterValidator) describe(kind filterKind, list bool) string {
	if codes := v.codes[kind]; codes.set != nil {
		if list {
			return "a comma-separated list of " + codes.list
		}
		return "one of " + codes.list
	}
	k := filterKinds[kind]
	if list {
		return fmt.Sprintf("%s separated by commas, with no empty item, e.g. %q", k.plural, k.exampleList)
	}
	return fmt.Sprintf("%s, e.g. %q", k.name, k.example)
}

// example returns an example value of kind, or list of them, that the
// configuration allows.
func (v *FilterValidator) example(kind filterKind, list bool) string {
	if codes := v.codes[kind]; codes.set != nil {
		if list && len(codes.all) > 1 {
			return codes.all[0] + "," + codes.all[1]
		}
		return codes.all[0]
	}
	if list {
		return filterKinds[kind].exampleList
	}
	return filterKinds[kind].example
}

// Syntactic limits of the values that are codes rather than free text.
const (
	filterMaxToken  = 64 // identifiers, tag, status and channel codes
	filterMaxPeriod = 32 // DP codes when no list is configured
)

// filterDateTimeLayout is the spec's date-time shape (4.3 rule 7).
const filterDateTimeLayout = "2006-01-02 15:04:05"

// filterTokenProblem says why s is not an identifier or code, or "" when it
// is one: 1 to 64 bytes without commas, spaces or control characters.
func filterTokenProblem(s string) string {
	switch {
	case s == "":
		return "it is empty"
	case len(s) > filterMaxToken:
		return "it is longer than 64 bytes"
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == ',':
			return "it contains a comma"
		case c == ' ':
			return "it contains a space"
		case c < 0x20 || c == 0x7f:
			return "it contains a control character"
		}
	}
	return ""
}

// filterHasControl reports whether s holds a control character (C0, DEL or
// C1), which no filter value has a use for.
func filterHasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r >= 0x7f && r < 0xa0 {
			return true
		}
	}
	return false
}

// filterDateTimeProblem says why s is not a real date-time in the spec's
// shape, or "" when it is one. The shape is checked first because
// time.Parse also accepts one-digit months and days.
func filterDateTimeProblem(s string) string {
	if len(s) != len(filterDateTimeLayout) {
		return "shape"
	}
	for i := 0; i < len(s); i++ {
		want := filterDateTimeLayout[i]
		if want >= '0' && want <= '9' {
			if s[i] < '0' || s[i] > '9' {
				return "shape"
			}
		} else if s[i] != want {
			return "shape"
		}
	}
	if _, err := time.Parse(filterDateTimeLayout, s); err != nil {
		if pe, ok := err.(*time.ParseError); ok && pe.Message != "" {
			return strings.TrimPrefix(pe.Message, ": ")
		}
		return "not a calendar time"
	}
	return ""
}

// filterPeriodList names LiveAgent's period codes in messages.
var filterPeriodList = strings.Join(CodeValues(periodCodes), ", ")

// filterIsShortCode reports whether s is a short period code: 1 to 32
// characters of A-Z, a-z, 0-9 and _. Upper case is LiveAgent's (L7D);
// lower case stays accepted, since the gateway never knew the codes and
// took any such word before it was told LiveAgent's.
func filterIsShortCode(s string) bool {
	if s == "" || len(s) > filterMaxPeriod {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// filterQuote quotes a client's value for a message as a JSON string, so it
// reads as the client wrote it, cut to a readable length.
func filterQuote(s string) string {
	const limit = 48
	more := ""
	if len(s) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s, more = s[:cut], "…"
	}
	return string(jsonstr.Append(nil, s)) + more
}
