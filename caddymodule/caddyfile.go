package caddymodule

import (
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/dustin/go-humanize"

	"github.com/helpdesk-gateway/gateway/legacy"
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

// UnmarshalCaddyfile sets up the gateway from Caddyfile tokens, one
// line per option of the table (options.go; docs/options.md):
//
//	helpdesk_gateway [<matcher>] {
//		<option> <value>...
//	}
//
// Each option is read by its kind, and the config is then checked as
// Provision would check it, so that `caddy adapt` refuses what Provision
// would, with the line: each error names its option.
func (g *Gateway) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the directive name
	if d.NextArg() {
		return d.ArgErr()
	}
	at := map[string]string{} // where each option was set, for the checks of options together
	for d.NextBlock(0) {
		o := lookupOption(d.Val())
		if o == nil {
			return d.Errf("unknown option %q", d.Val())
		}
		at[o.name] = fmt.Sprintf("%s:%d", d.File(), d.Line())
		if err := o.unmarshal(d, g); err != nil {
			return err
		}
	}
	var oe *legacy.OptionError
	if err := g.checkDialect(); errors.As(err, &oe) {
		return fmt.Errorf("%v, at %s", err, cmp.Or(at[oe.Option], at[oe.Other]))
	}
	// Validate's checks, of the options as they will run (on a copy,
	// with the defaults filled in).
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

// unmarshal reads the option's value from the line d is on into g, by
// its kind. What a Caddyfile writes of a value that JSON writes as its
// zero, which means the default there, is refused: a Caddyfile takes the
// default by leaving the option out.
func (o *option) unmarshal(d *caddyfile.Dispenser, g *Gateway) error {
	f := o.field(g)
	switch o.kind {
	case flag:
		if d.NextArg() {
			return d.Errf("%s takes no value: %s", o.name, o.hint)
		}
		f.SetBool(true)
		return nil
	case paths, codes, headers, members, placeholders:
		values := d.RemainingArgs()
		if len(values) == 0 {
			return d.Errf("%s: at least one %s", o.name, o.kind.needed())
		}
		if o.kind == placeholders { // the option may be repeated
			values = append(f.Interface().([]string), values...)
		}
		f.Set(reflect.ValueOf(values))
		return nil
	}
	var s string
	if err := oneArg(d, &s); err != nil {
		return err
	}
	var n int64
	switch o.kind {
	case text:
		if s == "" { // "" or "{$UNSET}": the default would be taken in silence
			return d.Errf("%s: the value is empty; leave the option out for its default", o.name)
		}
		if o.oneOf != nil && !slices.Contains(o.oneOf, s) {
			return d.Errf("%s: %q is not %s%s", o.name, s, strings.Join(o.oneOf, " or "), o.hinted())
		}
		if f.Kind() == reflect.String {
			f.SetString(s)
			return nil
		}
		n, _ = strconv.ParseInt(s, 10, 64) // a number of oneOf
	case whole:
		v, err := strconv.Atoi(s)
		if err != nil {
			return d.Errf("%s: %q is not a whole number", o.name, s)
		}
		least := max(o.min, 1)
		if o.min < 0 {
			least = o.min
		}
		switch n = int64(v); {
		case n == 0 && o.min < 0:
			return d.Errf("%s: 0 would mean the default; use -1 to turn it off, or leave the option out", o.name)
		case n < least:
			return d.Errf("%s: %d is below the minimum of %d", o.name, n, least)
		case n > o.max:
			return d.Errf("%s: %d is above the maximum of %d", o.name, n, o.max)
		}
	case size:
		v, err := humanize.ParseBytes(s)
		if err != nil || v == 0 {
			return d.Errf("%s: %q is not a size such as 16MiB or 4096", o.name, s)
		}
		switch least := uint64(max(o.min, 1)); {
		case v < least:
			return d.Errf("%s: %s is below the minimum of %s", o.name, s, humanize.IBytes(least))
		case v > uint64(o.max):
			return d.Errf("%s: %s is above the maximum of %s", o.name, s, humanize.IBytes(uint64(o.max)))
		}
		n = int64(v)
	case duration:
		t, err := caddy.ParseDuration(s)
		if f.Kind() == reflect.Pointer { // 0 is a value, not the default
			if err != nil || t < 0 {
				return d.Errf("%s: %q is not a duration such as 2s or 500ms%s", o.name, s, o.hinted())
			}
		} else if err != nil || t <= 0 {
			return d.Errf("%s: %q is not a duration above 0 such as %s", o.name, s, o.defaultText())
		}
		n = int64(t)
	}
	set(f, reflect.ValueOf(n))
	return nil
}

// oneArg reads the one value of the option d is on.
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

// hinted is the option's hint, as an error's last clause.
func (o *option) hinted() string {
	if o.hint == "" {
		return ""
	}
	return "; " + o.hint
}

// needed says what a list option written with no value lacks.
func (k kind) needed() string {
	switch k {
	case paths:
		return "path is needed"
	case codes:
		return "code is needed; leave the option out to accept any code"
	case headers:
		return "header name is needed"
	case members:
		return "member name is needed"
	}
	return "placeholder is needed, such as {http.auth.user.id}"
}

// Interface guard
var _ caddyfile.Unmarshaler = (*Gateway)(nil)
