package caddymodule

// The gateway's options: their defaults, their ranges, and the checks
// Validate makes, each naming the option at fault (caddy validate and
// caddy adapt report them with the Caddyfile line).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/caddyserver/caddy/v2"

	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/helpdesk-gateway/gateway/ticketfilter"
	"github.com/helpdesk-gateway/gateway/translate"
)

// Defaults of the gateway's options.
const (
	defaultBackendSort       = "_sortField=id&_sortDir=ASC"
	defaultPerPage           = 10
	defaultMaxPerPage        = 1000
	defaultBackendMaxPerPage = 1000
	defaultIndexSize         = 100000
	defaultMaxBodySize       = 16 << 20
	defaultMaxQueryLength    = 8 << 10
	defaultReadaheadTTL      = 2 * time.Second
	defaultReadaheadMemory   = 64 << 20
)

// optionRange bounds a numeric option.
type optionRange struct{ min, max int64 }

// optionRanges are the bounds of the numeric options. Validate holds a
// config to them; the Caddyfile parser holds each value to them as it
// reads it, so that a Caddyfile error names the line. A zero in JSON means
// the default; default_per_page must also be at most max_per_page.
var optionRanges = map[string]optionRange{
	"default_per_page":     {1, 1 << 20},
	"max_per_page":         {1, 1 << 20},
	"backend_max_per_page": {translate.MinBackendPageSize, 1 << 20},
	"index_size":           {-1, 1 << 26},
	"max_body_size":        {1 << 10, 1 << 40},
	"max_subrequests":      {1, 1 << 16},
	"max_query_length":     {256, 1 << 20},
	"max_filters":          {0, 1 << 16},
	"max_filters_length":   {0, 1 << 20},
	"readahead_memory":     {1 << 10, 1 << 40},
}

// checkRange reports a value of option outside its range.
func checkRange(option string, value int64) error {
	r := optionRanges[option]
	if value < r.min || value > r.max {
		return fmt.Errorf("%s: %d is out of range [%d, %d]", option, value, r.min, r.max)
	}
	return nil
}

// defaultDropBackendHeaders are the backend headers that describe the
// backend's page rather than the gateway's: offset-paging metadata as
// common backends send it (RFC 8288 links, GitLab's X-Page family, Yii's
// X-Pagination-*, Content-Range). Counts of the whole list (X-Total-Count,
// X-Total, X-Pagination-Total-Count) stay: they are true of any page.
var defaultDropBackendHeaders = []string{
	"Link",
	"X-Page", "X-Per-Page", "X-Next-Page", "X-Prev-Page", "X-Total-Pages",
	"X-Pagination-Current-Page", "X-Pagination-Per-Page", "X-Pagination-Page-Count",
	"Content-Range",
}

// defaultDropEnvelopeMembers are the envelope members that describe the
// backend's window rather than the list, in the spellings common backends
// use: page numbers and sizes, offsets and limits, page counts, and links
// to other windows (Django's next and previous, Laravel's current_page
// and next_page_url, JSON:API's links, HAL's _links). They are not
// exhaustive: a backend with others needs drop_envelope_members. The
// configured backend paging names (backend_page_param and the like) join
// them by default. Counts of the whole list (total, totalItems, count)
// stay: they are true of any page.
var defaultDropEnvelopeMembers = []string{
	"page", "per_page", "perPage", "page_size", "pageSize",
	"current_page", "currentPage", "last_page", "lastPage",
	"offset", "limit", "total_pages", "totalPages", "page_count", "pageCount",
	"next", "next_page", "nextPage", "prev", "previous", "prev_page", "prevPage",
	"next_page_url", "prev_page_url", "first_page_url", "last_page_url", "links", "_links",
}

// keysetCountMembers are the counts of the whole list that a keyset
// answer gives of the records above its id only (PocketBase's totalItems
// counts what its filter matched): a page whose envelope comes from a
// keyset call drops them too, with drop_envelope_members' names or the
// defaults, rather than show a client a count that shrinks as it walks.
// Pages from page or offset calls keep them.
var keysetCountMembers = []string{"total", "totalItems", "total_items", "totalCount", "total_count", "count"}

// defaultCursorEndpoints are the spec's four cursor-paged lists.
var defaultCursorEndpoints = []string{"/calls", "/grid/reports/time", "/phone_numbers", "/tickets/history"}

