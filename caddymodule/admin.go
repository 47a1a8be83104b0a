package caddymodule

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/helpdesk-gateway/gateway/estimate"
	"github.com/helpdesk-gateway/gateway/learnedlimit"
	"github.com/helpdesk-gateway/gateway/liststore"
	"github.com/helpdesk-gateway/gateway/redisstore"
	"github.com/helpdesk-gateway/gateway/translate"
)

func init() {
	caddy.RegisterModule(adminAPI{})
}

// adminAPI is the admin API module that serves GET /helpdesk/endpoints:
// for every gateway of the running config, where it serves and what each
// endpoint has learned and cost, as Caddy's /reverse_proxy/upstreams shows
// the proxy's upstreams. It shows counts and configuration only, never a
// query, id or credential.
type adminAPI struct{}

// CaddyModule returns the Caddy module information.
func (adminAPI) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "admin.api.helpdesk",
		New: func() caddy.Module { return new(adminAPI) },
	}
}

// Routes returns the route of /helpdesk/endpoints.
func (a adminAPI) Routes() []caddy.AdminRoute {
	return []caddy.AdminRoute{{
		Pattern: "/helpdesk/endpoints",
		Handler: caddy.AdminHandlerFunc(a.handleEndpoints),
	}}
}

// running is the registry of provisioned gateways: a gateway joins at the
// end of Provision and leaves at Cleanup, so after a config reload it holds
// the new config's gateways and nothing of the old one.
var running struct {
	mu       sync.Mutex
	gateways []*Gateway // in the order they were provisioned
}

func register(g *Gateway) {
	running.mu.Lock()
	defer running.mu.Unlock()
	running.gateways = append(running.gateways, g)
}

func unregister(g *Gateway) {
	running.mu.Lock()
	defer running.mu.Unlock()
	running.gateways = slices.DeleteFunc(running.gateways, func(x *Gateway) bool { return x == g })
}

func runningGateways() []*Gateway {
	running.mu.Lock()
	defer running.mu.Unlock()
	return slices.Clone(running.gateways)
}

// pageCounters count a cursor endpoint's served pages and their cost since
// its config was loaded. They are added to once per served page.
type pageCounters struct {
	pages, calls, fetched, served, fromWindows atomic.Int64
}

func (c *pageCounters) add(pg *translate.Page) {
	c.pages.Add(1)
	if pg.Stored != nil {
		c.fromWindows.Add(1)
	}
	c.calls.Add(int64(pg.Calls))
	c.fetched.Add(int64(pg.Fetched))
	c.served.Add(int64(len(pg.IDs)))
}

// backendLimit is the endpoint's backend page-size limit: the one its
// callers agree on (learnedlimit), else backend_max_per_page; learned says
// which. A limit only some lists learned is theirs, not the endpoint's:
// counts shows every learned limit with its lists and callers.
func (ep *endpoint) backendLimit(configured int) (limit int, learned bool, counts []learnedlimit.Count) {
	counts, agreed, ok := ep.learned.Summary()
	if ok {
		return agreed.Limit, true, counts
	}
	return configured, false, counts
}

