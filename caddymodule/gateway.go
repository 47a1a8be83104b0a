// Package caddymodule is the Caddy glue of the help-desk gateway: it
// registers the helpdesk_gateway HTTP handler, parses its Caddyfile
// directive, and serves cursor pages and validated ticket filters through
// sub-requests to the next handler, normally reverse_proxy. The reference
// backend's module is legacy/reference/referencemodule.
package caddymodule

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/helpdesk-gateway/gateway/adminreport"
	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/helpdesk-gateway/gateway/learnedlimit"
	"github.com/helpdesk-gateway/gateway/legacy"
	"github.com/helpdesk-gateway/gateway/openapi"
	"github.com/helpdesk-gateway/gateway/pagequery"
	"github.com/helpdesk-gateway/gateway/ticketfilter"
	"github.com/helpdesk-gateway/gateway/translate"
)

func init() {
	caddy.RegisterModule(Gateway{})
}

// Gateway is the helpdesk_gateway HTTP handler. On the cursor endpoints it
// serves _cursor pages by calling the next handler with _page/_perPage
// requests; on the filter endpoints it checks _filters before the backend
// sees them. Every other request passes through untouched.
//
// Each exported field is an option: its row in the option table
// (options.go; docs/options.md) says how a Caddyfile writes it, its
// default, its range and whether it keeps deployments apart.
type Gateway struct {
	// BasePath prefixes every endpoint, e.g. "/api/v3".
	BasePath string `json:"base_path,omitempty"`
	// CursorEndpoints are the lists served by cursor.
	CursorEndpoints []string `json:"cursor_endpoints,omitempty"`
	// FilterEndpoints are the lists whose _filters are validated.
	FilterEndpoints []string `json:"filter_endpoints,omitempty"`
	// IDField is the gjson path of a record's id.
	IDField string `json:"id_field,omitempty"`
	// RecordsPath is the gjson path of the records array in an envelope.
	// Unset: the body is the array.
	RecordsPath string `json:"records_path,omitempty"`
	// IDOrder is numeric or lexical.
	IDOrder string `json:"id_order,omitempty"`
	// BackendSort is the query that sorts a backend list ascending by id.
	BackendSort string `json:"backend_sort,omitempty"`
	// DefaultPerPage is the page size when a client sends no _perPage.
	DefaultPerPage int `json:"default_per_page,omitempty"`
	// MaxPerPage is the largest _perPage a client may ask for.
	MaxPerPage int `json:"max_per_page,omitempty"`
	// BackendMaxPerPage is the largest _perPage the backend serves.
	BackendMaxPerPage int `json:"backend_max_per_page,omitempty"`
	// IndexSize bounds the samples, and the lists holding them, of each
	// endpoint's position index, so that a search stays short; their
	// bytes count in ReadaheadMemory with the rest of each list. -1
	// disables the index.
	IndexSize int `json:"index_size,omitempty"`
	// MaxBodySize bounds each backend answer the gateway buffers, in bytes.
	MaxBodySize int64 `json:"max_body_size,omitempty"`
	// MaxSubrequests bounds the backend calls one client request may make.
	MaxSubrequests int `json:"max_subrequests,omitempty"`
	// MaxQueryLength bounds the query string of an owned request, in bytes.
	MaxQueryLength int `json:"max_query_length,omitempty"`
	// OpenAPIPath, when set, is the path (e.g. /openapi.json) at which the
	// gateway serves the OpenAPI document of its client contract; it is
	// not prefixed with BasePath. Unset: not served.
	OpenAPIPath string `json:"openapi_path,omitempty"`
	// DropBackendHeaders names the backend response headers that describe
	// the backend's own page (its Link, X-Page, Content-Range, ...): a page
	// the gateway composes is another page, so they are not passed on.
	// Counts of the whole list, such as X-Total-Count, are not among the
	// default ones: they stay true of the gateway's list.
	DropBackendHeaders []string `json:"drop_backend_headers,omitempty"`
	// DropEnvelopeMembers names the top-level members of a backend
	// envelope (records_path set) that describe the backend's window (its
	// page number, page size, offset, limit, page count, next/previous
	// links): a page the gateway composes is another window, so they are
	// left out of it; the default adds the backend's paging names to the
	// common ones. Names compare exactly, case included. The
	// member that holds the records is always kept; members nested
	// inside it (data.page beside data.items) are not looked at.
	DropEnvelopeMembers []string `json:"drop_envelope_members,omitempty"`
	// LinkHeader adds `Link: <...>; rel="next"` (RFC 8288) beside
	// next_page_cursor, for generic HTTP tooling. Off unless set, so that
	// answers stay as API clients of the help-desk API know them.
	LinkHeader bool `json:"link_header,omitempty"`

	// BackendPageParam names the backend's page number.
	BackendPageParam string `json:"backend_page_param,omitempty"`
	// BackendPerPageParam names the backend's page size, or its limit
	// with BackendOffsetParam.
	BackendPerPageParam string `json:"backend_per_page_param,omitempty"`
	// BackendFirstPage is the number of the backend's first page, 0 or 1:
	// a pointer, since 0 is a value here, not the default.
	BackendFirstPage *int `json:"backend_first_page,omitempty"`
	// BackendOffsetParam, when set, names the offset of a window's first
	// record: the backend is asked by offset and limit, with no page
	// number. Unset: the backend is asked by page.
	BackendOffsetParam string `json:"backend_offset_param,omitempty"`
	// BackendKeyset, when set, is the backend's query for the records
	// with id above a cursor, {id} standing for the cursor id, such as
	// "id_gt={id}": cursor pages whose id is in the safe set are asked
	// with it instead of by page or offset.
	BackendKeyset string `json:"backend_keyset,omitempty"`

	// ReadaheadTTL is how long a read-ahead window serves a walk's pages
	// after the call that read it; 0 turns read-ahead off: a pointer,
	// since 0 is a value here, not the default.
	ReadaheadTTL *caddy.Duration `json:"readahead_ttl,omitempty"`
	// ReadaheadMemory bounds the bytes the gateway keeps of its callers'
	// lists across its endpoints, all counted: read-ahead windows, walks,
	// identities and learned state; the least recently used list goes
	// first.
	ReadaheadMemory int64 `json:"readahead_memory,omitempty"`
	// CallerKey names request facts, as placeholders such as
	// {http.auth.user.id}, that make a caller besides those the gateway
	// reads itself (identity.go): what the routes after the gateway show
	// the backend. Two requests that differ in one are two callers.
	CallerKey []string `json:"caller_key,omitempty"`
	// ReadaheadStore, when set, is a Redis-protocol server (Redis 7,
	// Valkey) that keeps the walks and read-ahead windows in place of
	// this instance's memory, as redis://[user:password@]host:port/db or
	// rediss:// for TLS, so that instances behind a balancer that does not
	// hash the caller (round_robin) continue each other's walks. Learned
	// state and the position index stay in each instance. Placeholders
	// such as {env.HELPDESK_STORE_URL} are replaced.
	ReadaheadStore string `json:"readahead_store,omitempty"`
	// ReadaheadStoreKey is the secret that keys the hash naming each
	// caller's entries in the store, so that the store holds no query or
	// credential in the clear; required with ReadaheadStore, the same on
	// every instance, at least 16 bytes once placeholders such as
	// {env.HELPDESK_STORE_KEY} are replaced. Never logged.
	ReadaheadStoreKey string `json:"readahead_store_key,omitempty"`
	// ReadaheadStoreTimeout is each store call's deadline: a store slower
	// than this costs a backend call, never a late page.
	ReadaheadStoreTimeout caddy.Duration `json:"readahead_store_timeout,omitempty"`

	// MaxFilters bounds the conditions in one _filters value.
	MaxFilters int `json:"max_filters,omitempty"`
	// MaxFiltersLength bounds a _filters value, in bytes.
	MaxFiltersLength int `json:"max_filters_length,omitempty"`

	// Deployment names the deployment: instances with the same name (and
	// config) share readahead_store's entries, others never do. It goes
	// into the fingerprint beside the options and the backend the
	// handlers after the gateway reach (deployment.go); set it where the
	// config cannot say which backend that is.
	Deployment string `json:"deployment,omitempty"`

	// StatusCodes, ChannelTypes and PeriodCodes restrict the codes accepted
	// for status, channel_type and the DP operator. Empty: any code.
	StatusCodes  []string `json:"status_codes,omitempty"`
	ChannelTypes []string `json:"channel_types,omitempty"`
	PeriodCodes  []string `json:"period_codes,omitempty"`

	order       cursor.Order
	sortParams  url.Values      // backend_sort, parsed
	dialect     legacy.Dialect  // the backend's paging names
	backendOnly []string        // the dialect's names that are not the clients' as well
	shadowNames []string        // the names parameters must not pass for; see pagequery.ShadowError
	dropHeaders map[string]bool // DropBackendHeaders, canonical
	dropMembers legacy.Members  // DropEnvelopeMembers
	dropKeyset  legacy.Members  // and, for keyset calls' answers, keysetCountMembers
	exposed     []string        // the page headers a browser's script may read
	endpoints   map[string]*endpoint
	spellings   map[string]string      // spelling -> endpoint path; see routing.go
	windows     *translate.MemoryStore // what is kept per caller's list: learned state, walks, windows
	store       *sharedStore           // readahead_store: the walks and windows instead, when set
	deploy      *deploymentState       // the fingerprint that keeps deployments apart in the store
	stopPurge   func()                 // stops the timer that drops expired windows, so an idle gateway lets them go
	filters     *ticketfilter.FilterValidator
	openAPIDoc  []byte // the document served at OpenAPIPath
	logger      *zap.Logger
	life        context.Context // the config's: it ends when the config is unloaded
	loaded      time.Time       // when Provision ran, for the admin endpoint
}

