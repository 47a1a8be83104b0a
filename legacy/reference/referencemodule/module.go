// Package referencemodule is the Caddy module of the reference legacy
// help-desk backend (package reference): the helpdesk_legacy handler and
// its Caddyfile directive, so that one Caddyfile runs the gateway and a
// backend to try it on. cmd/caddy and the module's root package import
// it beside caddymodule; a Caddy built for production need not.
package referencemodule

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/helpdesk-gateway/gateway/legacy"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

func init() {
	caddy.RegisterModule(Handler{})
	httpcaddyfile.RegisterHandlerDirective("helpdesk_legacy", parseLegacy)
	// A terminal handler: after reverse_proxy, so that a site may hold the
	// gateway and the reference backend with no proxy between them.
	httpcaddyfile.RegisterDirectiveOrder("helpdesk_legacy", httpcaddyfile.After, "reverse_proxy")
}

// Handler serves the reference legacy help-desk backend: lists paged
// only by _page/_perPage (or the paging dialect it is given), newest first
// unless sorted, with optional churn.
// It lets one Caddyfile run the gateway and a backend to try it on.
type Handler struct {
	// Seed makes the data set; the same seed gives the same records.
	Seed uint64 `json:"seed,omitempty"`
	// Records per list. Default: 1000.
	Records int `json:"records,omitempty"`
	// MaxPerPage is the largest page the backend serves; a larger
	// _perPage is clamped to it without a word. Default: 1000.
	MaxPerPage int `json:"max_per_page,omitempty"`
	// ListMaxPerPage clamps _perPage per list instead (keys as the lists
	// are named, e.g. "calls"), for trying the gateway on a backend whose
	// endpoints clamp differently.
	ListMaxPerPage map[string]int `json:"list_max_per_page,omitempty"`
	// FixedPerPage makes the named lists ignore _perPage and always serve
	// pages of this many records.
	FixedPerPage map[string]int `json:"fixed_per_page,omitempty"`
	// BasePath prefixes every endpoint.
	BasePath string `json:"base_path,omitempty"`
	// Envelope wraps the records as {"<envelope>": [...], ...}.
	Envelope string `json:"envelope,omitempty"`
	// Churn is the number of inserts and deletes per second per list.
	Churn float64 `json:"churn,omitempty"`

	// PageParam, PerPageParam, FirstPage and OffsetParam are the
	// backend's paging dialect, as the gateway's backend_* options of the
	// same names describe it: _page and _perPage from 1 by default.
	PageParam    string `json:"page_param,omitempty"`
	PerPageParam string `json:"per_page_param,omitempty"`
	FirstPage    *int   `json:"first_page,omitempty"`
	OffsetParam  string `json:"offset_param,omitempty"`
	// Keyset is the backend's condition for the records above an id, as
	// the gateway's backend_keyset writes it ("id_gt={id}",
	// "id=gt.{id}", "filter=(id>'{id}')"); KeysetInclusive keeps the
	// record with the id itself too, as json-server's id_gte does.
	Keyset          string `json:"keyset,omitempty"`
	KeysetInclusive bool   `json:"keyset_inclusive,omitempty"`

	backend *reference.Backend
}

// CaddyModule returns the Caddy module information.
func (Handler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.helpdesk_legacy",
		New: func() caddy.Module { return new(Handler) },
	}
}

// Provision generates the data set and starts the churn.
func (l *Handler) Provision(caddy.Context) error {
	if err := l.Validate(); err != nil {
		return err
	}
	l.backend = reference.New(reference.Config{
		Seed:            l.Seed,
		Records:         l.Records,
		MaxPerPage:      l.MaxPerPage,
		ListMaxPerPage:  l.ListMaxPerPage,
		FixedPerPage:    l.FixedPerPage,
		BasePath:        l.BasePath,
		Envelope:        l.Envelope,
		ChurnPerSecond:  l.Churn,
		KeysetInclusive: l.KeysetInclusive,
		Paging: legacy.Dialect{
			Page:     l.PageParam,
			PerPage:  l.PerPageParam,
			FromZero: l.FirstPage != nil && *l.FirstPage == 0,
			Offset:   l.OffsetParam,
			Keyset:   l.Keyset,
		},
	})
	l.backend.Start()
	return nil
}

