package caddymodule

import (
	"strconv"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/dustin/go-humanize"
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
//		max_filters          50
//		max_filters_length   8KiB
//		status_codes         open pending ...
//		channel_types        email phone ...
//		period_codes         today yesterday ...
//	}
func (g *Gateway) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the directive name
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		option := d.Val()
		switch option {
		case "base_path":
			if err := oneArg(d, &g.BasePath); err != nil {
				return err
			}
		case "id_field":
			if err := oneArg(d, &g.IDField); err != nil {
				return err
			}
		case "records_path":
			if err := oneArg(d, &g.RecordsPath); err != nil {
				return err
			}
		case "backend_sort":
			if err := oneArg(d, &g.BackendSort); err != nil {
				return err
			}
		case "id_order":
			if err := oneArg(d, &g.IDOrder); err != nil {
				return err
			}
			if g.IDOrder != "numeric" && g.IDOrder != "lexical" {
				return d.Errf("id_order: %q is not numeric or lexical", g.IDOrder)
			}
		case "cursor_endpoints":
			if g.CursorEndpoints = d.RemainingArgs(); len(g.CursorEndpoints) == 0 {
				return d.Errf("cursor_endpoints: at least one path is needed")
			}
		case "filter_endpoints":
			if g.FilterEndpoints = d.RemainingArgs(); len(g.FilterEndpoints) == 0 {
				return d.Errf("filter_endpoints: at least one path is needed")
			}
		case "status_codes":
			g.StatusCodes = d.RemainingArgs()
		case "channel_types":
			g.ChannelTypes = d.RemainingArgs()
		case "period_codes":
			g.PeriodCodes = d.RemainingArgs()
		case "default_per_page":
			if err := intArg(d, &g.DefaultPerPage, 1); err != nil {
				return err
			}
		case "max_per_page":
			if err := intArg(d, &g.MaxPerPage, 1); err != nil {
				return err
			}
		case "backend_max_per_page":
			if err := intArg(d, &g.BackendMaxPerPage, 25); err != nil {
				return err
			}
		case "index_size":
			if err := intArg(d, &g.IndexSize, -1); err != nil {
				return err
			}
		case "max_subrequests":
			if err := intArg(d, &g.MaxSubrequests, 1); err != nil {
				return err
			}
		case "max_filters":
			if err := intArg(d, &g.MaxFilters, 1); err != nil {
				return err
			}
		case "max_body_size":
			n, err := sizeArg(d)
			if err != nil {
				return err
			}
			g.MaxBodySize = int64(n)
		case "max_query_length":
			n, err := sizeArg(d)
			if err != nil {
				return err
			}
			g.MaxQueryLength = n
		case "max_filters_length":
			n, err := sizeArg(d)
			if err != nil {
				return err
			}
			g.MaxFiltersLength = n
		default:
			return d.Errf("unknown option %q", option)
		}
	}
	return nil
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

func intArg(d *caddyfile.Dispenser, dst *int, minimum int) error {
	option := d.Val()
	var s string
	if err := oneArg(d, &s); err != nil {
		return err
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return d.Errf("%s: %q is not a whole number", option, s)
	}
	if n < minimum {
		return d.Errf("%s: %d is below the minimum of %d", option, n, minimum)
	}
	*dst = n
	return nil
}

// sizeArg reads a byte size such as 16MiB, 512KB or 4096.
func sizeArg(d *caddyfile.Dispenser) (int, error) {
	option := d.Val()
	var s string
	if err := oneArg(d, &s); err != nil {
		return 0, err
	}
	n, err := humanize.ParseBytes(s)
	if err != nil || n == 0 || n > 1<<40 {
		return 0, d.Errf("%s: %q is not a size such as 16MiB or 4096", option, s)
	}
	return int(n), nil
}

// Interface guard
var _ caddyfile.Unmarshaler = (*Gateway)(nil)
