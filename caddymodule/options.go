package caddymodule

// The gateway's options, one row each. The Caddyfile parser, the
// defaults, the ranges, the checks of one option and the deployment
// fingerprint all read the table, and docs/options.md is held to it
// (TestOptionsDocMatchesTable). Adding an option is a field of Gateway
// (its JSON name is the row's), a row here, a test case and a line of
// docs/options.md.

import (
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/helpdesk-gateway/gateway/legacy"
	"github.com/helpdesk-gateway/gateway/redisstore"
	"github.com/helpdesk-gateway/gateway/ticketfilter"
	"github.com/helpdesk-gateway/gateway/translate"
)

// An option is one row of the table.
type option struct {
	name string // the Caddyfile option, and the JSON name of its Gateway field
	kind kind   // how a Caddyfile writes it, and what Validate checks of it
	// def is what setDefaults fills in when the option is left out: a
	// value of the field's kind, or a func(*Gateway) any of the config.
	// nil: the option's zero value stands (none, off, any), or what reads
	// it applies the default that shown says.
	def   any
	shown string // the default as docs/options.md says it, where def does not
	// min and max bound a number or a size. JSON's 0 means the default,
	// so a Caddyfile writes no 0; a min of -1 is the value that turns
	// the option off.
	min, max int64
	oneOf    []string // the values a text option may take, when listed
	// hint is what a Caddyfile error about a value it cannot read adds.
	hint  string
	check func(g *Gateway) error // a check of the option alone, its error naming it
	// sameDeployment, when set, says why the option never changes a
	// list's records nor a page composed from a stored window: the
	// deployment fingerprint leaves it out (deployment.go). Empty: the
	// option keeps deployments apart, as any option does until its row
	// says otherwise.
	sameDeployment string
}

// A kind is how a Caddyfile writes an option's value.
type kind int

const (
	text         kind = iota // one value, not empty
	flag                     // no value: the option written turns it on
	whole                    // a whole number within [min, max]
	size                     // a byte size such as 16MiB within [min, max]
	duration                 // a duration such as 2s
	paths                    // one path or more
	codes                    // one filter code or more
	headers                  // one header name or more
	members                  // one envelope member name or more
	placeholders             // one value or more, each with a placeholder; the option may be repeated
)

