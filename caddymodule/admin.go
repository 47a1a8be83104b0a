package caddymodule

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"sync"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/helpdesk-gateway/gateway/adminreport"
	"github.com/helpdesk-gateway/gateway/learnedlimit"
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

// handleEndpoints reports the running gateways.
func (adminAPI) handleEndpoints(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodGet {
		return caddy.APIError{
			HTTPStatus: http.StatusMethodNotAllowed,
			Err:        fmt.Errorf("method not allowed"),
		}
	}
	report := adminreport.Document{Gateways: []adminreport.Gateway{}}
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
func (g *Gateway) report(s site) adminreport.Gateway {
	gr := adminreport.Gateway{
		Server:    s.server,
		Listen:    s.listen,
		Hosts:     s.hosts,
		BasePath:  g.BasePath,
		Loaded:    g.loaded,
		Endpoints: make([]adminreport.Endpoint, 0, len(g.endpoints)),
	}
	if g.deploy != nil {
		d := g.deploy.known.Load()
		if d == nil && g.configRunning() {
			d = g.deployment()
		}
		if d != nil {
			gr.Deployment = &adminreport.Deployment{Fingerprint: d.short(), Name: g.Deployment, Unknown: d.unknown}
		}
	}
	ws := g.windows.Stats()
	gr.Readahead = adminreport.Readahead{
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
		er := adminreport.Endpoint{Path: g.BasePath + name, Kind: "filter"}
		if ep.cursor {
			er.Kind = "cursor"
			limit, learned, counts := ep.backendLimit(g.BackendMaxPerPage)
			er.BackendPageLimit, er.BackendPageLimitSource = limit, "configured"
			er.LearnedPageLimits = counts
			if learned {
				er.BackendPageLimitSource = "learned"
			}
			lists, samples := ep.engine.Index.Stats()
			er.Index = &adminreport.Index{Lists: lists, Samples: samples, IndexSize: g.IndexSize}
			er.Pages = ep.counts.Report()
			if !g.dialect.Keysets() {
				er.OffsetCost = adminreport.NewOffsetCost(ep.engine.Index.Extent(), limit, g.windows.TTL() > 0, er.Pages)
			}
		}
		gr.Endpoints = append(gr.Endpoints, er)
	}
	return gr
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