// The JSON of /helpdesk/endpoints.
type (
	endpointsReport struct {
		Gateways []gatewayReport `json:"gateways"`
	}
	gatewayReport struct {
		// Server is the name of the HTTP server (srv0, ...) whose routes
		// hold the gateway; Listen its bound addresses; Hosts the host
		// matchers of the routes that lead to it. Empty while a reload
		// starts the gateway's config.
		Server    string           `json:"server,omitempty"`
		Listen    []string         `json:"listen,omitempty"`
		Hosts     []string         `json:"hosts,omitempty"`
		BasePath  string           `json:"base_path"`
		Loaded    time.Time        `json:"loaded"`
		Readahead readaheadReport  `json:"readahead"`
		Endpoints []endpointReport `json:"endpoints"`

		// Deployment is the gateway's deployment fingerprint
		// (deployment.go): instances that show the same one share
		// readahead_store's entries, others never do. Absent until the
		// gateway's config runs.
		Deployment *deploymentReport `json:"deployment,omitempty"`
	}
	// deploymentReport is a gateway's fingerprint, its first 12 hex
	// digits; the deployment option, if set; and what of the backend the
	// config does not describe, which the fingerprint then cannot cover.
	deploymentReport struct {
		Fingerprint string   `json:"fingerprint"`
		Name        string   `json:"name,omitempty"`
		Unknown     []string `json:"unknown,omitempty"`
	}
	// readaheadReport is the gateway's read-ahead windows: its settings,
	// what it holds now, and what it did since its config was loaded.
	readaheadReport struct {
		TTL            string `json:"ttl"` // "0s": off
		MemoryLimit    int64  `json:"memory_limit"`
		Windows        int    `json:"windows"`
		Bytes          int64  `json:"bytes"`
		PagesServed    int64  `json:"pages_served"` // each a backend call saved
		WindowsEvicted int64  `json:"windows_evicted"`
		WindowsExpired int64  `json:"windows_expired"`
		// Store is the shared store's state (readahead_store), which then
		// holds the walks and windows in place of the counts above:
		// its address without credentials, whether it answers, its
		// errors, run_id and eviction policy, pages served and windows
		// kept. Absent without one.
		Store *redisstore.State `json:"store,omitempty"`
		// Sharing is who shares the store's entries with this instance,
		// from its last heartbeat through the store (storecheck.go): its
		// instance id, the key_id of its readahead_store_key (a digest,
		// never the key), its peers (same key, same fingerprint) and the
		// instances on the store it shares nothing with, and why. Absent
		// without a store.
		Sharing *redisstore.Sharing `json:"sharing,omitempty"`
		// Walks is what this instance, with no shared store, has seen of
		// whether its callers' walks stay on it: its windows serve only
		// while trusted (operating.md, "Several instances"). Absent with a
		// store or with read-ahead off.
		Walks *liststore.Stay `json:"walks,omitempty"`
	}
	endpointReport struct {
		Path string `json:"path"`
		Kind string `json:"kind"` // cursor or filter

		// Cursor endpoints only.
		BackendPageLimit       int    `json:"backend_page_limit,omitempty"`
		BackendPageLimitSource string `json:"backend_page_limit_source,omitempty"`
		// LearnedPageLimits are the limits lists learned, each with how
		// many lists and callers learned it; absent until one did.
		LearnedPageLimits []learnedlimit.Count `json:"learned_page_limits,omitempty"`
		Index             *indexReport         `json:"index,omitempty"`
		Pages             *pagesReport         `json:"pages,omitempty"`
		// OffsetCost is what walks of the endpoint's longest known list
		// cost a backend read by offset; absent with backend_keyset and
		// until a list's extent is known.
		OffsetCost *offsetCostReport `json:"offset_cost,omitempty"`
	}
	// offsetCostReport: a backend that pages by offset steps over every
	// row before the window it sends, so a whole walk of list_records
	// read in windows of window steps over list_records/(2*window) rows
	// per record served (estimate.OffsetStepped). list_records is the
	// position index's extent of the longest list (Index.Extent); window
	// is the backend page limit with read-ahead on (windows grow to it),
	// else the mean page served (a call a page). Advice, from
	// estimate.LargeListStepped on, suggests backend_keyset.
	offsetCostReport struct {
		ListRecords                int     `json:"list_records"`
		Window                     int     `json:"window"`
		RowsSteppedPerRecordServed float64 `json:"rows_stepped_per_record_served"`
		Advice                     string  `json:"advice,omitempty"`
	}
	// indexReport counts what the endpoint's position index holds in the
	// gateway's lists (their bytes are in readahead's): lists holding
	// samples and the samples, each at most index_size.
	indexReport struct {
		Lists     int `json:"lists"`
		Samples   int `json:"samples"`
		IndexSize int `json:"index_size"`
	}
	pagesReport struct {
		Served         int64 `json:"served"`
		FromWindows    int64 `json:"from_readahead_windows"`
		BackendCalls   int64 `json:"backend_calls"`
		RecordsFetched int64 `json:"records_fetched"`
		RecordsServed  int64 `json:"records_served"`
		// The ratios; absent until a page is served.
		BackendCallsPerPage           *float64 `json:"backend_calls_per_page,omitempty"`
		RecordsFetchedPerRecordServed *float64 `json:"records_fetched_per_record_served,omitempty"`
	}
)

