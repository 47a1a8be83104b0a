package caddymodule

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/helpdesk-gateway/gateway/openapi"
	"github.com/helpdesk-gateway/gateway/pagequery"
)

// openAPIConfig is what the OpenAPI document needs of the gateway; the
// defaults must have been set.
func (g *Gateway) openAPIConfig() openapi.Config {
	order, _ := cursor.ParseOrder(g.IDOrder)
	sort, _ := url.ParseQuery(g.BackendSort)
	return openapi.Config{
		BasePath:        g.BasePath,
		CursorEndpoints: g.CursorEndpoints,
		FilterEndpoints: g.FilterEndpoints,
		IDField:         g.IDField,
		RecordsPath:     g.RecordsPath,
		IDOrder:         order,
		BackendSort:     sort,
		DefaultPerPage:  g.DefaultPerPage,
		MaxPerPage:      g.MaxPerPage,
		MaxQueryLength:  g.MaxQueryLength,
		LinkHeader:      g.LinkHeader,
		BackendParams:   pagequery.BackendOnly(g.backendDialect()),
		Filters:         g.filterConfig(),
	}
}

// serveOpenAPI answers GET and HEAD at openapi_path with the document made
// at Provision. It is application/json, which every OpenAPI tool, browser
// and jq reads; the OpenAPI media types are not yet as widely understood.
func (g *Gateway) serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(g.openAPIDoc)))
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(g.openAPIDoc)
	}
}

// OpenAPIConfigs finds every helpdesk_gateway handler in a Caddy JSON
// config, wherever it sits in a server's routes (subroutes included), and
// returns, by server name, what the OpenAPI document needs of each, in the
// config's order, with the defaults applied. A handler whose settings are
// not valid is an error naming its server.
func OpenAPIConfigs(caddyJSON []byte) (map[string][]openapi.Config, error) {
	var cfg struct {
		Apps struct {
			HTTP struct {
				Servers map[string]json.RawMessage `json:"servers"`
			} `json:"http"`
		} `json:"apps"`
	}
	if err := json.Unmarshal(caddyJSON, &cfg); err != nil {
		return nil, fmt.Errorf("reading the config: %v", err)
	}
	out := map[string][]openapi.Config{}
	for _, name := range slices.Sorted(maps.Keys(cfg.Apps.HTTP.Servers)) {
		var tree any
		if err := json.Unmarshal(cfg.Apps.HTTP.Servers[name], &tree); err != nil {
			return nil, fmt.Errorf("server %s: %v", name, err)
		}
		var handlers []map[string]any
		findHandlers(tree, &handlers)
		for _, h := range handlers {
			delete(h, "handler") // Caddy's, not an option: Caddy takes it out too
			raw, _ := json.Marshal(h)
			g := new(Gateway)
			if err := json.Unmarshal(raw, g); err != nil {
				return nil, fmt.Errorf("server %s: helpdesk_gateway: %v", name, err)
			}
			g.setDefaults()
			if err := g.Validate(); err != nil {
				return nil, fmt.Errorf("server %s: helpdesk_gateway: %v", name, err)
			}
			out[name] = append(out[name], g.openAPIConfig())
		}
	}
	return out, nil
}

// findHandlers appends every helpdesk_gateway handler under v, depth
// first, in document order.
func findHandlers(v any, found *[]map[string]any) {
	switch v := v.(type) {
	case map[string]any:
		if v["handler"] == "helpdesk_gateway" {
			*found = append(*found, v)
			return
		}
		// Routes are lists, so the order that matters is kept; the keys
		// of one object are walked sorted, for a stable result.
		for _, k := range slices.Sorted(maps.Keys(v)) {
			findHandlers(v[k], found)
		}
	case []any:
		for _, e := range v {
			findHandlers(e, found)
		}
	}
}
