package ticketfilter

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// specFilterOps is section 4.3 of the spec copied by hand, so that a slip in
// the grammar table shows up as a difference between two independent copies.
var specFilterOps = map[string]string{
	"status":          "E IN NI",
	"tags":            "E L CY NI IE INE",
	"channel_type":    "E IN",
	"subject":         "E IN",
	"owner_contactid": "E IN",
	"agentid":         "IN",
	"departmentid":    "E IN NI",
	"date_created":    "D> D< D>= D<= DP",
	"date_changed":    "D> D< D>= D<= DP",
	"date_resolved":   "D> D< D>= D<= DP",
	"last_activity":   "D> D< D>= D<= DP",
	"field_color":     "E NE L NL",
	"m_datecreated":   "D> D< D>= D<= DP",
	"m_userid":        "IN",
	"sla_levelid":     "E NE IE INE",
	"groups":          "L",
	"s_category":      "IN",
	"f_category":      "IN",
	"search":          "L",
}

var specFilterAllOps = strings.Fields("E NE IN NI CY L NL IE INE D> D< D>= D<= DP")

// specFilterDateParams take the date operators.
var specFilterDateParams = map[string]bool{"date_created": true, "date_changed": true, "date_resolved": true, "last_activity": true, "m_datecreated": true}

// filterValidValue returns a value that param takes with op.
func filterValidValue(param, op string) string {
	switch op {
	case "IN", "NI", "CY":
		return "a1,b2"
	case "IE", "INE":
		return ""
	case "D>", "D<", "D>=", "D<=":
		return "2024-02-29 23:59:59"
	case "DP":
		return "L7D"
	case "L", "NL":
		return "print"
	}
	switch param {
	case "subject", "field_color":
		return "printer, scanner"
	}
	return "x42"
}

func TestFilterGrammarMatchesSpec(t *testing.T) {
	got := map[string]string{"field_color": filterCustomField.ops}
	for _, p := range filterParams {
		got[p.name] = p.ops
	}
	assert.Equal(t, specFilterOps, got)
	for _, name := range []string{"id", "code", "owner_email", "owner_name", "last_activity_public", "public_access_url"} {
		assert.Contains(t, filterNotAccepted, name)
	}
	assert.Len(t, filterNotAccepted, 6)
	assert.ElementsMatch(t, specFilterAllOps, filterKeysOf(filterOperators))
	require.NotPanics(t, func() { NewFilterValidator(FilterConfig{}) })
}

