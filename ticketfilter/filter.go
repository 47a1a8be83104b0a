package ticketfilter

import (
	"fmt"
	"slices"
	"strings"
)

// FilterConfig holds the configurable parts of the filter rules.
type FilterConfig struct {
	MaxFilters   int      // default 50 when 0
	MaxLength    int      // bytes of the raw _filters value; default 8192 when 0
	StatusCodes  []string // allowed status codes; empty = any code (LiveAgent's: StatusCodes)
	ChannelTypes []string // allowed channel_type codes; empty = any code (LiveAgent's: ChannelTypes)
	PeriodCodes  []string // allowed DP codes; empty = any short code (LiveAgent's: PeriodCodes)
}

// Defaults of FilterConfig's limits.
const (
	filterDefaultMaxFilters = 50
	filterDefaultMaxLength  = 8192
)

// Filter is one validated condition.
type Filter struct{ Param, Op, Value string }

// FilterError says what is wrong with a _filters value, in words a client
// can act on.
type FilterError struct {
	Position int    // 1-based position of the offending filter; 0 when the whole value is at fault
	Param    string // parameter at fault, "" when unknown
	Reason   string // short machine-friendly reason: "syntax", "too_long", "too_many", "unknown_parameter", "not_filterable", "operator" or "value"
	Message  string // full sentence naming the position, the parameter and what is allowed
}

func (e *FilterError) Error() string { return e.Message }

// The values of FilterError.Reason.
const (
	filterReasonSyntax      = "syntax"            // not one of the two JSON shapes
	filterReasonTooLong     = "too_long"          // longer than MaxLength
	filterReasonTooMany     = "too_many"          // more than MaxFilters conditions
	filterReasonUnknown     = "unknown_parameter" // no such parameter
	filterReasonNotAccepted = "not_filterable"    // a field the spec excludes from filters
	filterReasonOperator    = "operator"          // operator not allowed for the parameter
	filterReasonValue       = "value"             // value not of the shape the operator takes
)

// Texts shared by several messages.
const (
	filterShapesHint        = `; send an object like {"status":"C"} or a list of triples like [["status","IN","C,L"]]`
	filterTripleDescription = `["<parameter>","<operator>","<value>"]`
)

// FilterValidator checks _filters values; build once, safe for concurrent use.
type FilterValidator struct {
	maxFilters int
	maxLength  int
	params     map[string]*filterRule
	custom     *filterRule
	codes      [filterKindCount]filterCodes // allowed codes of the status and channel kinds
	periods    filterCodes
	paramList  string // every parameter, for the unknown-parameter message
}

// filterRule is a parameter's row of the grammar, ready for lookups.
type filterRule struct {
	ops      []string // allowed operators, in the spec's order
	opList   string   // the same for messages: "E, IN, NI"
	opChoice string   // and as a choice: "E, IN or NI"
	kind     filterKind
	objectOp string // operator of the object form; "" when there is none
	listOp   string // IN or CY when the parameter takes one, for hints
}

// NewFilterValidator returns a validator for cfg. It panics if the grammar
// tables name an operator they do not define, which a test rules out.
func NewFilterValidator(cfg FilterConfig) *FilterValidator {
	v := &FilterValidator{
		maxFilters: cfg.MaxFilters,
		maxLength:  cfg.MaxLength,
		params:     make(map[string]*filterRule, len(filterParams)),
		custom:     newFilterRule(filterCustomField),
		periods:    newFilterCodes(cfg.PeriodCodes),
	}
	if v.maxFilters <= 0 {
		v.maxFilters = filterDefaultMaxFilters
	}
	if v.maxLength <= 0 {
		v.maxLength = filterDefaultMaxLength
	}
	v.codes[filterStatus] = newFilterCodes(cfg.StatusCodes)
	v.codes[filterChannel] = newFilterCodes(cfg.ChannelTypes)
	names := make([]string, 0, len(filterParams))
	for _, p := range filterParams {
		v.params[p.name] = newFilterRule(p)
		names = append(names, p.name)
	}
	v.paramList = strings.Join(names, ", ") + " and " + filterCustomField.name + "<name>"
	return v
}