// handleEndpoints reports the running gateways.
func (adminAPI) handleEndpoints(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodGet {
		return caddy.APIError{
			HTTPStatus: http.StatusMethodNotAllowed,
			Err:        fmt.Errorf("method not allowed"),
		}
	}
	report := endpointsReport{Gateways: []gatewayReport{}}
	gateways := runningGateways()
	sites := findSites(gateways)
	// Gateways found in the running http app first, in the order of its
	// servers and routes; then any not (yet) found there.
	sort.SliceStable(gateways, func(i, j int) bool {
		si, iok := sites[gateways[i]]
		sj, jok := sites[gateways[j]]
		switch {
		case iok != jok:
			return iok
		case !iok:
			return false
		}
		return si.seq < sj.seq
	})
	for _, g := range gateways {
		report.Gateways = append(report.Gateways, g.report(sites[g]))
	}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(report); err != nil {
		return caddy.APIError{HTTPStatus: http.StatusInternalServerError, Err: err}
	}
	return nil
}

// report is what the admin endpoint shows of g.
func (g *Gateway) report(s site) gatewayReport {
	gr := gatewayReport{
		Server:    s.server,
		Listen:    s.listen,
		Hosts:     s.hosts,
		BasePath:  g.BasePath,
		Loaded:    g.loaded,
		Endpoints: make([]endpointReport, 0, len(g.endpoints)),
	}
	if g.deploy != nil {
		d := g.deploy.known.Load()
		if d == nil && g.configRunning() {
			d = g.deployment()
		}
		if d != nil {
			gr.Deployment = &deploymentReport{Fingerprint: d.short(), Name: g.Deployment, Unknown: d.unknown}
		}
	}
	ws := g.windows.Stats()
	gr.Readahead = readaheadReport{
		TTL: g.windows.TTL().String(), MemoryLimit: g.ReadaheadMemory,
		Windows: ws.Windows, Bytes: ws.Bytes, PagesServed: ws.Served,
		WindowsEvicted: ws.Evicted, WindowsExpired: ws.Expired,
	}
	if g.store != nil {
		st := g.store.State()
		gr.Readahead.Store = &st
		gr.Readahead.Sharing = g.sharingReport()
	}
	gr.Readahead.Walks = g.staysReport()
	for _, name := range slices.Concat(g.CursorEndpoints, g.FilterEndpoints) {
		ep := g.endpoints[g.BasePath+name]
		if ep == nil {
			continue
		}
		er := endpointReport{Path: g.BasePath + name, Kind: "filter"}
		if ep.cursor {
			er.Kind = "cursor"
			limit, learned, counts := ep.backendLimit(g.BackendMaxPerPage)
			er.BackendPageLimit, er.BackendPageLimitSource = limit, "configured"
			er.LearnedPageLimits = counts
			if learned {
				er.BackendPageLimitSource = "learned"
			}
			lists, samples := ep.engine.Index.Stats()
			er.Index = &indexReport{Lists: lists, Samples: samples, IndexSize: g.IndexSize}
			er.Pages = ep.counts.report()
			er.OffsetCost = g.offsetCost(ep, limit, er.Pages)
		}
		gr.Endpoints = append(gr.Endpoints, er)
	}
	return gr
}