// endpoint is one owned path.
type endpoint struct {
	name   string // its path with base_path, e.g. /api/v3/calls: the metrics' and logs' endpoint
	cursor bool   // a cursor endpoint; else a filter endpoint
	engine *translate.Engine
	m      *endpointMetrics
	counts adminreport.Counters // cursor endpoints only; see the admin endpoint
	warned atomic.Bool          // the first page-limit warning was logged
	// learned: the page limits its lists learned; agreed: the last limit
	// the callers agreed on, as logged (learnedlimit).
	learned learnedlimit.Limits
	agreed  atomic.Int64
	// keysetWarned: the warning that the backend misreads backend_keyset
	// was logged.
	keysetWarned atomic.Bool
}

// CaddyModule returns the Caddy module information.
func (Gateway) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.helpdesk_gateway",
		New: func() caddy.Module { return new(Gateway) },
	}
}

// Provision fills in defaults and builds the engines. Every check,
// those of the values its placeholders give included, is made before
// anything is set up (a store client, the purge timer, the admin
// endpoint's entry), and a Provision that fails still undoes what it set
// up: a config refused leaves nothing behind, in `caddy validate` or in
// a running Caddy whose reload is refused.
func (g *Gateway) Provision(ctx caddy.Context) (err error) {
	g.logger, g.life = ctx.Logger(), ctx
	defer func() {
		if err != nil {
			g.unload()
		}
	}()
	if err := registerMetrics(ctx.GetMetricsRegistry()); err != nil {
		return err
	}
	g.setDefaults()
	if err := g.Validate(); err != nil {
		return err
	}
	store, err := g.storeSettings()
	if err != nil {
		return err
	}
	g.order, _ = cursor.ParseOrder(g.IDOrder)
	g.sortParams, _ = url.ParseQuery(g.BackendSort)
	g.dialect = g.backendDialect()
	g.backendOnly = pagequery.BackendOnly(g.dialect)
	g.shadowNames = pagequery.ShadowNames(g.sortParams, g.dialect)
	g.dropHeaders = make(map[string]bool, len(g.DropBackendHeaders))
	for _, name := range g.DropBackendHeaders {
		g.dropHeaders[http.CanonicalHeaderKey(name)] = true
	}
	g.dropMembers = make(legacy.Members, len(g.DropEnvelopeMembers))
	for _, name := range g.DropEnvelopeMembers {
		g.dropMembers[name] = true
	}
	g.dropKeyset = g.dropMembers
	if g.BackendKeyset != "" {
		g.dropKeyset = maps.Clone(g.dropMembers)
		for _, name := range keysetCountMembers {
			g.dropKeyset[name] = true // never the records' member: Body.ParseWithout keeps it
		}
	}
	g.exposed = []string{nextPageCursor}
	if g.LinkHeader {
		g.exposed = append(g.exposed, "Link")
	}
	g.filters = ticketfilter.NewFilterValidator(g.filterConfig())
	if err := g.openStore(store); err != nil {
		return err
	}
	g.startDeployment(ctx)
	g.watchStore(ctx)
	g.windows = translate.NewMemoryStore(g.order, time.Duration(*g.ReadaheadTTL), g.ReadaheadMemory)
	g.windows.OnDrop = windowDropped
	g.watchStays()
	g.stopPurge = g.windows.PurgeEvery(purgeInterval(time.Duration(*g.ReadaheadTTL)))
	g.endpoints = make(map[string]*endpoint)
	for _, name := range g.CursorEndpoints {
		ep := &endpoint{name: g.BasePath + name, cursor: true, engine: &translate.Engine{
			Order:       g.order,
			MaxPageSize: g.BackendMaxPerPage,
			MaxCalls:    g.MaxSubrequests,
			Index:       g.windows.Index(g.IndexSize), // its samples in each list's object, under readahead_memory
			Offsets:     g.dialect.Offsets(),
			Lists:       g.windows,
		}, m: newEndpointMetrics(g.BasePath+name, true)}
		if g.store != nil {
			ep.engine.Walks = g.store.Store // never a nil *Store in the interface
		}
		ep.engine.OnLearn = g.pageLimitLearned(ep)
		if g.dialect.Keysets() {
			ep.engine.Keyset = g.dialect.KeysetCheck
			ep.engine.KeysetInclusive = g.dialect.KeysetInclusive()
			ep.engine.OnKeysetMisread = g.keysetMisread(ep)
		}
		metrics.pageLimit.WithLabelValues(ep.name).Set(float64(g.BackendMaxPerPage))
		g.endpoints[g.BasePath+name] = ep
	}
	for _, name := range g.FilterEndpoints {
		g.endpoints[g.BasePath+name] = &endpoint{name: g.BasePath + name, m: newEndpointMetrics(g.BasePath+name, false)}
	}
	g.spellings = endpointSpellings(g.endpoints)
	if g.OpenAPIPath != "" {
		doc, err := openapi.Generate(g.openAPIConfig())
		if err != nil {
			return fmt.Errorf("openapi_path: %v", err)
		}
		g.openAPIDoc = doc
	}
	g.loaded = time.Now()
	register(g)
	// Caddy calls Cleanup when it unloads the config; a gateway provisioned
	// outside a config (tests, programs embedding the handler) leaves when
	// its context ends.
	context.AfterFunc(ctx, func() { g.unload() })
	return nil
}

