package openapi

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/helpdesk-gateway/gateway/ticketfilter"
)

// The _filters grammar as JSON Schema, built from translate's tables. What
// JSON Schema cannot say (bytes rather than characters, real calendar
// dates, a parameter twice in one object, the raw value's length) is said
// in descriptions; the schema never refuses a value the gateway accepts.
//
// Patterns use only syntax ECMA-262 and Go's regexp share: classes,
// \xHH escapes, (?:) groups and bounded repeats.

// noControl is a character that is not a control character (C0, DEL, C1),
// which no filter value may hold.
const noControl = `[^\x00-\x1f\x7f-\x9f]`

// filtersSchema is the schema of a _filters value.
func filtersSchema(g ticketfilter.FilterGrammar) map[string]any {
	object := map[string]any{
		"type":                 "object",
		"maxProperties":        g.MaxFilters,
		"additionalProperties": false,
		"description": "Object form: each parameter once, with its equality-type operator: E where the parameter has it, otherwise its only operator when that is IN or L. " +
			"Date parameters have none, so they need the list form.",
	}
	props := map[string]any{}
	for _, p := range g.Params {
		if p.ObjectOperator != "" {
			props[p.Name] = valueSchema(g, p, g.Operators[p.ObjectOperator])
		}
	}
	object["properties"] = props
	if g.Custom.ObjectOperator != "" {
		object["patternProperties"] = map[string]any{
			customPattern(g): valueSchema(g, g.Custom, g.Operators[g.Custom.ObjectOperator]),
		}
	}

	var triples []any
	for _, p := range g.Params {
		triples = append(triples, tripleSchemas(g, p, map[string]any{"const": p.Name})...)
	}
	triples = append(triples, tripleSchemas(g, g.Custom, map[string]any{
		"type": "string", "pattern": customPattern(g),
		"description": "A custom field: " + g.Custom.Name + "<name>, with a non-empty name.",
	})...)
	list := map[string]any{
		"type":     "array",
		"maxItems": g.MaxFilters,
		"items":    map[string]any{"anyOf": triples},
		"description": "List form: triples [\"<parameter>\",\"<operator>\",\"<value>\"], all of which must hold; " +
			"one parameter may appear several times (date ranges).",
	}

	notFilterable := slices.Sorted(maps.Keys(g.NotFilterable))
	return map[string]any{
		"oneOf": []any{object, list},
		"description": fmt.Sprintf("The ticket filters. At most %d filters and %d bytes (the raw query value); "+
			"parameter names and operators are case-sensitive (lower-case names, upper-case operators). "+
			"Not filterable: %s (search covers the owner's details). "+
			"Every value is a string with no control character. "+
			"Identifiers and codes are 1 to %d bytes without commas or spaces; lists (IN, NI, CY) are comma-separated with no empty item and no spaces around commas; "+
			"IE and INE take exactly \"\"; date-times are %q and must be a real calendar time; "+
			"DP takes %s.",
			g.MaxFilters, g.MaxLength, strings.Join(notFilterable, ", "), g.TokenMaxBytes,
			"YYYY-MM-DD hh:mm:ss", periodWords(g)),
		"examples": []any{
			map[string]any{"status": firstOr(g.StatusCodes, "C"), "subject": "printer"},
			[]any{[]any{"date_created", "D>=", "2025-06-01 00:00:00"}, []any{"date_created", "D<", "2025-07-01 00:00:00"}},
		},
	}
}

// tripleSchemas are the list-form triples of parameter p, one per shape of
// its operators' values, with first as the schema of the parameter item.
func tripleSchemas(g ticketfilter.FilterGrammar, p ticketfilter.FilterParam, first map[string]any) []any {
	var shapes []ticketfilter.FilterValueShape
	ops := map[ticketfilter.FilterValueShape][]string{}
	for _, op := range p.Operators {
		shape := g.Operators[op]
		if _, seen := ops[shape]; !seen {
			shapes = append(shapes, shape)
		}
		ops[shape] = append(ops[shape], op)
	}
	out := make([]any, 0, len(shapes))
	for _, shape := range shapes {
		out = append(out, map[string]any{
			"type":        "array",
			"minItems":    3,
			"prefixItems": []any{first, map[string]any{"enum": ops[shape]}, valueSchema(g, p, shape)},
			"items":       false,
		})
	}
	return out
}

// customPattern matches a custom field's parameter name.
func customPattern(g ticketfilter.FilterGrammar) string {
	return "^" + regexp.QuoteMeta(g.Custom.Name) + `[\s\S]`
}