func newFilterRule(p filterParamSpec) *filterRule {
	r := &filterRule{ops: strings.Fields(p.ops), kind: p.kind}
	for _, op := range r.ops {
		if _, ok := filterOperators[op]; !ok {
			panic("translate: filter grammar: parameter " + p.name + " names unknown operator " + op)
		}
		if r.listOp == "" && (op == "IN" || op == "CY") {
			r.listOp = op
		}
	}
	r.opList = strings.Join(r.ops, ", ")
	r.opChoice = r.opList
	if n := len(r.ops); n > 1 {
		r.opChoice = strings.Join(r.ops[:n-1], ", ") + " or " + r.ops[n-1]
	}
	r.objectOp = filterObjectOp(r.ops)
	return r
}

// Parse validates raw (the decoded _filters query value) and returns its
// conditions in order. "[]", "{}" mean no filter (nil, nil). Errors are
// *FilterError.
//
// In the object form each condition gets the parameter's equality-type
// operator (E, or IN or L for the parameters that have only that), so
// every returned Filter has its Op set. All syntax is checked before any
// condition, so a client fixes the JSON first.
func (v *FilterValidator) Parse(raw string) ([]Filter, error) {
	if len(raw) > v.maxLength {
		return nil, &FilterError{Reason: filterReasonTooLong,
			Message: fmt.Sprintf("_filters is %d bytes long; the limit is %d bytes", len(raw), v.maxLength)}
	}
	sc := filterScanner{s: raw, max: v.maxFilters}
	filters, object, err := sc.scan()
	if err != nil {
		return nil, err
	}
	for i := range filters {
		if err := v.check(i+1, filters[:i+1], object); err != nil {
			return nil, err
		}
	}
	return filters, nil
}

// check validates the last of filters, at position pos, in place: in the
// object form it sets the operator.
func (v *FilterValidator) check(pos int, filters []Filter, object bool) error {
	f := &filters[pos-1]
	rule, err := v.rule(pos, f.Param)
	if err != nil {
		return err
	}
	if object {
		if first := slices.IndexFunc(filters[:pos-1], func(g Filter) bool { return g.Param == f.Param }); first >= 0 {
			return filterFail(pos, f.Param, filterReasonSyntax,
				"%q appears twice in the object (filters %d and %d); the object form takes each parameter once, use the list form for several conditions on one parameter",
				f.Param, first+1, pos)
		}
		if rule.objectOp == "" {
			return filterFail(pos, f.Param, filterReasonOperator,
				"%s has no equality operator, so the object form cannot use it; use the list form with %s, e.g. [[%q,%q,%q]]",
				f.Param, rule.opChoice, f.Param, rule.ops[0], v.example(rule.kind, false))
		}
		f.Op = rule.objectOp
	}
	if !slices.Contains(rule.ops, f.Op) {
		hint := ""
		if upper := strings.ToUpper(f.Op); upper != f.Op && slices.Contains(rule.ops, upper) {
			hint = " (operators are upper case)"
		}
		return filterFail(pos, f.Param, filterReasonOperator,
			"operator %s is not allowed%s; %s takes %s", filterQuote(f.Op), hint, f.Param, rule.opList)
	}
	return v.checkValue(pos, rule, f)
}

// rule finds the grammar row of param.
func (v *FilterValidator) rule(pos int, param string) (*filterRule, error) {
	if r, ok := v.params[param]; ok {
		return r, nil
	}
	if name, ok := strings.CutPrefix(param, filterCustomField.name); ok {
		if name == "" {
			return nil, filterFail(pos, param, filterReasonUnknown,
				"a custom field filter needs the field's name after %q, e.g. %q", filterCustomField.name, "field_priority")
		}
		return v.custom, nil
	}
	if hint, ok := filterNotAccepted[param]; ok {
		if hint != "" {
			hint = "; " + hint
		}
		return nil, filterFail(pos, param, filterReasonNotAccepted, "%s cannot be used as a filter%s", param, hint)
	}
	hint := ""
	if lower := strings.ToLower(param); lower != param {
		if _, ok := v.params[lower]; ok {
			hint = fmt.Sprintf(" (parameter names are lower case: %q)", lower)
		}
	}
	return nil, filterFail(pos, param, filterReasonUnknown,
		"unknown parameter%s; the ticket list filters on %s", hint, v.paramList)
}

// filterFail builds the error for the filter at pos about param.
func filterFail(pos int, param, reason, format string, args ...any) *FilterError {
	return &FilterError{Position: pos, Param: param, Reason: reason,
		Message: fmt.Sprintf("filter %d (%s): ", pos, filterQuote(param)) + fmt.Sprintf(format, args...)}
}