// setDefaults fills in the options left out. The command that prints the
// OpenAPI document applies them too, so the document shows what the
// gateway runs with.
func (g *Gateway) setDefaults() {
	if g.CursorEndpoints == nil {
		g.CursorEndpoints = defaultCursorEndpoints
	}
	if g.FilterEndpoints == nil {
		g.FilterEndpoints = []string{"/tickets"}
	}
	setDefault(&g.IDField, "id")
	setDefault(&g.IDOrder, "numeric")
	setDefault(&g.BackendSort, defaultBackendSort)
	setDefault(&g.DefaultPerPage, defaultPerPage)
	setDefault(&g.MaxPerPage, defaultMaxPerPage)
	setDefault(&g.BackendMaxPerPage, defaultBackendMaxPerPage)
	setDefault(&g.IndexSize, defaultIndexSize)
	setDefault(&g.MaxBodySize, defaultMaxBodySize)
	setDefault(&g.MaxSubrequests, translate.DefaultMaxCalls)
	setDefault(&g.MaxQueryLength, defaultMaxQueryLength)
	if g.DropBackendHeaders == nil {
		g.DropBackendHeaders = defaultDropBackendHeaders
	}
	if g.ReadaheadTTL == nil {
		ttl := caddy.Duration(defaultReadaheadTTL)
		g.ReadaheadTTL = &ttl
	}
	setDefault(&g.ReadaheadMemory, defaultReadaheadMemory)
	if g.DropEnvelopeMembers == nil {
		// The member that holds the records is never one of them.
		holder, _, _ := strings.Cut(g.RecordsPath, ".")
		g.DropEnvelopeMembers = []string{}
		for _, name := range slices.Concat(defaultDropEnvelopeMembers, g.backendDialect().Params()) {
			if name != holder && !slices.Contains(g.DropEnvelopeMembers, name) {
				g.DropEnvelopeMembers = append(g.DropEnvelopeMembers, name)
			}
		}
	}
}

// filterConfig is the configuration of the gateway's filter validator.
func (g *Gateway) filterConfig() ticketfilter.FilterConfig {
	return ticketfilter.FilterConfig{
		MaxFilters:   g.MaxFilters,
		MaxLength:    g.MaxFiltersLength,
		StatusCodes:  g.StatusCodes,
		ChannelTypes: g.ChannelTypes,
		PeriodCodes:  g.PeriodCodes,
	}
}

func setDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

// Validate checks the configuration; each error names the option at fault.
func (g *Gateway) Validate() error {
	if g.BasePath != "" && (!strings.HasPrefix(g.BasePath, "/") || strings.HasSuffix(g.BasePath, "/")) {
		return fmt.Errorf("base_path %q: must start with / and not end with /", g.BasePath)
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
	if g.OpenAPIPath != "" && !strings.HasPrefix(g.OpenAPIPath, "/") {
		return fmt.Errorf("openapi_path %q: must be a path starting with /", g.OpenAPIPath)
	}
	for _, name := range g.DropBackendHeaders {
		if !validHeaderName(name) {
			return fmt.Errorf("drop_backend_headers: %q is not a header name", name)
		}
	}
	if err := checkEnvelopeMembers(g.DropEnvelopeMembers, g.RecordsPath); err != nil {
		return err
	}
	if _, err := cursor.ParseOrder(g.IDOrder); err != nil {
		return fmt.Errorf("id_order: %v", err)
	}
	if g.IDField == "" {
		return fmt.Errorf("id_field: must not be empty")
	}
	if _, err := url.ParseQuery(g.BackendSort); err != nil {
		return fmt.Errorf("backend_sort %q: not a query string: %v", g.BackendSort, err)
	}
	for _, n := range []struct {
		option string
		value  int64
	}{
		{"default_per_page", int64(g.DefaultPerPage)},
		{"max_per_page", int64(g.MaxPerPage)},
		{"backend_max_per_page", int64(g.BackendMaxPerPage)},
		{"index_size", int64(g.IndexSize)},
		{"max_body_size", g.MaxBodySize},
		{"max_subrequests", int64(g.MaxSubrequests)},
		{"max_query_length", int64(g.MaxQueryLength)},
		{"max_filters", int64(g.MaxFilters)},
		{"max_filters_length", int64(g.MaxFiltersLength)},
		{"readahead_memory", g.ReadaheadMemory},
	} {
		if err := checkRange(n.option, n.value); err != nil {
			return err
		}
	}
	if g.ReadaheadTTL != nil {
		if err := checkReadaheadTTL(time.Duration(*g.ReadaheadTTL)); err != nil {
			return err
		}
	}
	if g.DefaultPerPage > g.MaxPerPage {
		return fmt.Errorf("default_per_page: %d is above max_per_page (%d)", g.DefaultPerPage, g.MaxPerPage)
	}
	if err := g.checkDialect(); err != nil {
		return err
	}
	if err := g.checkStoreOptions(); err != nil {
		return err
	}
	for _, list := range []struct {
		option string
		codes  []string
	}{{"status_codes", g.StatusCodes}, {"channel_types", g.ChannelTypes}, {"period_codes", g.PeriodCodes}} {
		for _, code := range list.codes {
			if code == "" || strings.ContainsFunc(code, func(r rune) bool { return r == ',' || r <= ' ' || r == 0x7f }) {
				return fmt.Errorf("%s: %q is not a code such as C; a filter could never match it (IN splits its value at commas)", list.option, code)
			}
		}
	}
	return checkCallerKey(g.CallerKey)
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