func filterKeysOf[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestFilterEveryParameterAndOperator(t *testing.T) {
	v := NewFilterValidator(FilterConfig{})
	for param, ops := range specFilterOps {
		allowed := strings.Fields(ops)
		for _, op := range specFilterAllOps {
			t.Run(param+" "+op, func(t *testing.T) {
				value := filterValidValue(param, op)
				raw := fmt.Sprintf(`[["status","IN","C"],[%q,%q,%q]]`, param, op, value)
				got, err := v.Parse(raw)
				if strings.Contains(" "+ops+" ", " "+op+" ") {
					require.NoError(t, err)
					assert.Equal(t, []Filter{{"status", "IN", "C"}, {param, op, value}}, got)
					return
				}
				fe := requireFilterError(t, err, "operator", 2, param)
				assert.Contains(t, fe.Message, fmt.Sprintf(`filter 2 (%q): operator %q is not allowed; %s takes %s`, param, op, param, strings.Join(allowed, ", ")))
			})
		}
	}
}

// filterInvalidValue returns a value that param refuses with op.
func filterInvalidValue(param, op string) string {
	switch op {
	case "IN", "NI", "CY":
		return "a1,,b2"
	case "IE", "INE":
		return "x"
	case "D>", "D<", "D>=", "D<=":
		return "2023-02-29 10:00:00"
	case "DP":
		return "Last Week"
	case "L", "NL":
		return ""
	}
	switch param {
	case "subject":
		return ""
	case "field_color":
		return `a\u0007b` // a control character, escaped in the JSON
	}
	return "a b"
}

// TestFilterEveryOperatorRefusesBadValues: for every parameter and each of
// its operators, a value of the wrong shape is refused as a value error
// that names the filter and the parameter.
func TestFilterEveryOperatorRefusesBadValues(t *testing.T) {
	v := NewFilterValidator(FilterConfig{})
	for param, ops := range specFilterOps {
		for _, op := range strings.Fields(ops) {
			t.Run(param+" "+op, func(t *testing.T) {
				value := filterInvalidValue(param, op)
				raw := fmt.Sprintf(`[["status","IN","C"],[%q,%q,"%s"]]`, param, op, value)
				_, err := v.Parse(raw)
				fe := requireFilterError(t, err, "value", 2, param)
				if !strings.Contains(fe.Message, "control character") { // refused whatever the operator
					assert.Contains(t, fe.Message, op+" takes", "the message names what the operator takes")
				}
			})
		}
	}
}

// filterJSONQuote quotes s as a JSON string.
func filterJSONQuote(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func requireFilterError(t *testing.T, err error, reason string, pos int, param string) *FilterError {
	t.Helper()
	var fe *FilterError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, reason, fe.Reason, fe.Message)
	assert.Equal(t, pos, fe.Position, fe.Message)
	assert.Equal(t, param, fe.Param, fe.Message)
	assert.Equal(t, fe.Message, fe.Error())
	if pos > 0 {
		named := fmt.Sprintf("filter %d (%q): ", pos, param)
		unnamed := fmt.Sprintf("filter %d: ", pos)
		assert.True(t, strings.HasPrefix(fe.Message, named) || param == "" && strings.HasPrefix(fe.Message, unnamed),
			"message %q should start with %q", fe.Message, named)
	}
	return fe
}

func TestFilterObjectForm(t *testing.T) {
	v := NewFilterValidator(FilterConfig{})
	for param, op := range map[string]string{
		"status": "E", "tags": "E", "channel_type": "E", "subject": "E", "owner_contactid": "E",
		"departmentid": "E", "sla_levelid": "E", "field_color": "E",
		"agentid": "IN", "m_userid": "IN", "s_category": "IN", "f_category": "IN",
		"search": "L", "groups": "L",
	} {
		t.Run(param, func(t *testing.T) {
			value := filterValidValue(param, op)
			got, err := v.Parse(fmt.Sprintf(`{%q:%q}`, param, value))
			require.NoError(t, err)
			assert.Equal(t, []Filter{{param, op, value}}, got)
		})
	}
	for param := range specFilterDateParams {
		t.Run(param, func(t *testing.T) {
			_, err := v.Parse(fmt.Sprintf(`{"status":"C", %q:"2024-01-01 00:00:00"}`, param))
			fe := requireFilterError(t, err, "operator", 2, param)
			assert.Contains(t, fe.Message, "use the list form with D>, D<, D>=, D<= or DP")
		})
	}

	got, err := v.Parse(` { "status" : "C" , "subject":"printer" } `)
	require.NoError(t, err)
	assert.Equal(t, []Filter{{"status", "E", "C"}, {"subject", "E", "printer"}}, got)

	_, err = v.Parse(`{"status":"C","subject":"a","st\u0061tus":"L"}`)
	fe := requireFilterError(t, err, "syntax", 3, "status")
	assert.Contains(t, fe.Message, "filters 1 and 3")
}

func TestFilterValues(t *testing.T) {
	lists := FilterConfig{
		StatusCodes:  []string{"C", "L", "R"},
		ChannelTypes: []string{"E", "C"},
		PeriodCodes:  CodeValues(PeriodCodes()),
	}
	for _, tc := range []struct {
		name  string
		cfg   FilterConfig
		param string
		op    string
		value string
		want  []string // parts of the message; nil when valid
	}{
		{name: "custom field", param: "field_color", op: "E", value: "blue"},
		{name: "custom field empty value", param: "field_color", op: "E", value: ""},
		{name: "custom field with odd name", param: "field_Due date", op: "NL", value: "x"},
		{name: "custom field L empty", param: "field_color", op: "L", value: "", want: []string{"the value is empty", "L takes the text to look for"}},

		{name: "IE", param: "tags", op: "IE", value: ""},
		{name: "IE not empty", param: "tags", op: "IE", value: "vip", want: []string{`IE takes the empty value "", not "vip"`}},
		{name: "INE not empty", param: "sla_levelid", op: "INE", value: " ", want: []string{`INE takes the empty value "", not " "`}},

		{name: "list", param: "departmentid", op: "NI", value: "1,2,3"},
		{name: "list one item", param: "departmentid", op: "NI", value: "1"},
		{name: "list empty", param: "departmentid", op: "IN", value: "", want: []string{`item 1 of the IN list "" is empty`, "IN takes identifiers separated by commas, with no empty item"}},
		{name: "list empty middle", param: "tags", op: "CY", value: "a,,b", want: []string{`item 2 of the CY list "a,,b" is empty`, "tag codes separated by commas"}},
		{name: "list empty first", param: "status", op: "NI", value: ",a", want: []string{`item 1 of the NI list ",a" is empty`}},
		{name: "list empty last", param: "m_userid", op: "IN", value: "a,", want: []string{`item 2 of the IN list "a," is empty`}},
		{name: "list item with space", param: "agentid", op: "IN", value: "1, 2", want: []string{`item 2 of the IN list, " 2", is not an identifier (it contains a space)`}},
		{name: "list of words", param: "subject", op: "IN", value: "printer,paper jam"},
		{name: "list item too long", param: "s_category", op: "IN", value: "1," + strings.Repeat("9", 65), want: []string{"item 2", "longer than 64 bytes"}},

		{name: "single code with comma", param: "status", op: "E", value: "C,L", want: []string{"E takes a single value, not a list; for several use IN", `[["status","IN","C,L"]]`}},
		{name: "single tag with comma", param: "tags", op: "E", value: "a,b", want: []string{"for several use CY"}},
		{name: "single id with comma", param: "sla_levelid", op: "NE", value: "1,2", want: []string{"NE takes a single value, not a list"}},
		{name: "single code with space", param: "channel_type", op: "E", value: "e mail", want: []string{`"e mail" is not a channel type code (it contains a space); E takes a channel type code, e.g. "E"`}},
		{name: "subject with comma", param: "subject", op: "E", value: "paper, jam"},
		{name: "subject empty", param: "subject", op: "E", value: "", want: []string{`the value is empty; E takes text, e.g. "printer"`}},
		{name: "search empty", param: "search", op: "L", value: "", want: []string{"the value is empty"}},
		{name: "control character", param: "search", op: "L", value: "a\x01b", want: []string{"control character"}},
		{name: "escaped tab", param: "subject", op: "E", value: "a\tb", want: []string{"control character"}},
		{name: "C1 control character", param: "field_x", op: "E", value: "a\u0085b", want: []string{"control character"}},
		{name: "unicode text", param: "search", op: "L", value: "Drucker – Störung ✓"},

		{name: "date", param: "date_created", op: "D>=", value: "2024-01-31 13:45:00"},
		{name: "date leap day", param: "m_datecreated", op: "D<", value: "2024-02-29 00:00:00"},
		{name: "date end of day", param: "last_activity", op: "D<=", value: "2023-12-31 23:59:59"},
		{name: "date no leap day", param: "date_changed", op: "D>", value: "2023-02-29 00:00:00", want: []string{`"2023-02-29 00:00:00" is not a real date-time (day out of range); D> takes "YYYY-MM-DD hh:mm:ss"`}},
		{name: "date Feb 30", param: "date_created", op: "D>", value: "2024-02-30 10:00:00", want: []string{"is not a real date-time (day out of range)"}},
		{name: "date 24:00", param: "date_created", op: "D<", value: "2024-02-01 24:00:00", want: []string{"is not a real date-time (hour out of range)"}},
		{name: "date minute 60", param: "date_created", op: "D<", value: "2024-02-01 10:60:00", want: []string{"minute out of range"}},
		{name: "date month 13", param: "date_created", op: "D<", value: "2024-13-01 10:00:00", want: []string{"month out of range"}},
		{name: "date one-digit month", param: "date_resolved", op: "D>=", value: "2024-1-02 10:00:00", want: []string{`"2024-1-02 10:00:00" is not a date-time; D>= takes "YYYY-MM-DD hh:mm:ss", e.g.`}},
		{name: "date only", param: "date_created", op: "D>=", value: "2024-01-02", want: []string{"is not a date-time"}},
		{name: "date with T", param: "date_created", op: "D>=", value: "2024-01-02T10:00:00", want: []string{"is not a date-time"}},
		{name: "date with zone", param: "date_created", op: "D>=", value: "2024-01-02 10:00:00Z", want: []string{"is not a date-time"}},
		{name: "date with sign", param: "date_created", op: "D>=", value: "+024-01-02 10:00:00", want: []string{"is not a date-time"}},
		{name: "date empty", param: "date_created", op: "D>=", value: "", want: []string{`"" is not a date-time`}},

		{name: "DP LiveAgent code", param: "date_created", op: "DP", value: "L7D"},
		{name: "DP any short code", param: "date_created", op: "DP", value: "last_90_days"},
		{name: "DP mixed case", param: "date_created", op: "DP", value: "Today"},
		{name: "DP with a dash", param: "date_created", op: "DP", value: "last-7", want: []string{`"last-7" is not a period code; DP takes a short code of 1 to 32 characters A-Z, a-z, 0-9 and _, such as LiveAgent's T, Y, L7D, L30D, L90D, TW, LW, L2W, LWW, TM, LM, TY, LY`}},
		{name: "DP too long", param: "date_created", op: "DP", value: strings.Repeat("a", 33), want: []string{"is not a period code"}},
		{name: "DP empty", param: "date_created", op: "DP", value: "", want: []string{`"" is not a period code`}},
		{name: "DP listed", cfg: lists, param: "m_datecreated", op: "DP", value: "TW"},
		{name: "DP not listed", cfg: lists, param: "m_datecreated", op: "DP", value: "last_90_days", want: []string{`"last_90_days" is not a period code; DP takes one of T, Y, L7D, L30D, L90D, TW, LW, L2W, LWW, TM, LM, TY, LY`}},
		{name: "DP listed but for case", cfg: lists, param: "date_created", op: "DP", value: "l7d", want: []string{`"l7d" is not a period code (codes are case-sensitive: "L7D"); DP takes one of T, Y`}},

		{name: "status LiveAgent code", param: "status", op: "E", value: "C"},
		{name: "status any code", param: "status", op: "E", value: "waiting_for_customer"},
		{name: "status listed", cfg: lists, param: "status", op: "NI", value: "C,L"},
		{name: "status not listed", cfg: lists, param: "status", op: "E", value: "open", want: []string{`"open" is not an allowed status code; E takes one of C, L, R`}},
		{name: "status listed but for case", cfg: lists, param: "status", op: "E", value: "c", want: []string{`"c" is not an allowed status code (codes are case-sensitive: "C"); E takes one of C, L, R`}},
		{name: "status list item not listed", cfg: lists, param: "status", op: "IN", value: "C,X", want: []string{`item 2 of the IN list, "X", is not an allowed status code; IN takes a comma-separated list of C, L, R`}},
		{name: "status list hint uses listed codes", cfg: lists, param: "status", op: "E", value: "a,b", want: []string{`[["status","IN","C,L"]]`}},
		{name: "channel listed", cfg: lists, param: "channel_type", op: "IN", value: "C,E"},
		{name: "channel not listed", cfg: lists, param: "channel_type", op: "E", value: "F", want: []string{`"F" is not an allowed channel type code; E takes one of E, C`}},
		{name: "tags unaffected by lists", cfg: lists, param: "tags", op: "E", value: "fax"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := NewFilterValidator(tc.cfg)
			raw := `[["search","L","x"],[` + filterJSONQuote(tc.param) + `,` + filterJSONQuote(tc.op) + `,` + filterJSONQuote(tc.value) + `]]`
			got, err := v.Parse(raw)
			if tc.want == nil {
				require.NoError(t, err)
				assert.Equal(t, Filter{tc.param, tc.op, tc.value}, got[1])
				return
			}
			fe := requireFilterError(t, err, "value", 2, tc.param)
			for _, part := range tc.want {
				assert.Contains(t, fe.Message, part)
			}
		})
	}
}