// valueSchema is the schema of p's value under an operator of shape.
func valueSchema(g ticketfilter.FilterGrammar, p ticketfilter.FilterParam, shape ticketfilter.FilterValueShape) map[string]any {
	switch shape {
	case ticketfilter.FilterShapeEmpty:
		return map[string]any{"const": "", "description": "Exactly the empty string."}
	case ticketfilter.FilterShapeText:
		return map[string]any{"type": "string", "minLength": 1, "pattern": "^" + noControl + "*$", "description": "The text to look for, not empty."}
	case ticketfilter.FilterShapeDate:
		return map[string]any{
			"type":        "string",
			"pattern":     `^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}$`,
			"description": "A date-time YYYY-MM-DD hh:mm:ss that is a real calendar time (no Feb 30, no 24:00:00), e.g. \"2024-01-31 13:45:00\".",
		}
	case ticketfilter.FilterShapePeriod:
		if len(g.PeriodCodes) > 0 {
			return map[string]any{"type": "string", "enum": g.PeriodCodes, "description": "A period code of period_codes."}
		}
		return map[string]any{
			"type":        "string",
			"maxLength":   g.PeriodMaxLength,
			"pattern":     "^[" + g.PeriodChars + "]+$",
			"description": "A period code: " + periodWords(g) + ".",
		}
	case ticketfilter.FilterShapeList:
		item, what := itemPattern(g, p.Kind, true)
		return map[string]any{
			"type":        "string",
			"pattern":     "^" + item + "(?:," + item + ")*$",
			"description": "A comma-separated list of " + what + ", with no empty item.",
		}
	}
	// FilterShapeOne: one value of the parameter's kind.
	switch p.Kind {
	case ticketfilter.FilterKindText:
		return map[string]any{"type": "string", "minLength": 1, "pattern": "^" + noControl + "*$", "description": "Text, not empty."}
	case ticketfilter.FilterKindFieldValue:
		return map[string]any{"type": "string", "pattern": "^" + noControl + "*$", "description": "A custom field's value; may be empty."}
	}
	if codes := kindCodes(g, p.Kind); len(codes) > 0 {
		return map[string]any{"type": "string", "enum": codes, "description": "One of the configured codes."}
	}
	item, what := itemPattern(g, p.Kind, false)
	return map[string]any{"type": "string", "pattern": "^" + item + "$", "description": strings.ToUpper(what[:1]) + what[1:] + "."}
}

// itemPattern is the pattern of one item of kind in a list, and words for
// it.
func itemPattern(g ticketfilter.FilterGrammar, kind ticketfilter.FilterValueKind, plural bool) (string, string) {
	switch kind {
	case ticketfilter.FilterKindText, ticketfilter.FilterKindFieldValue:
		return `[^,\x00-\x1f\x7f-\x9f]+`, "words"
	}
	if codes := kindCodes(g, kind); len(codes) > 0 {
		quoted := make([]string, len(codes))
		for i, c := range codes {
			quoted[i] = regexp.QuoteMeta(c)
		}
		return "(?:" + strings.Join(quoted, "|") + ")", "the configured codes: " + strings.Join(codes, ", ")
	}
	what := map[ticketfilter.FilterValueKind]string{
		ticketfilter.FilterKindID:      "identifier",
		ticketfilter.FilterKindTag:     "tag code",
		ticketfilter.FilterKindStatus:  "status code",
		ticketfilter.FilterKindChannel: "channel type code",
	}[kind]
	if what == "" {
		what = "code"
	}
	if plural {
		what += "s"
	} else {
		what = article(what) + " " + what
	}
	words := fmt.Sprintf("%s, 1 to %d bytes without commas, spaces or control characters", what, g.TokenMaxBytes)
	switch kind {
	case ticketfilter.FilterKindStatus:
		words += "; any code is accepted, since status_codes is not configured. " + known(ticketfilter.StatusCodes())
	case ticketfilter.FilterKindChannel:
		words += "; any code is accepted, since channel_types is not configured. " + known(ticketfilter.ChannelTypes())
	}
	return fmt.Sprintf(`[^, \x00-\x1f\x7f-\x9f]{1,%d}`, g.TokenMaxBytes), words
}

func kindCodes(g ticketfilter.FilterGrammar, kind ticketfilter.FilterValueKind) []string {
	switch kind {
	case ticketfilter.FilterKindStatus:
		return g.StatusCodes
	case ticketfilter.FilterKindChannel:
		return g.ChannelTypes
	}
	return nil
}

// periodWords describes the DP codes accepted.
func periodWords(g ticketfilter.FilterGrammar) string {
	if len(g.PeriodCodes) > 0 {
		return "one of the period codes " + strings.Join(g.PeriodCodes, ", ")
	}
	return fmt.Sprintf("any period code of 1 to %d characters %s, since period_codes is not configured. %s",
		g.PeriodMaxLength, g.PeriodChars, known(ticketfilter.PeriodCodes()))
}

// known names LiveAgent's codes, which the gateway accepts by default
// among others, so they are words rather than an enum.
func known(codes []ticketfilter.Code) string {
	items := make([]string, len(codes))
	for i, c := range codes {
		items[i] = c.Code + " (" + c.Meaning + ")"
	}
	return "LiveAgent's are " + strings.Join(items, ", ") + " (from " + ticketfilter.CodesSource + ")"
}

func article(word string) string {
	if strings.ContainsRune("aeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}

func firstOr(list []string, def string) string {
	if len(list) > 0 {
		return list[0]
	}
	return def
}
