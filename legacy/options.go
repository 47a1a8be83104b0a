package legacy

import (
	"fmt"
	"net/url"
	"strings"
)

// Options are the gateway's options that describe the backend's paging
// dialect, as the operator wrote them, with the two options they must
// agree with. Check holds them to the dialect's rules; Dialect is the
// dialect they describe. Decided: an offset backend gets no page number,
// so a page parameter or a first page set together with an offset
// parameter is a contradiction, not an option ignored.
type Options struct {
	PageParam    string // backend_page_param
	PerPageParam string // backend_per_page_param
	OffsetParam  string // backend_offset_param
	FirstPage    *int   // backend_first_page; nil when not set
	Keyset       string // backend_keyset
	// Sort is backend_sort with its default: the parameters that put the
	// list in id order, which no paging parameter may share.
	Sort string
	// LexicalIDs is id_order lexical: cursor ids are words, which a
	// backend reads as field names unless the keyset template quotes them.
	LexicalIDs bool
}

// Dialect returns the dialect the options describe. Call it on options
// Check accepts.
func (o Options) Dialect() Dialect {
	return Dialect{
		Page:     o.PageParam,
		PerPage:  o.PerPageParam,
		FromZero: o.FirstPage != nil && *o.FirstPage == 0,
		Offset:   o.OffsetParam,
		Keyset:   o.Keyset,
	}
}

// OptionError is a mistake in the options and the option it is reported
// at, so that the Caddyfile parser can name that option's line; when
// that option was left at its default, the line of Other, the other
// option involved ("" when none is).
type OptionError struct {
	Option string
	Msg    string
	Other  string
}

func (e *OptionError) Error() string { return e.Option + ": " + e.Msg }

// reservedParams are client-facing names a backend paging parameter may
// not take: the gateway reads _cursor itself and forwards _filters, so a
// backend reading either as its window would be fed the client's value.
var reservedParams = []string{"_cursor", "_filters"}

// Check checks the options, alone and together with the sort: plain
// parameter names, a first page of 0 or 1, no page number beside an
// offset, a keyset template the backend reads as a value, and each name
// the gateway writes distinct from the others, from the clients' and
// from the sort's. Its errors are *OptionError.
func (o Options) Check() error {
	named := []struct{ option, value string }{
		{"backend_page_param", o.PageParam},
		{"backend_per_page_param", o.PerPageParam},
		{"backend_offset_param", o.OffsetParam},
	}
	for _, n := range named {
		if n.value != "" {
			if err := CheckParamName(n.value); err != nil {
				return &OptionError{n.option, err.Error(), ""}
			}
		}
	}
	if fp := o.FirstPage; fp != nil && *fp != 0 && *fp != 1 {
		return &OptionError{"backend_first_page", fmt.Sprintf("%d is not 0 or 1; it is the number the backend gives its first page", *fp), ""}
	}
	if o.OffsetParam != "" {
		if o.PageParam != "" {
			return &OptionError{"backend_page_param", fmt.Sprintf("backend_offset_param %q asks the backend by offset, with no page number; remove one of the two", o.OffsetParam), ""}
		}
		if o.FirstPage != nil {
			return &OptionError{"backend_first_page", fmt.Sprintf("backend_offset_param %q asks the backend by offset, with no page number; remove backend_first_page", o.OffsetParam), ""}
		}
	}

	// Each name the gateway writes, under the option that sets it.
	d := o.Dialect()
	type param struct{ option, value string }
	written := []param{{"backend_page_param", d.PageParam()}, {"backend_per_page_param", d.PerPageParam()}}
	if d.Offsets() {
		written[0] = param{"backend_offset_param", d.Offset}
	}
	if o.Keyset != "" {
		t, err := ParseKeysetTemplate(o.Keyset, CheckParamName)
		if err != nil {
			return &OptionError{"backend_keyset", err.Error(), ""}
		}
		if err := checkKeysetQuoting(o.Keyset, t, o.LexicalIDs); err != nil {
			return &OptionError{"backend_keyset", err.Error(), "id_order"}
		}
		for _, name := range t.Params {
			written = append(written, param{"backend_keyset", name})
		}
	}
	sort, _ := url.ParseQuery(o.Sort)
	for i, a := range written {
		for _, b := range written[i+1:] {
			if SameParam(a.value, b.value) {
				return &OptionError{b.option, fmt.Sprintf("%q is the same parameter as %s %q; the backend needs two", b.value, a.option, a.value), a.option}
			}
		}
		for _, r := range reservedParams {
			if SameParam(a.value, r) {
				return &OptionError{a.option, fmt.Sprintf("%q would be read as %s, which clients send; name the backend's own parameter", a.value, r), ""}
			}
		}
		for name := range sort {
			if SameParam(a.value, name) {
				return &OptionError{a.option, fmt.Sprintf("%q is also set by backend_sort (%q); paging and sorting need parameters of their own", a.value, name), "backend_sort"}
			}
		}
	}
	return nil
}