// Validate checks the sizes (as the Caddyfile parser does, for a JSON
// config) and the paging dialect: plain parameter names, two of them, a
// first page of 0 or 1, and no page options next to an offset.
func (l *Handler) Validate() error {
	switch {
	case l.Records < 0:
		return fmt.Errorf("records: %d is negative", l.Records)
	case l.MaxPerPage < 0:
		return fmt.Errorf("max_per_page: %d is negative", l.MaxPerPage)
	case l.Churn < 0 || l.Churn > 1e6:
		return fmt.Errorf("churn: %v is not within [0, 1e6]", l.Churn)
	}
	for option, sizes := range map[string]map[string]int{"max_per_page": l.ListMaxPerPage, "fixed_per_page": l.FixedPerPage} {
		for name, n := range sizes {
			if !slices.Contains(reference.Lists(), name) {
				return fmt.Errorf("%s: %q is not a list of the reference backend; the lists are %s", option, name, strings.Join(reference.Lists(), ", "))
			}
			if n < 1 {
				return fmt.Errorf("%s: %d is not a valid page size for %s", option, n, name)
			}
		}
	}
	names := []struct{ option, value string }{
		{"page_param", l.PageParam}, {"per_page_param", l.PerPageParam}, {"offset_param", l.OffsetParam},
	}
	for _, n := range names {
		if n.value != "" {
			if err := legacy.CheckParamName(n.value); err != nil {
				return fmt.Errorf("%s: %v", n.option, err)
			}
		}
	}
	if l.FirstPage != nil && *l.FirstPage != 0 && *l.FirstPage != 1 {
		return fmt.Errorf("first_page: %d is not 0 or 1", *l.FirstPage)
	}
	if l.OffsetParam != "" && (l.PageParam != "" || l.FirstPage != nil) {
		return fmt.Errorf("offset_param %q pages by offset, with no page number: remove page_param and first_page", l.OffsetParam)
	}
	d := legacy.Dialect{Page: l.PageParam, PerPage: l.PerPageParam, Offset: l.OffsetParam}
	if p := d.Params(); legacy.SameParam(p[0], p[1]) {
		return fmt.Errorf("per_page_param %q is the same parameter as %q; the backend needs two", p[1], p[0])
	}
	if l.KeysetInclusive && l.Keyset == "" {
		return fmt.Errorf("keyset_inclusive: set keyset too, the condition it makes inclusive")
	}
	if l.Keyset != "" {
		t, err := legacy.ParseKeysetTemplate(l.Keyset, legacy.CheckParamName)
		if err != nil {
			return fmt.Errorf("keyset: %v", err)
		}
		for _, name := range t.Params {
			for _, p := range d.Params() {
				if legacy.SameParam(name, p) {
					return fmt.Errorf("keyset: %q is the same parameter as the paging name %q", name, p)
				}
			}
		}
	}
	return nil
}

// Cleanup stops the churn.
func (l *Handler) Cleanup() error {
	if l.backend != nil {
		l.backend.Close()
	}
	return nil
}

// ServeHTTP answers as the legacy backend; it never calls next.
func (l *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
	l.backend.ServeHTTP(w, r)
	return nil
}

func parseLegacy(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	l := new(Handler)
	err := l.UnmarshalCaddyfile(h.Dispenser)
	return l, err
}