func TestFilterParameters(t *testing.T) {
	v := NewFilterValidator(FilterConfig{})
	for _, tc := range []struct {
		param, reason string
		want          []string
	}{
		{"id", "not_filterable", []string{`filter 1 ("id"): id cannot be used as a filter`}},
		{"code", "not_filterable", []string{"code cannot be used as a filter"}},
		{"owner_email", "not_filterable", []string{"owner_email cannot be used as a filter", `[["search","L","<email>"]]`}},
		{"owner_name", "not_filterable", []string{"owner_name cannot be used as a filter", "search"}},
		{"last_activity_public", "not_filterable", []string{"last_activity_public cannot be used as a filter", "last_activity"}},
		{"public_access_url", "not_filterable", []string{"public_access_url cannot be used as a filter"}},
		{"field_", "unknown_parameter", []string{`needs the field's name after "field_"`}},
		{"priority", "unknown_parameter", []string{`filter 1 ("priority"): unknown parameter; the ticket list filters on status, tags`, "search and field_<name>"}},
		{"Status", "unknown_parameter", []string{`parameter names are lower case: "status"`}},
		{"", "unknown_parameter", []string{`filter 1 (""): unknown parameter`}},
	} {
		t.Run(tc.param, func(t *testing.T) {
			for _, raw := range []string{fmt.Sprintf(`[[%q,"E","x"]]`, tc.param), fmt.Sprintf(`{%q:"x"}`, tc.param)} {
				_, err := v.Parse(raw)
				fe := requireFilterError(t, err, tc.reason, 1, tc.param)
				for _, part := range tc.want {
					assert.Contains(t, fe.Message, part)
				}
			}
		})
	}

	_, err := v.Parse(`[["status","e","C"]]`)
	fe := requireFilterError(t, err, "operator", 1, "status")
	assert.Contains(t, fe.Message, `operator "e" is not allowed (operators are upper case); status takes E, IN, NI`)
}

