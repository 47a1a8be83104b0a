package legacy

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// Keyset templates. A backend that filters by id is asked for the records
// above a cursor with a query of its own form, the Dialect's Keyset
// template, in which {id} stands for the cursor id: "id_gt={id}",
// json-server's "id_gte={id}", PostgREST's "id=gt.{id}", PocketBase's
// "filter=(id>'{id}')". The template is written into the backend query as
// the operator wrote it (as backend_sort is); the id is query-escaped.
//
// The cursor id comes from the client, so it is hostile input written
// into a backend's query language: a quote would close PocketBase's
// string, a ')' its expression, a ',' or '(' a PostgREST list, a '%' or
// '*' a LIKE. Escaping for the query string does not help there, since
// the backend decodes the query before it reads the condition. So only
// ids of a safe set of bytes are ever substituted (KeysetCheck): ASCII
// letters, digits and - _ . ~ :. The set holds the ids of the common
// backends (whole numbers, PocketBase's 15 letters and digits, UUIDs,
// Mongo's hex ObjectIds, slugs, "TK-00012", "urn:x:1") and no byte that
// any query language above reads as syntax in a quoted or bare value. Any
// other id is read by offset, as without the template.

// KeysetPlaceholder stands for the cursor id in a keyset template.
const KeysetPlaceholder = "{id}"

// keysetSafe reports whether b may be written into a keyset query.
func keysetSafe(b byte) bool {
	switch {
	case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		return true
	}
	return b == '-' || b == '_' || b == '.' || b == '~' || b == ':'
}

// KeysetSafeSet describes the bytes KeysetCheck accepts, for messages.
const KeysetSafeSet = "ASCII letters, digits and - _ . ~ :"

// Keysets reports whether the dialect has a keyset template.
func (d Dialect) Keysets() bool { return d.Keyset != "" }

// KeysetCheck reports whether id can be written into the keyset
// template safely: not empty, and every byte in KeysetSafeSet. A quote
// or backslash is never safe, whether or not the template quotes the id.
// With no template, no id can.
func (d Dialect) KeysetCheck(id string) error {
	if d.Keyset == "" {
		return fmt.Errorf("the backend has no keyset form (backend_keyset)")
	}
	if id == "" {
		return fmt.Errorf("empty id")
	}
	for i := 0; i < len(id); i++ {
		if !keysetSafe(id[i]) {
			why := ""
			if c := id[i]; c == '\'' || c == '"' || c == '\\' || c == '`' {
				why = " (it would end or escape a quoted value)"
			}
			return fmt.Errorf("id %.40q holds %q at byte %d%s: only ids of %s are asked by backend_keyset", id, id[i:i+1], i, why, KeysetSafeSet)
		}
	}
	return nil
}

// KeysetInclusive reports whether the keyset template's condition looks
// inclusive ("at or above the id": json-server's id_gte={id}, a >= in a
// filter, PostgREST's id=gte.{id}), from the template's text around {id}:
// a guess that lets a cold cursor on such a backend cost one call, since
// its answers send the cursor's own record too. The engine corrects a
// wrong guess from the answers, at a record or a call.
func (d Dialect) KeysetInclusive() bool {
	before, after, _ := strings.Cut(d.Keyset, KeysetPlaceholder)
	text := before + after
	if s, err := url.QueryUnescape(text); err == nil {
		text = s
	}
	text = strings.ToLower(text)
	return strings.Contains(text, ">=") || strings.Contains(text, "gte")
}

// KeysetParams returns the decoded names of the parameters the keyset
// template sets, in its order.
func (d Dialect) KeysetParams() []string {
	if d.Keyset == "" {
		return nil
	}
	var names []string
	for pair := range strings.SplitSeq(d.Keyset, "&") {
		if pair == "" {
			continue
		}
		raw, _, _ := strings.Cut(pair, "=")
		name, err := url.QueryUnescape(raw)
		if err != nil {
			name = raw
		}
		names = append(names, name)
	}
	return names
}

// KeysetTemplate is a keyset template taken apart: the parameter that
// carries the id, and the decoded text around it in that parameter's
// value, as a backend reads it.
type KeysetTemplate struct {
	Param          string // the parameter whose value holds {id}
	Prefix, Suffix string // its value before and after {id}, decoded
	Params         []string
}

// ParseKeysetTemplate checks a keyset template: a query of printable
// ASCII (no space, '#' or ';'), valid percent-encoding, plain parameter
// names as checkName accepts them, each once, and {id} exactly once, in a value and
// nowhere else. Its errors say what to change; callers name the option.
func ParseKeysetTemplate(tmpl string, checkName func(string) error) (KeysetTemplate, error) {
	var t KeysetTemplate
	if tmpl == "" {
		return t, fmt.Errorf("empty; write the backend's query for records above an id, e.g. id_gt={id}")
	}
	if n := strings.Count(tmpl, KeysetPlaceholder); n != 1 {
		return t, fmt.Errorf("%q holds {id} %d times; write it once, where the cursor id goes, e.g. id_gt={id}", tmpl, n)
	}
	for i := 0; i < len(tmpl); i++ {
		if c := tmpl[i]; c <= ' ' || c >= 0x7f || c == '#' || c == ';' {
			return t, fmt.Errorf("%q holds %q, which a query cannot carry as written; percent-encode it", tmpl, c)
		}
	}
	if _, err := url.ParseQuery(tmpl); err != nil {
		return t, fmt.Errorf("%q is not a query: %v", tmpl, err)
	}
	for pair := range strings.SplitSeq(tmpl, "&") {
		if pair == "" {
			continue
		}
		rawName, rawValue, hasValue := strings.Cut(pair, "=")
		name, _ := url.QueryUnescape(rawName)
		if strings.Contains(rawName, KeysetPlaceholder) || strings.Contains(rawName, "{") {
			return t, fmt.Errorf("%q: {id} must be in a value, as in id_gt={id}, not in the name %q", tmpl, rawName)
		}
		if err := checkName(name); err != nil {
			return t, err
		}
		if slices.Contains(t.Params, name) {
			return t, fmt.Errorf("%q sets %q twice; a backend may read either value", tmpl, name)
		}
		if !hasValue {
			return t, fmt.Errorf("%q: parameter %q has no value; write name=value", tmpl, name)
		}
		t.Params = append(t.Params, name)
		before, after, found := strings.Cut(rawValue, KeysetPlaceholder)
		if !found {
			continue
		}
		t.Param = name
		t.Prefix, _ = url.QueryUnescape(before)
		t.Suffix, _ = url.QueryUnescape(after)
	}
	return t, nil
}

// appendKeyset appends the template with {id} replaced by id,
// query-escaped. Callers checked id with KeysetCheck.
func (d Dialect) appendKeyset(dst []byte, id string) []byte {
	before, after, _ := strings.Cut(d.Keyset, KeysetPlaceholder)
	dst = append(dst, before...)
	dst = append(dst, url.QueryEscape(id)...)
	return append(dst, after...)
}
