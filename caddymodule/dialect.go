package caddymodule

import (
	"cmp"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/helpdesk-gateway/gateway/legacy"
)

// The backend's paging dialect: the names and numbering the gateway uses
// in its own calls to the backend (backend_page_param,
// backend_per_page_param, backend_first_page, backend_offset_param).
// Clients always page with the help-desk API's names; the dialect's names
// are the gateway's alone, so a client may not send them in any spelling.

// backendDialect returns the dialect the options describe. Call it on a
// valid config.
func (g *Gateway) backendDialect() legacy.Dialect {
	return legacy.Dialect{
		Page:     g.BackendPageParam,
		PerPage:  g.BackendPerPageParam,
		FromZero: g.BackendFirstPage != nil && *g.BackendFirstPage == 0,
		Offset:   g.BackendOffsetParam,
		Keyset:   g.BackendKeyset,
	}
}

// optionError is a configuration mistake and the option it is reported
// at, so that the Caddyfile parser can name that option's line; when that
// option was left at its default, the line of the other option involved.
type optionError struct {
	option string
	msg    string
	other  string
}

func (e *optionError) Error() string { return e.option + ": " + e.msg }

// reservedParams are client-facing names a backend paging parameter may
// not take: the gateway reads _cursor itself and forwards _filters, so a
// backend reading either as its window would be fed the client's value.
var reservedParams = []string{"_cursor", "_filters"}

// checkDialect checks the dialect options, alone and together with
// backend_sort. Decided: an offset backend gets no page number, so
// backend_page_param and backend_first_page set together with
// backend_offset_param are a contradiction, not an option ignored.
func (g *Gateway) checkDialect() error {
	named := []struct{ option, value string }{
		{"backend_page_param", g.BackendPageParam},
		{"backend_per_page_param", g.BackendPerPageParam},
		{"backend_offset_param", g.BackendOffsetParam},
	}
	for _, n := range named {
		if n.value != "" {
			if err := checkParamName(n.value); err != nil {
				return &optionError{n.option, err.Error(), ""}
			}
		}
	}
	if fp := g.BackendFirstPage; fp != nil && *fp != 0 && *fp != 1 {
		return &optionError{"backend_first_page", fmt.Sprintf("%d is not 0 or 1; it is the number the backend gives its first page", *fp), ""}
	}
	if g.BackendOffsetParam != "" {
		if g.BackendPageParam != "" {
			return &optionError{"backend_page_param", fmt.Sprintf("backend_offset_param %q asks the backend by offset, with no page number; remove one of the two", g.BackendOffsetParam), ""}
		}
		if g.BackendFirstPage != nil {
			return &optionError{"backend_first_page", fmt.Sprintf("backend_offset_param %q asks the backend by offset, with no page number; remove backend_first_page", g.BackendOffsetParam), ""}
		}
	}

	// Each name the gateway writes, under the option that sets it.
	d := g.backendDialect()
	type param struct{ option, value string }
	written := []param{{"backend_page_param", d.PageParam()}, {"backend_per_page_param", d.PerPageParam()}}
	if d.Offsets() {
		written[0] = param{"backend_offset_param", d.Offset}
	}
	if g.BackendKeyset != "" {
		t, err := legacy.ParseKeysetTemplate(g.BackendKeyset, checkParamName)
		if err != nil {
			return &optionError{"backend_keyset", err.Error(), ""}
		}
		if err := checkKeysetQuoting(g.BackendKeyset, t, g.IDOrder == "lexical"); err != nil {
			return &optionError{"backend_keyset", err.Error(), "id_order"}
		}
		for _, name := range t.Params {
			written = append(written, param{"backend_keyset", name})
		}
	}
	sort, _ := url.ParseQuery(cmp.Or(g.BackendSort, defaultBackendSort))
	for i, a := range written {
		for _, b := range written[i+1:] {
			if sameParam(a.value, b.value) {
				return &optionError{b.option, fmt.Sprintf("%q is the same parameter as %s %q; the backend needs two", b.value, a.option, a.value), a.option}
			}
		}
		for _, r := range reservedParams {
			if sameParam(a.value, r) {
				return &optionError{a.option, fmt.Sprintf("%q would be read as %s, which clients send; name the backend's own parameter", a.value, r), ""}
			}
		}
		for name := range sort {
			if sameParam(a.value, name) {
				return &optionError{a.option, fmt.Sprintf("%q is also set by backend_sort (%q); paging and sorting need parameters of their own", a.value, name), "backend_sort"}
			}
		}
	}
	return nil
}

// checkParamName accepts the parameter names a query carries without
// escaping: letters, digits and _ - . ~, optionally followed by bracketed
// keys such as page[size] (JSON:API's paging).
func checkParamName(name string) error {
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

// sameParam reports whether a backend may read the parameter names a and
// b as one: equal under backendReading regardless of case, unless both
// nest different keys under that name (page[number] and page[size] are
// two parameters; page and page[size] are not).
func sameParam(a, b string) bool {
	if !strings.EqualFold(backendReading(a), backendReading(b)) {
		return false
	}
	ia, ib := strings.IndexByte(a, '['), strings.IndexByte(b, '[')
	return ia < 0 || ib < 0 || strings.EqualFold(a[ia:], b[ib:])
}

// backendOnlyParams are the names the dialect writes that clients do not
// use themselves: with LiveAgent's names none, since a client's _page and
// _perPage are the gateway's to read; with page/per_page both.
func backendOnlyParams(d legacy.Dialect) []string {
	var out []string
	for _, name := range d.Params() {
		if !slices.Contains(pagingParams, name) {
			out = append(out, name)
		}
	}
	return out
}