// options is the table, in the order docs/options.md lists them.
var options = []option{
	{name: "base_path", kind: text, check: func(g *Gateway) error {
		if g.BasePath != "" && (!strings.HasPrefix(g.BasePath, "/") || strings.HasSuffix(g.BasePath, "/")) {
			return fmt.Errorf("base_path %q: must start with / and not end with /", g.BasePath)
		}
		return nil
	}},
	{name: "cursor_endpoints", kind: paths, def: defaultCursorEndpoints},
	{name: "filter_endpoints", kind: paths, def: []string{"/tickets"},
		sameDeployment: "validated lists are passed through, never kept"},
	{name: "id_field", kind: text, def: "id", check: func(g *Gateway) error {
		if g.IDField == "" {
			return fmt.Errorf("id_field: must not be empty")
		}
		return nil
	}},
	{name: "records_path", kind: text},
	{name: "id_order", kind: text, def: cursor.Numeric.String(), oneOf: []string{cursor.Numeric.String(), cursor.Lexical.String()}},
	{name: "backend_sort", kind: text, def: defaultBackendSort, check: func(g *Gateway) error {
		if _, err := url.ParseQuery(g.BackendSort); err != nil {
			return fmt.Errorf("backend_sort %q: not a query string: %v", g.BackendSort, err)
		}
		return nil
	}},
	{name: "default_per_page", kind: whole, def: 10, min: 1, max: 1 << 20},
	{name: "max_per_page", kind: whole, def: 1000, min: 1, max: 1 << 20},
	{name: "backend_max_per_page", kind: whole, def: 1000, min: translate.MinBackendPageSize, max: 1 << 20},
	// The dialect's defaults are legacy.Dialect's; checkDialect checks
	// the dialect options together.
	{name: "backend_page_param", kind: text, shown: legacy.Dialect{}.PageParam()},
	{name: "backend_per_page_param", kind: text, shown: legacy.Dialect{}.PerPageParam()},
	{name: "backend_first_page", kind: text, shown: "1", oneOf: []string{"0", "1"},
		hint: "it is the number the backend gives its first page"},
	{name: "backend_offset_param", kind: text},
	{name: "backend_keyset", kind: text},
	{name: "index_size", kind: whole, def: 100000, min: -1, max: 1 << 26,
		sameDeployment: "the position index stays in each instance"},
	{name: "max_body_size", kind: size, def: int64(16 << 20), min: 1 << 10, max: 1 << 40},
	{name: "max_subrequests", kind: whole, def: translate.DefaultMaxCalls, min: 1, max: 1 << 16,
		sameDeployment: "a bound on one request's calls, not on what they answer"},
	{name: "max_query_length", kind: size, def: 8 << 10, min: 256, max: 1 << 20,
		sameDeployment: "admits or refuses a request before it reads anything"},
	// The filter validator applies the defaults of the filter options.
	{name: "max_filters", kind: whole, shown: strconv.Itoa(ticketfilter.DescribeFilters(ticketfilter.FilterConfig{}).MaxFilters), min: 0, max: 1 << 16,
		sameDeployment: "admits or refuses a _filters value; one admitted passes unchanged"},
	{name: "max_filters_length", kind: size, shown: sizeText(int64(ticketfilter.DescribeFilters(ticketfilter.FilterConfig{}).MaxLength)), min: 0, max: 1 << 20,
		sameDeployment: "admits or refuses a _filters value; one admitted passes unchanged"},
	{name: "status_codes", kind: codes, shown: "any code", sameDeployment: "codes accepted in _filters; one admitted passes unchanged"},
	{name: "channel_types", kind: codes, shown: "any code", sameDeployment: "codes accepted in _filters; one admitted passes unchanged"},
	{name: "period_codes", kind: codes, shown: "any code", sameDeployment: "codes accepted in _filters; one admitted passes unchanged"},
	{name: "readahead_ttl", kind: duration, def: defaultReadaheadTTL, hint: "0 turns read-ahead off",
		check: func(g *Gateway) error {
			if g.ReadaheadTTL == nil {
				return nil
			}
			return checkReadaheadTTL(time.Duration(*g.ReadaheadTTL))
		},
		sameDeployment: "how long an entry serves; each reader checks its own TTL"},
	{name: "readahead_memory", kind: size, def: int64(64 << 20), min: 1 << 10, max: 1 << 40,
		sameDeployment: "a bound on this instance's memory and on one window's bytes"},
	// checkStoreOptions checks the store's options together.
	{name: "readahead_store", kind: text, sameDeployment: "where the entries are kept, not what they hold"},
	{name: "readahead_store_key", kind: text, sameDeployment: "a secret; a deployment with another one shares nothing already"},
	{name: "readahead_store_timeout", kind: duration, shown: redisstore.DefaultTimeout.String(), check: func(g *Gateway) error {
		if timeout := time.Duration(g.ReadaheadStoreTimeout); timeout > maxStoreTimeout {
			return fmt.Errorf("readahead_store_timeout: %v is above %v; a store call slower than a backend call saves nothing", timeout, maxStoreTimeout)
		}
		return nil
	}, sameDeployment: "how long a store call may take"},
	{name: "drop_backend_headers", kind: headers, def: defaultDropBackendHeaders},
	{name: "drop_envelope_members", kind: members, def: func(g *Gateway) any {
		// The member that holds the records is never one of them.
		holder, _, _ := strings.Cut(g.RecordsPath, ".")
		names := []string{}
		for _, name := range slices.Concat(defaultDropEnvelopeMembers, g.backendDialect().Params()) {
			if name != holder && !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
		return names
	}, shown: "the common paging members and the backend's paging names"},
	{name: "link_header", kind: flag, hint: "write it alone to turn the Link header on",
		sameDeployment: "added by the instance that composes the page, never stored"},
	{name: "openapi_path", kind: text, check: func(g *Gateway) error {
		if g.OpenAPIPath != "" && !strings.HasPrefix(g.OpenAPIPath, "/") {
			return fmt.Errorf("openapi_path: %q must be a path starting with /", g.OpenAPIPath)
		}
		return nil
	}, sameDeployment: "serves a document, no list"},
	{name: "caller_key", kind: placeholders},
	{name: "deployment", kind: text},
}

// Defaults that other code reads too.
const (
	defaultBackendSort  = "_sortField=id&_sortDir=ASC"
	defaultReadaheadTTL = 2 * time.Second
)

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

// optionFields are the indexes of Gateway's fields by JSON name.
var optionFields = func() map[string]int {
	t := reflect.TypeFor[Gateway]()
	out := map[string]int{}
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			out[name] = i
		}
	}
	return out
}()

