package ticketfilter

import (
	"slices"
	"strings"
)

// This file is the one read-only view of the filter grammar's tables for
// code outside the package, such as the OpenAPI document (package
// openapi): it copies the tables of filter_grammar.go as they are, so a
// change there changes every description built from it.

// FilterValueKind names what one value of a parameter is.
type FilterValueKind string

// The kinds of filter values.
const (
	FilterKindText       FilterValueKind = "text"        // free text, not empty
	FilterKindFieldValue FilterValueKind = "field_value" // a custom field's value: free text, may be empty
	FilterKindID         FilterValueKind = "id"          // an identifier (a token)
	FilterKindTag        FilterValueKind = "tag"         // a tag code (a token)
	FilterKindStatus     FilterValueKind = "status"      // a status code (a token, or one of FilterGrammar.StatusCodes)
	FilterKindChannel    FilterValueKind = "channel"     // a channel_type code (a token, or one of FilterGrammar.ChannelTypes)
	FilterKindDateTime   FilterValueKind = "date_time"   // a date-time
)

var filterKindNames = [filterKindCount]FilterValueKind{
	filterText:       FilterKindText,
	filterFieldValue: FilterKindFieldValue,
	filterID:         FilterKindID,
	filterTag:        FilterKindTag,
	filterStatus:     FilterKindStatus,
	filterChannel:    FilterKindChannel,
	filterDateTime:   FilterKindDateTime,
}

// FilterValueShape names what a whole value must look like for an operator.
type FilterValueShape string

// The shapes of filter values.
const (
	FilterShapeOne    FilterValueShape = "one"    // one value of the parameter's kind
	FilterShapeList   FilterValueShape = "list"   // values of the parameter's kind, comma-separated, no empty item
	FilterShapeText   FilterValueShape = "text"   // text to look for, not empty
	FilterShapeEmpty  FilterValueShape = "empty"  // exactly ""
	FilterShapeDate   FilterValueShape = "date"   // a date-time YYYY-MM-DD hh:mm:ss
	FilterShapePeriod FilterValueShape = "period" // a period code
)

var filterShapeNames = map[filterShape]FilterValueShape{
	filterShapeOne:    FilterShapeOne,
	filterShapeList:   FilterShapeList,
	filterShapeText:   FilterShapeText,
	filterShapeEmpty:  FilterShapeEmpty,
	filterShapeDate:   FilterShapeDate,
	filterShapePeriod: FilterShapePeriod,
}

// FilterParam is one parameter's row of the grammar.
type FilterParam struct {
	// Name is the parameter; for the custom-field rule, the prefix field_.
	Name string
	// Operators are the allowed operators, in the spec's order.
	Operators []string
	// ObjectOperator is the operator the object form gives the parameter,
	// "" when the object form cannot use it.
	ObjectOperator string
	Kind           FilterValueKind
}

// FilterGrammar is the _filters grammar as a validator built from a
// FilterConfig applies it: the tables with the configured limits and code
// lists filled in.
type FilterGrammar struct {
	Params []FilterParam // in the spec's order
	// Custom is the rule for custom fields: Name is the prefix, a
	// parameter is the prefix followed by a non-empty field name.
	Custom FilterParam
	// Operators maps every operator to the shape of its value.
	Operators map[string]FilterValueShape
	// NotFilterable are the fields the spec excludes, sorted, each with a
	// hint for the client or "".
	NotFilterable map[string]string

	MaxFilters int // conditions in one value
	MaxLength  int // bytes of the raw value
	// TokenMaxBytes bounds identifiers and codes (kinds id, tag, status,
	// channel), which have no comma, space or control character.
	TokenMaxBytes int
	// PeriodMaxLength bounds a DP code when PeriodCodes is empty, and
	// PeriodChars lists its characters as the inside of a regular
	// expression's class, e.g. A-Za-z0-9_.
	PeriodMaxLength int
	PeriodChars     string
	// StatusCodes, ChannelTypes and PeriodCodes are the configured code
	// lists; empty means any code of the right syntax.
	StatusCodes, ChannelTypes, PeriodCodes []string
}

// DescribeFilters returns the grammar NewFilterValidator(cfg) checks.
func DescribeFilters(cfg FilterConfig) FilterGrammar {
	v := NewFilterValidator(cfg)
	g := FilterGrammar{
		Custom:          exportFilterParam(filterCustomField),
		Operators:       make(map[string]FilterValueShape, len(filterOperators)),
		NotFilterable:   make(map[string]string, len(filterNotAccepted)),
		MaxFilters:      v.maxFilters,
		MaxLength:       v.maxLength,
		TokenMaxBytes:   filterMaxToken,
		PeriodMaxLength: filterMaxPeriod,
		PeriodChars:     filterPeriodChars,
		StatusCodes:     slices.Clone(v.codes[filterStatus].all),
		ChannelTypes:    slices.Clone(v.codes[filterChannel].all),
		PeriodCodes:     slices.Clone(v.periods.all),
	}
	for _, p := range filterParams {
		g.Params = append(g.Params, exportFilterParam(p))
	}
	for op, shape := range filterOperators {
		g.Operators[op] = filterShapeNames[shape]
	}
	for name, hint := range filterNotAccepted {
		g.NotFilterable[name] = hint
	}
	return g
}

func exportFilterParam(p filterParamSpec) FilterParam {
	ops := strings.Fields(p.ops)
	return FilterParam{Name: p.name, Operators: ops, ObjectOperator: filterObjectOp(ops), Kind: filterKindNames[p.kind]}
}

// filterPeriodChars are the characters filterIsShortCode accepts, as a
// regular expression's class; TestDescribeFilters holds the two together.
const filterPeriodChars = "A-Za-z0-9_"