// Cleanup takes the gateway out of the admin endpoint's report when its
// config is unloaded, and drops its read-ahead windows: the new config's
// gateway starts with none, and the old one's memory is not held through
// the reload. It closes the shared store's connections; what the store
// holds stays for the new config's gateway, until it expires.
func (g *Gateway) Cleanup() error {
	g.unload()
	return nil
}

// unload undoes Provision, as far as it went: Caddy calls Cleanup on a
// gateway whose Provision failed too, so nothing here may assume that
// the windows, the timer or the store were made. It may run more than
// once (Cleanup, then the context's end).
func (g *Gateway) unload() {
	unregister(g)
	if g.stopPurge != nil {
		g.stopPurge()
	}
	if g.windows != nil {
		g.windows.Clear()
	}
	g.closeStore()
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Gateway)(nil)
	_ caddy.Validator             = (*Gateway)(nil)
	_ caddy.CleanerUpper          = (*Gateway)(nil)
	_ caddyhttp.MiddlewareHandler = (*Gateway)(nil)
)

// purgeInterval is how often expired windows and chain entries are
// dropped without traffic: half the TTL, so that an idle gateway holds a
// caller's records at most one and a half TTLs, but no more often than
// minPurgeInterval, since a purge visits every list under the store's
// lock and a TTL of a millisecond is accepted.
func purgeInterval(ttl time.Duration) time.Duration {
	return max(ttl/2, minPurgeInterval)
}

// minPurgeInterval bounds how often the purge timer runs.
const minPurgeInterval = 100 * time.Millisecond
