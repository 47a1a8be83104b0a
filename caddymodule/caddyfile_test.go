package caddymodule

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUnmarshalCaddyfileOptions(t *testing.T) {
	for _, tc := range []struct {
		option string
		want   Gateway
	}{
		{"base_path /api/v3", Gateway{BasePath: "/api/v3"}},
		{"cursor_endpoints /calls /phone_numbers", Gateway{CursorEndpoints: []string{"/calls", "/phone_numbers"}}},
		{"filter_endpoints /tickets /v2/tickets", Gateway{FilterEndpoints: []string{"/tickets", "/v2/tickets"}}},
		{"id_field meta.id", Gateway{IDField: "meta.id"}},
		{"records_path data", Gateway{RecordsPath: "data"}},
		{"id_order lexical", Gateway{IDOrder: "lexical"}},
		{"id_order numeric", Gateway{IDOrder: "numeric"}},
		{"backend_sort _sort=id&_order=asc", Gateway{BackendSort: "_sort=id&_order=asc"}},
		{"default_per_page 25", Gateway{DefaultPerPage: 25}},
		{"max_per_page 500", Gateway{MaxPerPage: 500}},
		{"backend_max_per_page 200", Gateway{BackendMaxPerPage: 200}},
		{"index_size 5000", Gateway{IndexSize: 5000}},
		{"index_size -1", Gateway{IndexSize: -1}},
		{"max_body_size 16MiB", Gateway{MaxBodySize: 16 << 20}},
		{"max_body_size 4096", Gateway{MaxBodySize: 4096}},
		{"max_subrequests 10", Gateway{MaxSubrequests: 10}},
		{"max_query_length 4KiB", Gateway{MaxQueryLength: 4096}},
		{"max_filters 5", Gateway{MaxFilters: 5}},
		{"max_filters_length 1KB", Gateway{MaxFiltersLength: 1000}},
		{"status_codes open pending", Gateway{StatusCodes: []string{"open", "pending"}}},
		{"channel_types email phone", Gateway{ChannelTypes: []string{"email", "phone"}}},
		{"period_codes today yesterday", Gateway{PeriodCodes: []string{"today", "yesterday"}}},
	} {
		t.Run(tc.option, func(t *testing.T) {
			var g Gateway
			d := caddyfile.NewTestDispenser("helpdesk_gateway {\n" + tc.option + "\n}")
			require.NoError(t, g.UnmarshalCaddyfile(d))
			assert.Equal(t, tc.want, g)
		})
	}
}

