package ticketfilter

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// FuzzParseFilters checks Parse against an oracle built from encoding/json
// and the spec's tables, sharing no code with the validator:
//
//   - Parse never panics, and every refusal is a *FilterError with a message;
//   - what Parse accepts is valid JSON that encoding/json reads as the same
//     filters, in the same order, each allowed by the spec, within the limits;
//   - what the oracle finds valid, Parse accepts (it is stricter only about
//     invalid UTF-8 and lone surrogates, which encoding/json replaces).
func FuzzParseFilters(f *testing.F) {
	f.Add(`[["status","IN","C,L"],["date_created","D>=","2024-01-01 00:00:00"],["subject","E","printer"]]`)
	f.Add(`{"status":"C","subject":"printer"}`)
	cfg := FilterConfig{MaxFilters: 8, MaxLength: 1024}
	v := NewFilterValidator(cfg)
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := v.Parse(raw)
		want, object, wantErr := filterOracleParse(raw, cfg)
		if err != nil {
			var fe *FilterError
			require.True(t, errors.As(err, &fe), "error %T is not a *FilterError", err)
			require.NotEmpty(t, fe.Message)
			require.Contains(t, []string{"syntax", "too_long", "too_many", "unknown_parameter", "not_filterable", "operator", "value"}, fe.Reason)
			if wantErr == nil && !strings.ContainsRune(fmt.Sprint(want), utf8.RuneError) {
				t.Fatalf("Parse refused %q, which the oracle accepts as %v: %v", raw, want, err)
			}
			return
		}
		require.True(t, json.Valid([]byte(raw)), "accepted invalid JSON %q", raw)
		require.LessOrEqual(t, len(raw), cfg.MaxLength)
		require.LessOrEqual(t, len(got), cfg.MaxFilters)
		require.NoError(t, wantErr, "Parse accepted %q as %v (object form: %v)", raw, got, object)
		if len(want) == 0 {
			require.Nil(t, got)
		} else {
			require.Equal(t, want, got)
		}
	})
}

// filterOracleParse reads raw with encoding/json's tokenizer and checks every
// filter against the spec's tables.
func filterOracleParse(raw string, cfg FilterConfig) ([]Filter, bool, error) {
	if len(raw) > cfg.MaxLength {
		return nil, false, errors.New("too long")
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	str := func() (string, error) {
		tok, err := dec.Token()
		if s, ok := tok.(string); ok && err == nil {
			return s, nil
		}
		return "", fmt.Errorf("want a string, got %v (%v)", tok, err)
	}
	delim := func(want json.Delim) error {
		if tok, err := dec.Token(); err != nil || tok != want {
			return fmt.Errorf("want %v, got %v (%v)", want, tok, err)
		}
		return nil
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, false, err
	}
	var filters []Filter
	object := tok == json.Delim('{')
	switch {
	case object:
		for dec.More() {
			var f Filter
			if f.Param, err = str(); err != nil {
				return nil, object, err
			}
			if f.Value, err = str(); err != nil {
				return nil, object, err
			}
			filters = append(filters, f)
		}
		err = delim('}')
	case tok == json.Delim('['):
		for dec.More() {
			var parts [3]string
			if err := delim('['); err != nil {
				return nil, object, err
			}
			for i := range parts {
				if parts[i], err = str(); err != nil {
					return nil, object, err
				}
			}
			if err := delim(']'); err != nil {
				return nil, object, err
			}
			filters = append(filters, Filter{parts[0], parts[1], parts[2]})
		}
		err = delim(']')
	default:
		err = errors.New("neither an object nor a list")
	}
	if err != nil {
		return nil, object, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, object, errors.New("trailing data")
	}
	if len(filters) > cfg.MaxFilters {
		return nil, object, errors.New("too many")
	}
	seen := map[string]bool{}
	for i := range filters {
		if object {
			if seen[filters[i].Param] {
				return nil, object, errors.New("duplicate key")
			}
			seen[filters[i].Param] = true
			filters[i].Op = filterOracleObjectOp[filters[i].Param]
			if strings.HasPrefix(filters[i].Param, "field_") {
				filters[i].Op = "E"
			}
		}
		if err := filterOracleCheck(filters[i]); err != nil {
			return nil, object, fmt.Errorf("filter %d: %w", i+1, err)
		}
	}
	return filters, object, nil
}

// filterOracleObjectOp is the equality-type operator of each parameter (design,
// "Ticket filters"); date parameters have none.
var filterOracleObjectOp = map[string]string{
	"status": "E", "tags": "E", "channel_type": "E", "subject": "E", "owner_contactid": "E",
	"departmentid": "E", "sla_levelid": "E",
	"agentid": "IN", "m_userid": "IN", "s_category": "IN", "f_category": "IN",
	"search": "L", "groups": "L",
}

var (
	filterOracleToken    = regexp.MustCompile(`^[^, \x00-\x1f\x7f]+$`)
	filterOracleDateTime = regexp.MustCompile(`^\d\d\d\d-\d\d-\d\d \d\d:\d\d:\d\d$`)
	filterOraclePeriod   = regexp.MustCompile(`^[A-Za-z0-9_]{1,32}$`)
	filterOracleControl  = regexp.MustCompile("[\x00-\x1f\x7f\u0080-\u009f]")
)

// filterOracleCheck checks one filter against the spec's tables (specFilterOps in
// filter_test.go, a hand copy of section 4.3) and the design's value rules.
func filterOracleCheck(f Filter) error {
	ops, ok := specFilterOps[f.Param]
	custom := strings.HasPrefix(f.Param, "field_") && len(f.Param) > len("field_")
	if custom {
		ops = specFilterOps["field_color"]
	} else if !ok {
		return fmt.Errorf("parameter %q", f.Param)
	}
	if f.Op == "" || !strings.Contains(" "+ops+" ", " "+f.Op+" ") {
		return fmt.Errorf("operator %q for %q", f.Op, f.Param)
	}
	if filterOracleControl.MatchString(f.Value) {
		return errors.New("control character")
	}
	text := custom || f.Param == "subject"
	token := func(s string) bool { return filterOracleToken.MatchString(s) && len(s) <= 64 }
	switch f.Op {
	case "IN", "NI", "CY":
		for _, item := range strings.Split(f.Value, ",") {
			if item == "" || !text && !token(item) {
				return fmt.Errorf("list item %q", item)
			}
		}
	case "IE", "INE":
		if f.Value != "" {
			return errors.New("not empty")
		}
	case "L", "NL":
		if f.Value == "" {
			return errors.New("empty text")
		}
	case "D>", "D<", "D>=", "D<=":
		if _, err := time.Parse("2006-01-02 15:04:05", f.Value); err != nil || !filterOracleDateTime.MatchString(f.Value) {
			return fmt.Errorf("date-time %q", f.Value)
		}
	case "DP":
		if !filterOraclePeriod.MatchString(f.Value) {
			return fmt.Errorf("period %q", f.Value)
		}
	case "E", "NE":
		switch {
		case custom:
		case f.Param == "subject":
			if f.Value == "" {
				return errors.New("empty subject")
			}
		case !token(f.Value):
			return fmt.Errorf("code %q", f.Value)
		}
	default:
		return fmt.Errorf("operator %q", f.Op)
	}
	return nil
}
