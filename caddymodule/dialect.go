package caddymodule

import (
	"cmp"
	"strconv"

	"go.uber.org/zap"

	"github.com/helpdesk-gateway/gateway/legacy"
)

// The backend's paging dialect: the names and numbering the gateway uses
// in its own calls to the backend (backend_page_param,
// backend_per_page_param, backend_first_page, backend_offset_param,
// backend_keyset). Clients always page with the help-desk API's names;
// the dialect's names are the gateway's alone, so a client may not send
// them in any spelling. legacy.Options holds the rules; this file hands
// it the options and reports what the backend makes of them.

// dialectOptions are the gateway's dialect options as legacy checks them.
func (g *Gateway) dialectOptions() legacy.Options {
	return legacy.Options{
		PageParam:    g.BackendPageParam,
		PerPageParam: g.BackendPerPageParam,
		OffsetParam:  g.BackendOffsetParam,
		FirstPage:    g.BackendFirstPage,
		Keyset:       g.BackendKeyset,
		Sort:         cmp.Or(g.BackendSort, defaultBackendSort),
		LexicalIDs:   g.IDOrder == "lexical",
	}
}

// backendDialect returns the dialect the options describe. Call it on a
// valid config.
func (g *Gateway) backendDialect() legacy.Dialect { return g.dialectOptions().Dialect() }

// checkDialect checks the dialect options, alone and together with
// backend_sort and id_order; its errors are *legacy.OptionError, which
// the Caddyfile parser reports at the option's line.
func (g *Gateway) checkDialect() error { return g.dialectOptions().Check() }

// keysetMisread returns the engine's OnKeysetMisread for ep: an answer
// showed that the backend ignored or misread backend_keyset for one list
// (records at or below the cursor, or an answer an offset read of the
// same cursor contradicted twice), which is read by offset from then on.
// Each such list counts in backend_keyset_misreads_total; the first of
// the endpoint warns with the Caddyfile line, the others log at info.
func (g *Gateway) keysetMisread(ep *endpoint) func(reason string) {
	return func(reason string) {
		metrics.keysetMisreads.WithLabelValues(ep.name).Inc()
		level := zap.WarnLevel
		if ep.keysetWarned.Swap(true) {
			level = zap.InfoLevel
		}
		if ce := g.logger.Check(level, "backend ignores or misreads backend_keyset: reading that list by offset; check the template against the backend's filter syntax, or remove it"); ce != nil {
			ce.Write(zap.String("endpoint", ep.name), zap.String("reason", reason),
				zap.String("caddyfile", "backend_keyset "+strconv.Quote(g.BackendKeyset)))
		}
	}
}