// UnmarshalCaddyfile sets up the backend from Caddyfile tokens:
//
//	helpdesk_legacy {
//		seed         1
//		records      20000
//		max_per_page 1000
//		max_per_page /calls 137     # per list: clamps /calls to 137
//		fixed_per_page /phone_numbers 40 # ignores _perPage, pages of 40
//		base_path    /api/v3
//		envelope     data
//		churn        5
//		page_param     page      # default _page
//		per_page_param per_page  # default _perPage
//		first_page     0         # default 1
//		offset_param   offset    # pages by offset and limit instead
//		keyset         id_gt={id} # reads a condition on the id, as backend_keyset writes it
//		keyset_inclusive          # the condition keeps the id itself (json-server's id_gte)
//	}
func (l *Handler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next()
	if d.NextArg() {
		return d.ArgErr()
	}
	var pagingAt string // where the paging dialect was last set, for its check
	for d.NextBlock(0) {
		option := d.Val()
		if option == "fixed_per_page" || option == "max_per_page" && d.CountRemainingArgs() == 2 {
			if err := l.perListSize(d, option); err != nil {
				return err
			}
			continue
		}
		if option == "keyset_inclusive" {
			if d.NextArg() {
				return d.Errf("%s takes no value", option)
			}
			l.KeysetInclusive = true
			pagingAt = fmt.Sprintf("%s:%d", d.File(), d.Line())
			continue
		}
		var s string
		if err := oneArg(d, &s); err != nil {
			return err
		}
		var err error
		switch option {
		case "seed":
			l.Seed, err = strconv.ParseUint(s, 10, 64)
		case "records":
			l.Records, err = strconv.Atoi(s)
			if err == nil && l.Records < 0 {
				err = strconv.ErrRange
			}
		case "max_per_page":
			l.MaxPerPage, err = strconv.Atoi(s)
			if err == nil && l.MaxPerPage < 1 {
				err = strconv.ErrRange
			}
		case "base_path":
			l.BasePath = s
		case "envelope":
			l.Envelope = s
		case "page_param":
			l.PageParam = s
		case "per_page_param":
			l.PerPageParam = s
		case "offset_param":
			l.OffsetParam = s
		case "keyset":
			l.Keyset = s
		case "first_page":
			if s != "0" && s != "1" {
				err = strconv.ErrSyntax
				break // s may be "", with no s[0]
			}
			n := int(s[0] - '0')
			l.FirstPage = &n
		case "churn":
			l.Churn, err = strconv.ParseFloat(s, 64)
			if err == nil && (l.Churn < 0 || l.Churn > 1e6) {
				err = strconv.ErrRange
			}
		default:
			return d.Errf("unknown option %q", option)
		}
		if err != nil {
			return d.Errf("%s: %q is not a valid value", option, s)
		}
		if strings.HasSuffix(option, "_param") || option == "first_page" || option == "keyset" {
			pagingAt = fmt.Sprintf("%s:%d", d.File(), d.Line())
		}
	}
	if err := l.Validate(); err != nil {
		return fmt.Errorf("%v, at %s", err, pagingAt)
	}
	return nil
}

// oneArg reads the option's one value into dst, in the words of the
// gateway's own directive.
func oneArg(d *caddyfile.Dispenser, dst *string) error {
	option := d.Val()
	if !d.NextArg() {
		return d.Errf("%s: a value is needed", option)
	}
	*dst = d.Val()
	if d.NextArg() {
		return d.Errf("%s: one value only, got also %q", option, d.Val())
	}
	return nil
}

// perListSize reads "<option> /list N": a page size for one list.
func (l *Handler) perListSize(d *caddyfile.Dispenser, option string) error {
	args := d.RemainingArgs()
	if len(args) != 2 {
		return d.Errf("%s: want a list and a page size, e.g. %s /calls 100", option, option)
	}
	name := strings.TrimPrefix(args[0], "/")
	if !slices.Contains(reference.Lists(), name) {
		return d.Errf("%s: %q is not a list of the reference backend; the lists are /%s", option, args[0], strings.Join(reference.Lists(), ", /"))
	}
	n, err := strconv.Atoi(args[1])
	if err != nil || n < 1 {
		return d.Errf("%s: %q is not a valid page size", option, args[1])
	}
	dst := &l.ListMaxPerPage
	if option == "fixed_per_page" {
		dst = &l.FixedPerPage
	}
	if *dst == nil {
		*dst = map[string]int{}
	}
	(*dst)[name] = n
	return nil
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Handler)(nil)
	_ caddy.CleanerUpper          = (*Handler)(nil)
	_ caddyhttp.MiddlewareHandler = (*Handler)(nil)
	_ caddyfile.Unmarshaler       = (*Handler)(nil)
)