func TestUnmarshalCaddyfileErrors(t *testing.T) {
	for _, tc := range []struct{ input, want string }{
		{"helpdesk_gateway arg", "wrong argument count"},
		{"helpdesk_gateway {\n\n\tbogus 1\n}", `unknown option "bogus", at Testfile:3`},
		{"helpdesk_gateway {\n\tdefault_per_page ten\n}", `default_per_page: "ten" is not a whole number, at Testfile:2`},
		{"helpdesk_gateway {\n\tmax_per_page 0\n}", "max_per_page: 0 is below the minimum of 1, at Testfile:2"},
		{"helpdesk_gateway {\n\tbackend_max_per_page 10\n}", "backend_max_per_page: 10 is below the minimum of 25"},
		{"helpdesk_gateway {\n\tindex_size 1.5\n}", `index_size: "1.5" is not a whole number`},
		{"helpdesk_gateway {\n\tid_order random\n}", `id_order: "random" is not numeric or lexical, at Testfile:2`},
		{"helpdesk_gateway {\n\tmax_body_size lots\n}", `max_body_size: "lots" is not a size`},
		{"helpdesk_gateway {\n\tmax_body_size 0\n}", `max_body_size: "0" is not a size`},
		{"helpdesk_gateway {\n\tbase_path\n}", "base_path: a value is needed"},
		{"helpdesk_gateway {\n\tid_field a b\n}", `id_field: one value only, got also "b"`},
		{"helpdesk_gateway {\n\tcursor_endpoints\n}", "cursor_endpoints: at least one path is needed"},
		{"helpdesk_gateway {\n\tfilter_endpoints\n}", "filter_endpoints: at least one path is needed"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			var g Gateway
			err := g.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tc.input))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestProvisionValidates(t *testing.T) {
	for _, tc := range []struct {
		g    Gateway
		want string
	}{
		{Gateway{BasePath: "api"}, "base_path"},
		{Gateway{BasePath: "/api/"}, "base_path"},
		{Gateway{CursorEndpoints: []string{"calls"}}, "cursor_endpoints"},
		{Gateway{CursorEndpoints: []string{"/calls"}, FilterEndpoints: []string{"/calls"}}, "already listed"},
		{Gateway{IDOrder: "random"}, "id_order"},
		{Gateway{DefaultPerPage: 50, MaxPerPage: 20}, "default_per_page: 50 is out of range [1, 20]"},
		{Gateway{BackendMaxPerPage: 3}, "backend_max_per_page"},
		{Gateway{IndexSize: -2}, "index_size"},
		{Gateway{MaxBodySize: 10}, "max_body_size"},
		{Gateway{BackendSort: "a=%zz"}, "backend_sort"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			ctx, cancel := caddy.NewContext(caddy.Context{Context: t.Context()})
			defer cancel()
			err := tc.g.Provision(ctx)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestAdaptShowsJSON checks what `caddy adapt` prints: every option as its
// JSON twin, and the gateway placed before reverse_proxy with no order option.
func TestAdaptShowsJSON(t *testing.T) {
	input := `:8080 {
	reverse_proxy 127.0.0.1:9080
	helpdesk_gateway {
		base_path            /api/v3
		cursor_endpoints     /calls /phone_numbers
		filter_endpoints     /tickets
		id_field             id
		records_path         data
		id_order             lexical
		backend_sort         _sortField=id&_sortDir=ASC
		default_per_page     20
		max_per_page         500
		backend_max_per_page 250
		index_size           1000
		max_body_size        1MiB
		max_subrequests      16
		status_codes         open closed
	}
}`
	out, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(input), nil)
	require.NoError(t, err)
	var cfg struct {
		Apps struct {
			HTTP struct {
				Servers map[string]struct {
					Routes []struct {
						Handle []map[string]any
					}
				}
			}
		}
	}
	require.NoError(t, json.Unmarshal(out, &cfg))
	handlers := cfg.Apps.HTTP.Servers["srv0"].Routes[0].Handle
	require.Len(t, handlers, 2)
	assert.Equal(t, "helpdesk_gateway", handlers[0]["handler"], "gateway first")
	assert.Equal(t, "reverse_proxy", handlers[1]["handler"])
	gw, _ := json.Marshal(handlers[0])
	assert.JSONEq(t, `{
		"handler": "helpdesk_gateway",
		"base_path": "/api/v3",
		"cursor_endpoints": ["/calls", "/phone_numbers"],
		"filter_endpoints": ["/tickets"],
		"id_field": "id",
		"records_path": "data",
		"id_order": "lexical",
		"backend_sort": "_sortField=id\u0026_sortDir=ASC",
		"default_per_page": 20,
		"max_per_page": 500,
		"backend_max_per_page": 250,
		"index_size": 1000,
		"max_body_size": 1048576,
		"max_subrequests": 16,
		"status_codes": ["open", "closed"]
	}`, string(gw))
	assert.True(t, strings.Contains(string(out), `"helpdesk_gateway"`))
}

// TestModulesRegistered is what `caddy list-modules` shows of ours.
func TestModulesRegistered(t *testing.T) {
	for _, id := range []string{"http.handlers.helpdesk_gateway", "http.handlers.helpdesk_legacy"} {
		info, err := caddy.GetModule(id)
		require.NoError(t, err, id)
		assert.NotNil(t, info.New())
	}
}

func TestLegacyCaddyfile(t *testing.T) {
	var l LegacyBackend
	require.NoError(t, l.UnmarshalCaddyfile(caddyfile.NewTestDispenser(`helpdesk_legacy {
		seed 7
		records 500
		max_per_page 200
		base_path /api
		envelope data
		churn 2.5
	}`)))
	assert.Equal(t, LegacyBackend{Seed: 7, Records: 500, MaxPerPage: 200, BasePath: "/api", Envelope: "data", Churn: 2.5}, l)
	for _, bad := range []string{"seed -1", "records x", "max_per_page 0", "churn -1", "bogus 1"} {
		err := new(LegacyBackend).UnmarshalCaddyfile(caddyfile.NewTestDispenser("helpdesk_legacy {\n" + bad + "\n}"))
		assert.ErrorContains(t, err, "Testfile:2", bad)
	}
}

// TestShippedCaddyfilesValidate is `caddy validate` on the repository's
// default and production Caddyfiles: they adapt without warnings and every
// module provisions.
func TestShippedCaddyfilesValidate(t *testing.T) {
	for _, name := range []string{"Caddyfile", "Caddyfile.production"} {
		t.Run(name, func(t *testing.T) {
			text, err := os.ReadFile("../" + name)
			require.NoError(t, err)
			cfg, warnings, err := caddyconfig.GetAdapter("caddyfile").Adapt(text, map[string]any{"filename": name})
			require.NoError(t, err)
			assert.Empty(t, warnings, "formatted and clean")
			require.NoError(t, caddy.Validate(mustConfig(t, cfg)))
		})
	}
}

func mustConfig(t *testing.T, raw []byte) *caddy.Config {
	t.Helper()
	var cfg caddy.Config
	require.NoError(t, json.Unmarshal(raw, &cfg))
	return &cfg
}