func TestFilterLimits(t *testing.T) {
	many := func(n int, object bool) string {
		var b strings.Builder
		for i := range n {
			if object {
				fmt.Fprintf(&b, `,"field_%d":"x"`, i)
			} else {
				b.WriteString(`,["subject","E","x"]`)
			}
		}
		if object {
			return "{" + b.String()[1:] + "}"
		}
		return "[" + b.String()[1:] + "]"
	}
	for _, object := range []bool{false, true} {
		v := NewFilterValidator(FilterConfig{})
		got, err := v.Parse(many(50, object))
		require.NoError(t, err)
		assert.Len(t, got, 50)
		_, err = v.Parse(many(51, object))
		fe := requireFilterError(t, err, "too_many", 0, "")
		assert.Equal(t, "_filters has more than 50 filters; the limit is 50", fe.Message)

		v = NewFilterValidator(FilterConfig{MaxFilters: 2})
		_, err = v.Parse(many(2, object))
		require.NoError(t, err)
		_, err = v.Parse(many(3, object))
		requireFilterError(t, err, "too_many", 0, "")
	}

	v := NewFilterValidator(FilterConfig{})
	long := `[["search","L","` + strings.Repeat("a", 8192-19) + `"]]`
	require.Len(t, long, 8192)
	_, err := v.Parse(long)
	require.NoError(t, err)
	_, err = v.Parse(long + " ")
	fe := requireFilterError(t, err, "too_long", 0, "")
	assert.Equal(t, "_filters is 8193 bytes long; the limit is 8192 bytes", fe.Message)

	v = NewFilterValidator(FilterConfig{MaxLength: 10})
	_, err = v.Parse(`{"a":"bc"}`)
	requireFilterError(t, err, "unknown_parameter", 1, "a")
	_, err = v.Parse(`{"a":"bcd"}`)
	requireFilterError(t, err, "too_long", 0, "")
}

