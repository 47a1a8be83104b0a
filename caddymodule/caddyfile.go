package caddymodule

import (
	"cmp"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/dustin/go-humanize"

	"github.com/helpdesk-gateway/gateway/legacy"
	"github.com/helpdesk-gateway/gateway/redisstore"
)

func init() {
	httpcaddyfile.RegisterHandlerDirective("helpdesk_gateway", parseGateway)
	// The gateway reaches the backend through the handlers after it, so
	// it must come before reverse_proxy; registering the order here spares
	// every Caddyfile an `order` option.
	httpcaddyfile.RegisterDirectiveOrder("helpdesk_gateway", httpcaddyfile.Before, "reverse_proxy")
}

func parseGateway(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	g := new(Gateway)
	err := g.UnmarshalCaddyfile(h.Dispenser)
	return g, err
}

// UnmarshalCaddyfile sets up the gateway from Caddyfile tokens:
//
//	helpdesk_gateway [<matcher>] {
//		base_path            /api/v3
//		cursor_endpoints     /calls /phone_numbers
//		filter_endpoints     /tickets
//		id_field             id
//		records_path         data
//		id_order             numeric|lexical
//		backend_sort         _sortField=id&_sortDir=ASC
//		default_per_page     10
//		max_per_page         1000
//		backend_max_per_page 1000
//		index_size           100000
//		max_body_size        16MiB
//		max_subrequests      64
//		max_query_length     8KiB
//		backend_page_param     _page
//		backend_per_page_param _perPage
//		backend_first_page     1
//		backend_offset_param   offset
//		backend_keyset         id_gt={id}
//		max_filters          50
//		max_filters_length   8KiB
//		openapi_path         /openapi.json
//		status_codes         C L ...
//		channel_types        E C ...
//		period_codes         T L7D ...
//		drop_backend_headers Link X-Page ...
//		drop_envelope_members page per_page next ...
//		link_header
//		caller_key           {http.auth.user.id} {vars.tenant} ...
//		readahead_ttl        2s
//		readahead_memory     64MiB
//		readahead_store      redis://user:password@host:6379/0
//		readahead_store_key  {env.HELPDESK_STORE_KEY}
//		readahead_store_timeout 50ms
//		deployment           production-eu
//	}
func (g *Gateway) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the directive name
	if d.NextArg() {
		return d.ArgErr()
	}
	// Each option by the kind of value it takes; the JSON twin of an
	// option is the field it points at.
	texts := map[string]*string{
		"base_path":    &g.BasePath,
		"id_field":     &g.IDField,
		"records_path": &g.RecordsPath,
		"backend_sort": &g.BackendSort,
		"id_order":     &g.IDOrder,

		"backend_page_param":     &g.BackendPageParam,
		"backend_per_page_param": &g.BackendPerPageParam,
		"backend_offset_param":   &g.BackendOffsetParam,
		"backend_keyset":         &g.BackendKeyset,
		"openapi_path":           &g.OpenAPIPath,
		"readahead_store":        &g.ReadaheadStore,
		"readahead_store_key":    &g.ReadaheadStoreKey,
		"deployment":             &g.Deployment,
	}
	paths := map[string]*[]string{ // at least one value
		"cursor_endpoints": &g.CursorEndpoints,
		"filter_endpoints": &g.FilterEndpoints,
	}
	codes := map[string]*[]string{ // any number of values
		"status_codes":  &g.StatusCodes,
		"channel_types": &g.ChannelTypes,
		"period_codes":  &g.PeriodCodes,
	}
	numbers := map[string]*int{ // bounds in optionRanges
		"default_per_page":     &g.DefaultPerPage,
		"max_per_page":         &g.MaxPerPage,
		"backend_max_per_page": &g.BackendMaxPerPage,
		"index_size":           &g.IndexSize,
		"max_subrequests":      &g.MaxSubrequests,
		"max_filters":          &g.MaxFilters,
	}
	var bodySize, readaheadMemory int
	sizes := map[string]*int{ // bounds in optionRanges
		"max_body_size":      &bodySize,
		"readahead_memory":   &readaheadMemory,
		"max_query_length":   &g.MaxQueryLength,
		"max_filters_length": &g.MaxFiltersLength,
	}
	var perPageAt string // where default_per_page was set, for the check against max_per_page
	// Where each option was set, for the checks of options together.
	at := map[string]string{}
	for d.NextBlock(0) {
		option := d.Val()
		at[option] = fmt.Sprintf("%s:%d", d.File(), d.Line())
		if dst, ok := texts[option]; ok {
			if err := oneArg(d, dst); err != nil {
				return err
			}
			if *dst == "" { // "" or "{$UNSET}": the default would be taken in silence
				return d.Errf("%s: the value is empty; leave the option out for its default", option)
			}
			if strings.HasPrefix(option, "backend_") && strings.HasSuffix(option, "_param") {
				if err := legacy.CheckParamName(*dst); err != nil {
					return d.Errf("%s: %v", option, err)
				}
			}
		} else if option == "backend_first_page" {
			var s string
			if err := oneArg(d, &s); err != nil {
				return err
			}
			if s != "0" && s != "1" {
				return d.Errf("%s: %q is not 0 or 1; it is the number the backend gives its first page", option, s)
			}
			n := int(s[0] - '0')
			g.BackendFirstPage = &n
		} else if dst, ok := paths[option]; ok {
			if *dst = d.RemainingArgs(); len(*dst) == 0 {
				return d.Errf("%s: at least one path is needed", option)
			}
		} else if dst, ok := codes[option]; ok {
			if *dst = d.RemainingArgs(); len(*dst) == 0 {
				return d.Errf("%s: at least one code is needed; leave the option out to accept any code", option)
			}
		} else if option == "drop_backend_headers" {
			g.DropBackendHeaders = d.RemainingArgs()
			if len(g.DropBackendHeaders) == 0 {
				return d.Errf("%s: at least one header name is needed", option)
			}
			for _, name := range g.DropBackendHeaders {
				if !validHeaderName(name) {
					return d.Errf("%s: %q is not a header name", option, name)
				}
			}
		} else if option == "readahead_ttl" {
			var s string
			if err := oneArg(d, &s); err != nil {
				return err
			}
			ttl, err := caddy.ParseDuration(s)
			if err != nil || ttl < 0 {
				return d.Errf("%s: %q is not a duration such as 2s or 500ms; 0 turns read-ahead off", option, s)
			}
			if err := checkReadaheadTTL(ttl); err != nil {
				return d.Err(err.Error())
			}
			v := caddy.Duration(ttl)
			g.ReadaheadTTL = &v
		} else if option == "readahead_store_timeout" {
			var s string
			if err := oneArg(d, &s); err != nil {
				return err
			}
			timeout, err := caddy.ParseDuration(s)
			if err != nil || timeout <= 0 {
				return d.Errf("%s: %q is not a duration above 0 such as 50ms", option, s)
			}
			g.ReadaheadStoreTimeout = caddy.Duration(timeout)
			if timeout > maxStoreTimeout {
				return d.Errf("%s: %v is above %v; a store call slower than a backend call saves nothing", option, timeout, maxStoreTimeout)
			}
		} else if option == "drop_envelope_members" {
			g.DropEnvelopeMembers = d.RemainingArgs()
			if len(g.DropEnvelopeMembers) == 0 {
				return d.Errf("%s: at least one member name is needed", option)
			}
			if err := checkEnvelopeMembers(g.DropEnvelopeMembers, ""); err != nil {
				return d.Err(err.Error())
			}
		} else if option == "caller_key" {
			keys := d.RemainingArgs()
			if len(keys) == 0 {
				return d.Errf("%s: at least one placeholder is needed, such as {http.auth.user.id}", option)
			}
			if err := checkCallerKey(keys); err != nil {
				return d.Err(err.Error())
			}
			g.CallerKey = append(g.CallerKey, keys...) // the option may be repeated
		} else if option == "link_header" {
			if d.NextArg() {
				return d.Errf("%s takes no value: write it alone to turn the Link header on", option)
			}
			g.LinkHeader = true
		} else if dst, ok := numbers[option]; ok {
			if err := intArg(d, dst); err != nil {
				return err
			}
			if option == "default_per_page" {
				perPageAt = fmt.Sprintf("%s:%d", d.File(), d.Line())
			}
		} else if dst, ok := sizes[option]; ok {
			if err := sizeArg(d, dst); err != nil {
				return err
			}
			g.MaxBodySize, g.ReadaheadMemory = int64(bodySize), int64(readaheadMemory)
		} else {
			return d.Errf("unknown option %q", option)
		}
		if option == "id_order" && g.IDOrder != "numeric" && g.IDOrder != "lexical" {
			return d.Errf("id_order: %q is not numeric or lexical", g.IDOrder)
		}
		if option == "openapi_path" && !strings.HasPrefix(g.OpenAPIPath, "/") {
			return d.Errf("openapi_path: %q must be a path starting with /", g.OpenAPIPath)
		}
		if option == "readahead_store" && !strings.Contains(g.ReadaheadStore, "{") {
			if _, err := checkStoreURL(g.ReadaheadStore); err != nil {
				return d.Err(err.Error())
			}
		}
		// A key written out is checked here, for its line; one from a
		// placeholder, such as {env.HELPDESK_STORE_KEY}, at Provision.
		if option == "readahead_store_key" && !strings.Contains(g.ReadaheadStoreKey, "{") {
			if err := checkStoreKey(g.ReadaheadStoreKey, ""); err != nil {
				return d.Err(err.Error())
			}
		}
	}
	if maxPerPage := cmp.Or(g.MaxPerPage, defaultMaxPerPage); g.DefaultPerPage > maxPerPage {
		return fmt.Errorf("default_per_page: %d is above max_per_page (%d), at %s", g.DefaultPerPage, maxPerPage, perPageAt)
	}
	if err := checkEnvelopeMembers(g.DropEnvelopeMembers, g.RecordsPath); err != nil {
		return fmt.Errorf("%v, at %s", err, at["drop_envelope_members"])
	}
	if g.ReadaheadStore == "" && g.ReadaheadStoreKey != "" {
		return fmt.Errorf("%v, at %s", errKeyWithoutStore, at["readahead_store_key"])
	}
	if g.ReadaheadStore != "" && g.ReadaheadStoreKey == "" {
		return fmt.Errorf("readahead_store_key: required with readahead_store; write readahead_store_key {env.HELPDESK_STORE_KEY}, a secret of at least %d bytes, the same on every instance, at %s", redisstore.MinSecret, at["readahead_store"])
	}
	var oe *legacy.OptionError
	if err := g.checkDialect(); errors.As(err, &oe) {
		return fmt.Errorf("%v, at %s", err, cmp.Or(at[oe.Option], at[oe.Other]))
	}
	// Validate's other checks, of the options as they will run (on a
	// copy, with the defaults filled in), so that `caddy adapt` refuses
	// what Provision would, with the line: each error names its option.
	c := *g
	c.setDefaults()
	if err := c.Validate(); err != nil {
		return atOption(err, at)
	}
	return nil
}