// lookupOption returns the row of the option name, or nil.
func lookupOption(name string) *option {
	for i := range options {
		if options[i].name == name {
			return &options[i]
		}
	}
	return nil
}

// field is g's field of the option.
func (o *option) field(g *Gateway) reflect.Value {
	i, ok := optionFields[o.name]
	if !ok {
		panic("option " + o.name + ": no Gateway field has that JSON name")
	}
	return reflect.ValueOf(g).Elem().Field(i)
}

// setDefaults fills in the options left out. The command that prints the
// OpenAPI document applies them too, so the document shows what the
// gateway runs with.
func (g *Gateway) setDefaults() {
	for i := range options {
		o := &options[i]
		f := o.field(g)
		if o.def == nil || !f.IsZero() {
			continue
		}
		def := o.def
		if compute, ok := def.(func(*Gateway) any); ok {
			def = compute(g)
		}
		set(f, reflect.ValueOf(def))
	}
}

// set puts v in f, through a new pointer when f is one, converting
// between the kinds of one family (an int and a caddy.Duration, say).
func set(f, v reflect.Value) {
	if f.Kind() == reflect.Pointer {
		p := reflect.New(f.Type().Elem())
		p.Elem().Set(v.Convert(f.Type().Elem()))
		f.Set(p)
		return
	}
	f.Set(v.Convert(f.Type()))
}

// defaultText is the option's default as docs/options.md says it.
func (o *option) defaultText() string {
	switch def := o.def; {
	case o.shown != "":
		return o.shown
	case def == nil && o.kind == flag:
		return "off"
	case def == nil:
		return "none"
	case o.kind == size:
		return sizeText(reflect.ValueOf(def).Int())
	case o.kind == duration:
		return time.Duration(reflect.ValueOf(def).Int()).String()
	}
	if list, ok := o.def.([]string); ok {
		return strings.Join(list, " ")
	}
	return fmt.Sprint(o.def)
}

// rangeText is the option's range as docs/options.md says it, or "" for
// an option without one.
func (o *option) rangeText() string {
	if o.min == 0 && o.max == 0 {
		if o.oneOf != nil {
			return strings.Join(o.oneOf, " or ")
		}
		return ""
	}
	show := func(n int64) string {
		if o.kind == size {
			return sizeText(n)
		}
		return strconv.FormatInt(n, 10)
	}
	r := show(max(o.min, 1)) + " to " + show(o.max)
	if o.min < 0 {
		r = show(o.min) + " (off), or " + r
	}
	return r
}

// sizeText writes a byte size as a Caddyfile may: 16MiB, 8KiB, 256.
func sizeText(n int64) string {
	for _, u := range []struct {
		unit  string
		shift uint
	}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.unit
		}
	}
	return strconv.FormatInt(n, 10)
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

// maxStoreTimeout bounds readahead_store_timeout: a store call waits at
// most this long before its page goes to the backend, and a store that
// slow saves nothing.
const maxStoreTimeout = 10 * time.Second
