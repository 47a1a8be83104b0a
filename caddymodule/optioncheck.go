package caddymodule

// The checks Validate makes, each naming the option at fault (caddy
// validate and caddy adapt report them with the Caddyfile line): those
// of each option alone, by its row of the table (options.go), then
// those of options together.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/helpdesk-gateway/gateway/caller"
	"github.com/helpdesk-gateway/gateway/pageheader"
)

// Validate checks the configuration; each error names the option at fault.
func (g *Gateway) Validate() error {
	for i := range options {
		if err := options[i].validate(g); err != nil {
			return err
		}
	}
	seen := map[string]string{}
	for _, list := range []struct {
		option string
		paths  []string
	}{{"cursor_endpoints", g.CursorEndpoints}, {"filter_endpoints", g.FilterEndpoints}} {
		for _, p := range list.paths {
			if !strings.HasPrefix(p, "/") || len(p) < 2 {
				return fmt.Errorf("%s: %q must be a path starting with /", list.option, p)
			}
			if other, dup := seen[p]; dup {
				return fmt.Errorf("%s: %q is already listed in %s", list.option, p, other)
			}
			seen[p] = list.option
		}
	}
	if err := checkSpellings(g.BasePath, g.CursorEndpoints); err != nil {
		return fmt.Errorf("cursor_endpoints: %v", err)
	}
	if err := checkSpellings(g.BasePath, slices.Concat(g.CursorEndpoints, g.FilterEndpoints)); err != nil {
		return fmt.Errorf("filter_endpoints: %v", err)
	}
	for p, option := range seen {
		if g.BasePath+p == g.OpenAPIPath {
			return fmt.Errorf("openapi_path %q: is already an endpoint of %s", g.OpenAPIPath, option)
		}
	}
	if err := checkEnvelopeMembers(g.DropEnvelopeMembers, g.RecordsPath); err != nil {
		return err
	}
	if g.DefaultPerPage > g.MaxPerPage {
		return fmt.Errorf("default_per_page: %d is above max_per_page (%d)", g.DefaultPerPage, g.MaxPerPage)
	}
	if err := g.checkDialect(); err != nil {
		return err
	}
	return g.checkStoreOptions()
}

// validate checks the option's value in g by its kind, its range and
// its row's own check.
func (o *option) validate(g *Gateway) error {
	f := o.field(g)
	switch {
	case o.min != 0 || o.max != 0:
		if v := f.Int(); v < o.min || v > o.max {
			return fmt.Errorf("%s: %d is out of range [%d, %d]", o.name, v, o.min, o.max)
		}
	case o.oneOf != nil && f.Kind() == reflect.String: // backend_first_page is checkDialect's
		if v := f.String(); v != "" && !slices.Contains(o.oneOf, v) {
			return fmt.Errorf("%s: %q is not %s", o.name, v, strings.Join(o.oneOf, " or "))
		}
	}
	switch list, _ := f.Interface().([]string); o.kind {
	case codes:
		for _, code := range list {
			if code == "" || strings.ContainsFunc(code, func(r rune) bool { return r == ',' || r <= ' ' || r == 0x7f }) {
				return fmt.Errorf("%s: %q is not a code such as C; a filter could never match it (IN splits its value at commas)", o.name, code)
			}
		}
	case headers:
		for _, name := range list {
			if !pageheader.ValidName(name) {
				return fmt.Errorf("%s: %q is not a header name", o.name, name)
			}
		}
	case placeholders:
		if err := caller.CheckKeys(list); err != nil {
			return err
		}
	}
	if o.check != nil {
		return o.check(g)
	}
	return nil
}

// maxReadaheadTTL bounds readahead_ttl: a window serves pages as old as
// the TTL, and read-ahead needs a few seconds; an hour is a mistake of
// unit, not a choice.
const maxReadaheadTTL = time.Hour

// checkReadaheadTTL refuses a negative readahead_ttl, and an absurd one.
func checkReadaheadTTL(ttl time.Duration) error {
	switch {
	case ttl < 0:
		return fmt.Errorf("readahead_ttl: %v is negative; 0 turns read-ahead off", ttl)
	case ttl > maxReadaheadTTL:
		return fmt.Errorf("readahead_ttl: %v is above %v; a window serves pages as old as this, and a few seconds (the default is %v) is what read-ahead needs", ttl, maxReadaheadTTL, defaultReadaheadTTL)
	}
	return nil
}

// checkEnvelopeMembers refuses a drop_envelope_members name that is
// empty or not UTF-8 (no JSON member is named so), and the records
// path's own first member, which holds the records.
func checkEnvelopeMembers(names []string, recordsPath string) error {
	first, _, _ := strings.Cut(recordsPath, ".")
	for _, name := range names {
		switch {
		case name == "" || !utf8.ValidString(name):
			return fmt.Errorf("drop_envelope_members: %q is not a member name", name)
		case name == first:
			return fmt.Errorf("drop_envelope_members: %q holds the records (records_path %q); it is never dropped, so leave it out", name, recordsPath)
		}
	}
	return nil
}

// UnmarshalJSON decodes the handler's JSON as Caddy would without it (an
// unknown member is refused; Caddy takes out "handler" first), and names
// the option of a value that does not decode: a duration's own error
// ("time: invalid duration") names none.
func (g *Gateway) UnmarshalJSON(b []byte) error {
	type plain Gateway // without this method
	strict := func(b []byte, v any) error {
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		return dec.Decode(v)
	}
	err := strict(b, (*plain)(g))
	if err == nil {
		return nil
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(b, &members) != nil {
		return err
	}
	names := slices.Sorted(maps.Keys(members))
	for _, name := range names {
		one, _ := json.Marshal(map[string]json.RawMessage{name: members[name]})
		if e := strict(one, new(plain)); e != nil {
			if strings.Contains(e.Error(), name) {
				return e
			}
			return fmt.Errorf("%s: %v", name, e)
		}
	}
	return err
}