func TestFilterEmpty(t *testing.T) {
	v := NewFilterValidator(FilterConfig{})
	for _, raw := range []string{"[]", "{}", " [ ] ", "\t{\r\n}\n"} {
		got, err := v.Parse(raw)
		require.NoError(t, err, raw)
		assert.Nil(t, got, raw)
	}
}

func TestFilterSyntax(t *testing.T) {
	v := NewFilterValidator(FilterConfig{})
	for _, tc := range []struct {
		raw   string
		pos   int
		param string
		want  string
	}{
		{``, 0, "", "the value is empty"},
		{`   `, 0, "", "the value is empty"},
		{`"status"`, 0, "", "expected an object or a list, found a string"},
		{`null`, 0, "", "found null"},
		{`42`, 0, "", "found a number"},
		{`[] []`, 0, "", `found a list after the end`},
		{`{}}`, 0, "", `found "}" after the end`},
		{`[`, 1, "", "expected a triple"},
		{`[[`, 1, "", "the parameter must be a JSON string, found the end of the value"},
		{`["status","E","C"]`, 1, "", `each filter is a triple in its own array`},
		{`[[]]`, 1, "", "this one is empty"},
		{`[["status"]]`, 1, "status", "this one has 1 items"},
		{`[["status","E"]]`, 1, "status", "this one has 2 items"},
		{`[["status","E","C","x"]]`, 1, "status", "this one has more than 3 items"},
		{`[["status","E","C"],["subject","E"]]`, 2, "subject", "this one has 2 items"},
		{`[["status","E",1]]`, 1, "status", "the value must be a JSON string, found a number"},
		{`[["status","E",null]]`, 1, "status", "found null"},
		{`[["status","E",true]]`, 1, "status", "found a boolean"},
		{`[["status","E",["C"]]]`, 1, "status", "found a list"},
		{`[["status",{},"C"]]`, 1, "status", "the operator must be a JSON string, found an object"},
		{`[[1,"E","C"]]`, 1, "", "the parameter must be a JSON string, found a number"},
		{`[["status","E","C"],]`, 2, "", `expected a triple ["<parameter>","<operator>","<value>"], found "]"`},
		{`[["status","E","C"] ["a","b","c"]]`, 1, "status", `expected "," or "]" after the filter, found a list`},
		{`[["status" "E","C"]]`, 1, "status", `expected "," or "]" in the triple, found a string`},
		{`{"status":1}`, 1, "status", "the value must be a JSON string, found a number"},
		{`{"status":{"x":"y"}}`, 1, "status", "found an object"},
		{`{"status":null}`, 1, "status", "found null"},
		{`{"status" "C"}`, 1, "status", `expected ":" after the parameter name`},
		{`{"status":"C",}`, 2, "", "the parameter name must be a JSON string"},
		{`{status:"C"}`, 1, "", `the parameter name must be a JSON string, found "s"`},
		{`{'status':'open'}`, 1, "", `found "'"`},
		{`{"status":"C"`, 1, "status", `expected "," or "}" after the filter, found the end of the value`},
		{`[["status","E","C`, 1, "status", "a string is not closed"},
		{`[["status","E","C\`, 1, "status", "a string is not closed"},
		{"[[\"status\",\"E\",\"op\nen\"]]", 1, "status", "a control character in a string must be escaped"},
		{"[[\"status\",\"E\",\"op\xffen\"]]", 1, "status", "not valid UTF-8"},
		{"[[\"status\",\"E\",\"\xed\xa0\x80\"]]", 1, "status", "not valid UTF-8"},
		{`[["status","E","\x41"]]`, 1, "status", "invalid escape in a string"},
		{`[["status","E","\u12"]]`, 1, "status", "must be followed by 4 hex digits"},
		{`[["status","E","\u+123"]]`, 1, "status", "must be followed by 4 hex digits"},
		{`[["status","E","\ud800"]]`, 1, "status", `\ud800 is half of a surrogate pair`},
		{`[["status","E","\ud800\u0041"]]`, 1, "status", "half of a surrogate pair"},
		{`[["status","E","\udc00\ud800"]]`, 1, "status", "half of a surrogate pair"},
		{"\ufeff[]", 0, "", "expected an object or a list"},
		{"[\v]", 1, "", "expected a triple"},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			_, err := v.Parse(tc.raw)
			fe := requireFilterError(t, err, "syntax", tc.pos, tc.param)
			assert.Contains(t, fe.Message, tc.want)
			assert.Contains(t, fe.Message, `send an object like {"status":"C"} or a list of triples like [["status","IN","C,L"]]`)
			if tc.pos == 0 {
				assert.True(t, strings.HasPrefix(fe.Message, "_filters: "), fe.Message)
			}
		})
	}
}

func TestFilterStrings(t *testing.T) {
	v := NewFilterValidator(FilterConfig{})
	for raw, want := range map[string]string{
		`"printer"`:                         "printer",
		`"a\"b\\c\/d"`:                      `a"b\c/d`,
		`"\u0070rinter"`:                    "printer",
		`"caf\u00e9 caf\u00E9"`:             "café café",
		`"\ud83d\ude00 ok"`:                 "😀 ok",
		`"\uD83D\uDE00"`:                    "😀",
		`"Störung"`:                         "Störung",
		`"x\u2028y"`:                        "x\u2028y",
		`"   spaced   "`:                    "   spaced   ",
		`"\\u0041"`:                         `\u0041`,
		`"a,b\u002cc"`:                      "a,b,c",
		`"` + strings.Repeat("é", 40) + `"`: strings.Repeat("é", 40),
	} {
		t.Run(raw, func(t *testing.T) {
			got, err := v.Parse(`[["search","L",` + raw + `]]`)
			require.NoError(t, err)
			assert.Equal(t, want, got[0].Value)
			var decoded string
			require.NoError(t, json.Unmarshal([]byte(raw), &decoded))
			assert.Equal(t, decoded, got[0].Value, "encoding/json reads it the same")
		})
	}
}

func TestFilterErrorIsAFilterError(t *testing.T) {
	v := NewFilterValidator(FilterConfig{})
	_, err := v.Parse(`[["status","L","x"]]`)
	var fe *FilterError
	require.True(t, errors.As(err, &fe))
	assert.Equal(t, `filter 1 ("status"): operator "L" is not allowed; status takes E, IN, NI`, err.Error())
}

func TestFilterLongValueIsCutInMessages(t *testing.T) {
	v := NewFilterValidator(FilterConfig{})
	_, err := v.Parse(`[["tags","IE","` + strings.Repeat("é", 100) + `"]]`)
	fe := requireFilterError(t, err, "value", 1, "tags")
	assert.Contains(t, fe.Message, `not "`+strings.Repeat("é", 24)+`"…`)
	assert.Less(t, len(fe.Message), 120)
}

func TestFilterValidatorIsSafeForConcurrentUse(t *testing.T) {
	v := NewFilterValidator(FilterConfig{StatusCodes: []string{"C"}})
	done := make(chan struct{})
	for range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 200 {
				_, err := v.Parse(`{"status":"C","date_created":"x"}`)
				assert.Error(t, err)
				_, err = v.Parse(`[["status","IN","C"],["date_created","DP","T"]]`)
				assert.NoError(t, err)
			}
		}()
	}
	for range 8 {
		<-done
	}
}

func TestFilterConfigIsCopied(t *testing.T) {
	codes := []string{"C"}
	v := NewFilterValidator(FilterConfig{StatusCodes: codes})
	codes[0] = "L"
	_, err := v.Parse(`{"status":"C"}`)
	assert.NoError(t, err)
}