// CheckParamName accepts the parameter names a query carries without
// escaping: letters, digits and _ - . ~, optionally followed by bracketed
// keys such as page[size] (JSON:API's paging).
func CheckParamName(name string) error {
	root, keys, _ := strings.Cut(name, "[")
	if root == "" || !plainName(root) {
		return fmt.Errorf("%q is not a parameter name; use letters, digits and _ - . ~, optionally followed by bracketed keys such as page[size]", name)
	}
	if keys != "" {
		for key := range strings.SplitSeq(strings.TrimSuffix(keys, "]"), "][") {
			if !plainName(key) || !strings.HasSuffix(keys, "]") {
				return fmt.Errorf("%q: the bracketed keys must each be letters, digits and _ - . ~, as in page[size]", name)
			}
		}
	}
	return nil
}

func plainName(s string) bool {
	return s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.~") == ""
}

// SameParam reports whether a backend may read the parameter names a and
// b as one: equal under ParamReading regardless of case, unless both
// nest different keys under that name (page[number] and page[size] are
// two parameters; page and page[size] are not).
func SameParam(a, b string) bool {
	if !strings.EqualFold(ParamReading(a), ParamReading(b)) {
		return false
	}
	ia, ib := strings.IndexByte(a, '['), strings.IndexByte(b, '[')
	return ia < 0 || ib < 0 || strings.EqualFold(a[ia:], b[ib:])
}

// nameSeparators are read as '_' in a parameter name, as PHP reads them.
var nameSeparators = strings.NewReplacer(" ", "_", ".", "_")

// ParamReading returns how a common backend may read the parameter name
// key: after further rounds of percent-decoding, without surrounding
// spaces, with ' ' and '.' read as '_' and anything from '[' or NUL on
// dropped (as PHP reads names). Callers compare it regardless of case, as
// ASP.NET reads names.
func ParamReading(key string) string {
	k := key
	for range 3 {
		if !strings.Contains(k, "%") {
			break
		}
		d, err := url.QueryUnescape(k)
		if err != nil {
			break
		}
		k = d
	}
	if i := strings.IndexAny(k, "[\x00"); i >= 0 {
		k = k[:i]
	}
	return nameSeparators.Replace(strings.TrimSpace(k))
}

// checkKeysetQuoting refuses, on a lexical list, a backend_keyset
// template that puts {id} unquoted inside a filter expression, as
// PocketBase's filter=(id>{id}) does. Lexical cursor ids are words: the
// backend would read passwordHash or created as a field name, and the
// pages it answers would tell a client about fields it cannot see. The
// id is a value there only when quoted (filter=(id>'{id}'), the quote of
// either kind on both sides), or when it is the whole value of its
// parameter (id_gt={id}) or follows only an operator (PostgREST's
// id=gt.{id}). On a numeric list cursor ids are whole numbers, which no
// backend reads as a name.
func checkKeysetQuoting(tmpl string, t KeysetTemplate, lexical bool) error {
	if !lexical || t.Suffix == "" && (t.Prefix == "" || operatorPrefix(t.Prefix)) {
		return nil
	}
	if n := len(t.Prefix); n > 0 {
		if q := t.Prefix[n-1:]; (q == "'" || q == `"`) && strings.HasPrefix(t.Suffix, q) {
			return nil
		}
	}
	return fmt.Errorf("%q puts {id} unquoted inside a filter expression; with id_order lexical the backend would read a cursor id such as passwordHash as a field name: quote it, as in %q",
		tmpl, strings.Replace(tmpl, KeysetPlaceholder, "'"+KeysetPlaceholder+"'", 1))
}

// operatorPrefix reports whether a keyset value's text before {id} is an
// operator of PostgREST's form: words each followed by a dot (gt., not.lte.).
func operatorPrefix(s string) bool {
	for word := range strings.SplitSeq(strings.TrimSuffix(s, "."), ".") {
		if word == "" || strings.Trim(word, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
			return false
		}
	}
	return strings.HasSuffix(s, ".")
}
