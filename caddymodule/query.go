package caddymodule

import "github.com/helpdesk-gateway/gateway/pagequery"

// parsePageQuery reads a cursor endpoint's raw query (pagequery.Parse)
// with the settings Provision read.
func (g *Gateway) parsePageQuery(raw string) (pagequery.Query, error) {
	return pagequery.Parse(raw, &pagequery.Settings{
		IDField:        g.IDField,
		DefaultPerPage: g.DefaultPerPage,
		MaxPerPage:     g.MaxPerPage,
		MaxQueryLength: g.MaxQueryLength,
		SortParams:     g.sortParams,
		BackendOnly:    g.backendOnly,
		ShadowNames:    g.shadowNames,
	})
}