// offsetCost is the endpoint's offset_cost (offsetCostReport), or nil.
func (g *Gateway) offsetCost(ep *endpoint, limit int, pages *pagesReport) *offsetCostReport {
	n := ep.engine.Index.Extent()
	if g.dialect.Keysets() || n == 0 {
		return nil
	}
	w := limit
	if g.windows.TTL() <= 0 {
		if pages.Served == 0 {
			return nil
		}
		w = int(max(pages.RecordsServed/pages.Served, 1))
	}
	return &offsetCostReport{ListRecords: n, Window: w,
		RowsSteppedPerRecordServed: estimate.OffsetStepped(n, w), Advice: estimate.KeysetAdvice(n, w)}
}

func (c *pageCounters) report() *pagesReport {
	p := &pagesReport{
		Served:         c.pages.Load(),
		FromWindows:    c.fromWindows.Load(),
		BackendCalls:   c.calls.Load(),
		RecordsFetched: c.fetched.Load(),
		RecordsServed:  c.served.Load(),
	}
	ratio := func(a, b int64) *float64 {
		if b == 0 {
			return nil
		}
		v := float64(a) / float64(b)
		return &v
	}
	p.BackendCallsPerPage = ratio(p.BackendCalls, p.Served)
	p.RecordsFetchedPerRecordServed = ratio(p.RecordsFetched, p.RecordsServed)
	return p
}

// site is where a gateway serves, as the running http app says.
type site struct {
	server string
	listen []string
	hosts  []string
	seq    int // the gateway's place in the app's servers and routes
}

// findSites looks for gateways in the routes of the running config's http
// app, in the order of its servers (by name) and their routes, descending
// into subroutes (a Caddyfile site block is one). A gateway not found
// (its config is still starting during a reload, or it sits where routes
// do not lead, such as a named route) has no site.
func findSites(gateways []*Gateway) map[*Gateway]site {
	sites := make(map[*Gateway]site, len(gateways))
	want := make(map[*Gateway]bool, len(gateways))
	for _, g := range gateways {
		want[g] = true
	}
	app, err := caddy.ActiveContext().AppIfConfigured("http")
	if err != nil {
		return sites
	}
	httpApp, ok := app.(*caddyhttp.App)
	if !ok {
		return sites
	}
	names := make([]string, 0, len(httpApp.Servers))
	for name := range httpApp.Servers {
		names = append(names, name)
	}
	sort.Strings(names)
	seq := 0
	for _, name := range names {
		srv := httpApp.Servers[name]
		listen := boundAddresses(srv)
		var walk func(routes caddyhttp.RouteList, hosts []string, depth int)
		walk = func(routes caddyhttp.RouteList, hosts []string, depth int) {
			if depth > 32 {
				return
			}
			for _, route := range routes {
				routeHosts := slices.Concat(hosts, matchedHosts(route.MatcherSets))
				for _, h := range route.Handlers {
					switch h := h.(type) {
					case *Gateway:
						if _, seen := sites[h]; want[h] && !seen {
							sites[h] = site{server: name, listen: listen, hosts: routeHosts, seq: seq}
							seq++
						}
					case *caddyhttp.Subroute:
						walk(h.Routes, routeHosts, depth+1)
					}
				}
			}
		}
		walk(srv.Routes, nil, 0)
	}
	return sites
}

// boundAddresses are the addresses srv listens on, or its configured
// listen addresses before it has started.
func boundAddresses(srv *caddyhttp.Server) []string {
	var out []string
	for _, ln := range srv.Listeners() {
		if addr := ln.Addr(); addr != nil {
			out = append(out, addr.String())
		}
	}
	if len(out) == 0 {
		out = slices.Clone(srv.Listen)
	}
	return out
}

// matchedHosts are the hosts of the host matchers in sets.
func matchedHosts(sets caddyhttp.MatcherSets) []string {
	var hosts []string
	for _, set := range sets {
		for _, m := range set {
			switch m := m.(type) {
			case *caddyhttp.MatchHost:
				hosts = append(hosts, *m...)
			case caddyhttp.MatchHost:
				hosts = append(hosts, m...)
			}
		}
	}
	return hosts
}

// Interface guards
var _ caddy.AdminRouter = (*adminAPI)(nil)