// atOption adds to err the place where the Caddyfile set the first
// option the error names (its first word, as Validate's errors go), or
// returns err as it is when it names none the Caddyfile set.
func atOption(err error, at map[string]string) error {
	words := strings.FieldsFunc(err.Error(), func(r rune) bool {
		return (r < 'a' || r > 'z') && r != '_'
	})
	for _, w := range words {
		if where, ok := at[w]; ok {
			return fmt.Errorf("%v, at %s", err, where)
		}
	}
	return err
}

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

// intArg reads a whole number within the option's range. Zero, which
// means the default in JSON, is refused: a Caddyfile sets the default by
// leaving the option out.
func intArg(d *caddyfile.Dispenser, dst *int) error {
	option := d.Val()
	var s string
	if err := oneArg(d, &s); err != nil {
		return err
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return d.Errf("%s: %q is not a whole number", option, s)
	}
	r, v := optionRanges[option], int64(n)
	least := max(r.min, 1) // 0 means the default in JSON only
	if r.min < 0 {
		least = r.min
	}
	switch {
	case v == 0 && r.min < 0:
		return d.Errf("%s: 0 would mean the default; use -1 to turn it off, or leave the option out", option)
	case v < least:
		return d.Errf("%s: %d is below the minimum of %d", option, n, least)
	case v > r.max:
		return d.Errf("%s: %d is above the maximum of %d", option, n, r.max)
	}
	*dst = n
	return nil
}

// sizeArg reads a byte size such as 16MiB, 512KB or 4096 within the
// option's range.
func sizeArg(d *caddyfile.Dispenser, dst *int) error {
	option := d.Val()
	var s string
	if err := oneArg(d, &s); err != nil {
		return err
	}
	n, err := humanize.ParseBytes(s)
	if err != nil || n == 0 {
		return d.Errf("%s: %q is not a size such as 16MiB or 4096", option, s)
	}
	switch r := optionRanges[option]; {
	case n < uint64(max(r.min, 1)):
		return d.Errf("%s: %s is below the minimum of %s", option, s, humanize.IBytes(uint64(max(r.min, 1))))
	case n > uint64(r.max):
		return d.Errf("%s: %s is above the maximum of %s", option, s, humanize.IBytes(uint64(r.max)))
	}
	*dst = int(n)
	return nil
}

// Interface guard
var _ caddyfile.Unmarshaler = (*Gateway)(nil)
