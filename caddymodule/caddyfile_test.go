package caddymodule

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/legacy"
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
		{"caller_key {http.auth.user.id} tenant-{http.vars.tenant}", Gateway{CallerKey: []string{"{http.auth.user.id}", "tenant-{http.vars.tenant}"}}},
		{"caller_key {http.auth.user.id}\n\tcaller_key {http.vars.tenant}", Gateway{CallerKey: []string{"{http.auth.user.id}", "{http.vars.tenant}"}}},
		{"index_size -1", Gateway{IndexSize: -1}},
		{"max_body_size 16MiB", Gateway{MaxBodySize: 16 << 20}},
		{"max_body_size 4096", Gateway{MaxBodySize: 4096}},
		{"max_subrequests 10", Gateway{MaxSubrequests: 10}},
		{"max_query_length 4KiB", Gateway{MaxQueryLength: 4096}},
		{"max_filters 5", Gateway{MaxFilters: 5}},
		{"max_filters_length 1KB", Gateway{MaxFiltersLength: 1000}},
		{"status_codes C L", Gateway{StatusCodes: []string{"C", "L"}}},
		{"channel_types E C", Gateway{ChannelTypes: []string{"E", "C"}}},
		{"period_codes T Y", Gateway{PeriodCodes: []string{"T", "Y"}}},
		{"drop_backend_headers Link X-Page-Token", Gateway{DropBackendHeaders: []string{"Link", "X-Page-Token"}}},
		{"drop_envelope_members page per_page _links", Gateway{DropEnvelopeMembers: []string{"page", "per_page", "_links"}}},
		{"records_path data\ndrop_envelope_members page", Gateway{RecordsPath: "data", DropEnvelopeMembers: []string{"page"}}},
		{"link_header", Gateway{LinkHeader: true}},
		{"openapi_path /openapi.json", Gateway{OpenAPIPath: "/openapi.json"}},
	} {
		t.Run(tc.option, func(t *testing.T) {
			var g Gateway
			d := caddyfile.NewTestDispenser("helpdesk_gateway {\n" + tc.option + "\n}")
			require.NoError(t, g.UnmarshalCaddyfile(d))
			assert.Equal(t, tc.want, g)
		})
	}
}

// TestUnmarshalCaddyfileErrors: every kind of mistake is reported with the
// option at fault and the line it is on.
func TestUnmarshalCaddyfileErrors(t *testing.T) {
	for _, tc := range []struct{ input, want string }{
		{"helpdesk_gateway arg", "wrong argument count"},
		// unknown option
		{"helpdesk_gateway {\n\n\tbogus 1\n}", `unknown option "bogus", at Testfile:3`},
		{"helpdesk_gateway {\n\tcaller_key\n}", "caller_key: at least one placeholder is needed, such as {http.auth.user.id}, at Testfile:2"},
		{"helpdesk_gateway {\n\n\tcaller_key {http.auth.user.id} tenant\n}", `caller_key: "tenant" holds no placeholder such as {http.auth.user.id} or {http.vars.tenant}; a constant is the same for every caller, at Testfile:3`},
		{"helpdesk_gateway {\n\tbase_path /a\n\tmax_per_pages 10\n}", `unknown option "max_per_pages", at Testfile:3`},
		// bad numbers, each numeric option
		{"helpdesk_gateway {\n\tdefault_per_page ten\n}", `default_per_page: "ten" is not a whole number, at Testfile:2`},
		{"helpdesk_gateway {\n\tmax_per_page 0\n}", "max_per_page: 0 is below the minimum of 1, at Testfile:2"},
		{"helpdesk_gateway {\n\tmax_per_page 2000000\n}", "max_per_page: 2000000 is above the maximum of 1048576, at Testfile:2"},
		{"helpdesk_gateway {\n\tbackend_max_per_page 10\n}", "backend_max_per_page: 10 is below the minimum of 25, at Testfile:2"},
		{"helpdesk_gateway {\n\tindex_size 1.5\n}", `index_size: "1.5" is not a whole number, at Testfile:2`},
		{"helpdesk_gateway {\n\tindex_size -2\n}", "index_size: -2 is below the minimum of -1, at Testfile:2"},
		{"helpdesk_gateway {\n\tindex_size 0\n}", "index_size: 0 would mean the default; use -1 to turn it off, or leave the option out, at Testfile:2"},
		{"helpdesk_gateway {\n\tmax_subrequests 0x10\n}", `max_subrequests: "0x10" is not a whole number, at Testfile:2`},
		{"helpdesk_gateway {\n\tmax_subrequests 100000\n}", "max_subrequests: 100000 is above the maximum of 65536, at Testfile:2"},
		{"helpdesk_gateway {\n\tmax_filters 0\n}", "max_filters: 0 is below the minimum of 1, at Testfile:2"},
		{"helpdesk_gateway {\n\tmax_filters -5\n}", "max_filters: -5 is below the minimum of 1, at Testfile:2"},
		{"helpdesk_gateway {\n\tdefault_per_page 50\n\tmax_per_page 20\n}", "default_per_page: 50 is above max_per_page (20), at Testfile:2"},
		{"helpdesk_gateway {\n\tbase_path /a\n\tdefault_per_page 5000\n}", "default_per_page: 5000 is above max_per_page (1000), at Testfile:3"},
		// bad id_order
		{"helpdesk_gateway {\n\tid_order random\n}", `id_order: "random" is not numeric or lexical, at Testfile:2`},
		{"helpdesk_gateway {\n\tid_order Numeric\n}", `id_order: "Numeric" is not numeric or lexical, at Testfile:2`},
		{"helpdesk_gateway {\n\topenapi_path openapi.json\n}", `openapi_path: "openapi.json" must be a path starting with /, at Testfile:2`},
		// bad sizes, each size option
		{"helpdesk_gateway {\n\tmax_body_size lots\n}", `max_body_size: "lots" is not a size such as 16MiB or 4096, at Testfile:2`},
		{"helpdesk_gateway {\n\tmax_body_size 0\n}", `max_body_size: "0" is not a size such as 16MiB or 4096, at Testfile:2`},
		{"helpdesk_gateway {\n\tmax_body_size 10\n}", "max_body_size: 10 is below the minimum of 1.0 KiB, at Testfile:2"},
		{"helpdesk_gateway {\n\tmax_body_size 2TiB\n}", "max_body_size: 2TiB is above the maximum of 1.0 TiB, at Testfile:2"},
		{"helpdesk_gateway {\n\tmax_query_length 100\n}", "max_query_length: 100 is below the minimum of 256 B, at Testfile:2"},
		{"helpdesk_gateway {\n\tmax_query_length -1KiB\n}", `max_query_length: "-1KiB" is not a size such as 16MiB or 4096, at Testfile:2`},
		{"helpdesk_gateway {\n\tmax_filters_length 2MiB\n}", "max_filters_length: 2MiB is above the maximum of 1.0 MiB, at Testfile:2"},
		// values missing or too many
		{"helpdesk_gateway {\n\tbase_path\n}", "base_path: a value is needed, at Testfile:2"},
		{"helpdesk_gateway {\n\tid_field a b\n}", `id_field: one value only, got also "b", at Testfile:2`},
		{"helpdesk_gateway {\n\tmax_per_page\n}", "max_per_page: a value is needed, at Testfile:2"},
		{"helpdesk_gateway {\n\tmax_body_size 1MiB 2MiB\n}", `max_body_size: one value only, got also "2MiB", at Testfile:2`},
		{"helpdesk_gateway {\n\tcursor_endpoints\n}", "cursor_endpoints: at least one path is needed, at Testfile:2"},
		{"helpdesk_gateway {\n\tfilter_endpoints\n}", "filter_endpoints: at least one path is needed, at Testfile:2"},
		{"helpdesk_gateway {\n\tdrop_backend_headers\n}", "drop_backend_headers: at least one header name is needed, at Testfile:2"},
		{"helpdesk_gateway {\n\tdrop_backend_headers Link X-Page:\n}", `drop_backend_headers: "X-Page:" is not a header name, at Testfile:2`},
		{"helpdesk_gateway {\n\tdrop_envelope_members\n}", "drop_envelope_members: at least one member name is needed, at Testfile:2"},
		{"helpdesk_gateway {\n\tdrop_envelope_members page \"\"\n}", `drop_envelope_members: "" is not a member name, at Testfile:2`},
		{"helpdesk_gateway {\n\tdrop_envelope_members page data\n\trecords_path data\n}", `drop_envelope_members: "data" holds the records (records_path "data"); it is never dropped, so leave it out, at Testfile:2`},
		{"helpdesk_gateway {\n\trecords_path result.items\n\tdrop_envelope_members result\n}", `drop_envelope_members: "result" holds the records (records_path "result.items")`},
		{"helpdesk_gateway {\n\tlink_header on\n}", "link_header takes no value: write it alone to turn the Link header on, at Testfile:2"},
		// empty values, absurd durations, and Validate's checks with the line (issue 41)
		{"helpdesk_gateway {\n\tid_field \"\"\n}", "id_field: the value is empty; leave the option out for its default, at Testfile:2"},
		{"helpdesk_gateway {\n\treadahead_ttl 90m\n}", "readahead_ttl: 1h30m0s is above 1h0m0s; a window serves pages as old as this, and a few seconds (the default is 2s) is what read-ahead needs, at Testfile:2"},
		{"helpdesk_gateway {\n\treadahead_store_timeout 11s\n}", "readahead_store_timeout: 11s is above 10s; a store call slower than a backend call saves nothing, at Testfile:2"},
		{"helpdesk_gateway {\n\tbase_path /a\n\treadahead_store_key 0123456789abcdef-shared-secret\n}", "readahead_store_key: set without readahead_store, so nothing would use it; set readahead_store too (each instance then shares its walks), or remove readahead_store_key, at Testfile:3"},
		{"helpdesk_gateway {\n\treadahead_store redis://127.0.0.1:1/0\n\treadahead_store_key 15-bytes-only!!\n}", "readahead_store_key: 15 bytes; at least 16 are needed, such as the output of `openssl rand -hex 32`, the same on every instance, at Testfile:3"},
		{"helpdesk_gateway {\n\tbase_path api\n}", `base_path "api": must start with / and not end with /, at Testfile:2`},
		{"helpdesk_gateway {\n\tmax_per_page 5\n\tfilter_endpoints /calls\n}", `filter_endpoints: "/calls" is already listed in cursor_endpoints, at Testfile:3`},
		{"helpdesk_gateway {\n\tcursor_endpoints /calls /Calls/\n}", `cursor_endpoints: endpoints "/calls" and "/Calls/" are one path to Caddy's path matcher`},
	} {
		t.Run(tc.want, func(t *testing.T) {
			var g Gateway
			err := g.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tc.input))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestCaddyfileErrorsNameFileAndLine is what `caddy adapt` and `caddy
// validate` print for a wrong option in a whole Caddyfile.
func TestCaddyfileErrorsNameFileAndLine(t *testing.T) {
	for _, tc := range []struct{ option, want string }{
		{"bogus 1", `unknown option "bogus", at Caddyfile:6`},
		{"max_per_page many", `max_per_page: "many" is not a whole number, at Caddyfile:6`},
		{"id_order by_date", `id_order: "by_date" is not numeric or lexical, at Caddyfile:6`},
		{"max_body_size 3", "max_body_size: 3 is below the minimum of 1.0 KiB, at Caddyfile:6"},
	} {
		t.Run(tc.option, func(t *testing.T) {
			input := ":8080 {\n\treverse_proxy 127.0.0.1:9080\n\thelpdesk_gateway {\n\t\tbase_path /api\n\t\tmax_filters 5\n\t\t" + tc.option + "\n\t}\n}\n"
			_, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(input), map[string]any{"filename": "Caddyfile"})
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
		{Gateway{DefaultPerPage: 50, MaxPerPage: 20}, "default_per_page: 50 is above max_per_page (20)"},
		{Gateway{MaxPerPage: 1 << 21}, "max_per_page: 2097152 is out of range [1, 1048576]"},
		{Gateway{MaxSubrequests: -1}, "max_subrequests: -1 is out of range [1, 65536]"},
		{Gateway{MaxQueryLength: 100}, "max_query_length: 100 is out of range [256, 1048576]"},
		{Gateway{MaxFilters: 1 << 17}, "max_filters"},
		{Gateway{MaxFiltersLength: 1 << 21}, "max_filters_length"},
		{Gateway{BackendMaxPerPage: 3}, "backend_max_per_page"},
		{Gateway{IndexSize: -2}, "index_size"},
		{Gateway{MaxBodySize: 10}, "max_body_size: 10 is out of range [1024, 1099511627776]"},
		{Gateway{BackendSort: "a=%zz"}, "backend_sort"},
		{Gateway{DropBackendHeaders: []string{"Link", "X Page"}}, `drop_backend_headers: "X Page" is not a header name`},
		{Gateway{DropEnvelopeMembers: []string{"page", ""}}, `drop_envelope_members: "" is not a member name`},
		{Gateway{DropEnvelopeMembers: []string{"page\xff"}}, `drop_envelope_members: "page\xff" is not a member name`},
		{Gateway{RecordsPath: "data", DropEnvelopeMembers: []string{"data"}}, `drop_envelope_members: "data" holds the records`},
		{Gateway{OpenAPIPath: "openapi.json"}, "openapi_path"},
		{Gateway{BasePath: "/api", OpenAPIPath: "/api/calls"}, `openapi_path "/api/calls": is already an endpoint of cursor_endpoints`},
		{Gateway{CursorEndpoints: []string{"/calls"}, FilterEndpoints: []string{"/Calls/"}}, `endpoints "/calls" and "/Calls/" are one path to Caddy's path matcher`},
		{Gateway{CallerKey: []string{"tenant"}}, `caller_key: "tenant" holds no placeholder`},
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

// TestAdaptShowsJSON checks what `caddy adapt` prints: every option (all
// twenty-three) as its JSON twin, and the gateway placed before reverse_proxy
// with no order option.
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
		max_query_length     4KiB
		max_filters          5
		max_filters_length   1KiB
		status_codes         C L
		channel_types        E C
		period_codes         T L7D
		drop_backend_headers Link X-Page
		drop_envelope_members page per_page next
		link_header
		openapi_path         /openapi.json
		caller_key           {vars.tenant} {header.X-Tenant}
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
		"caller_key": ["{http.vars.tenant}", "{http.request.header.X-Tenant}"],
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
		"max_query_length": 4096,
		"max_filters": 5,
		"max_filters_length": 1024,
		"status_codes": ["C", "L"],
		"channel_types": ["E", "C"],
		"period_codes": ["T", "L7D"],
		"drop_backend_headers": ["Link", "X-Page"],
		"drop_envelope_members": ["page", "per_page", "next"],
		"link_header": true,
		"openapi_path": "/openapi.json"
	}`, string(gw))
	assert.True(t, strings.Contains(string(out), `"helpdesk_gateway"`))
}

// TestModulesRegistered is what `caddy list-modules` shows of ours.
func TestModulesRegistered(t *testing.T) {
	for _, id := range []string{"http.handlers.helpdesk_gateway"} {
		info, err := caddy.GetModule(id)
		require.NoError(t, err, id)
		assert.NotNil(t, info.New())
	}
}

// TestShippedCaddyfilesValidate is `caddy validate` on the repository's
// default and production Caddyfiles: they adapt without warnings and every
// module provisions.
func TestShippedCaddyfilesValidate(t *testing.T) {
	for _, name := range []string{"Caddyfile", "Caddyfile.production", "Caddyfile.page-per-page", "Caddyfile.offset-limit", "Caddyfile.keyset"} {
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

// TestDropEnvelopeMembersDefault: by default the common paging names and
// the backend's own paging names are dropped, never the member that holds
// the records; a list given replaces the default, and an empty JSON list
// drops nothing.
func TestDropEnvelopeMembersDefault(t *testing.T) {
	provision := func(g *Gateway) *Gateway {
		ctx, cancel := caddy.NewContext(caddy.Context{Context: t.Context()})
		t.Cleanup(cancel)
		require.NoError(t, g.Provision(ctx))
		return g
	}
	g := provision(&Gateway{RecordsPath: "data"})
	for _, name := range []string{"page", "per_page", "perPage", "page_size", "pageSize", "offset", "limit", "total_pages", "totalPages",
		"next", "next_page", "nextPage", "prev", "previous", "prev_page", "prevPage", "_page", "_perPage"} {
		assert.True(t, g.dropMembers[name], name)
	}
	for _, name := range []string{"data", "total", "totalItems", "count", "Page"} {
		assert.False(t, g.dropMembers[name], name)
	}

	g = provision(&Gateway{RecordsPath: "items", BackendOffsetParam: "start", BackendPerPageParam: "max"})
	assert.True(t, g.dropMembers["start"])
	assert.True(t, g.dropMembers["max"])
	g = provision(&Gateway{RecordsPath: "next.items"})
	assert.False(t, g.dropMembers["next"], "the member holding the records is never a default")

	g = provision(&Gateway{RecordsPath: "data", DropEnvelopeMembers: []string{"cursor"}})
	assert.Equal(t, legacy.Members{"cursor": true}, g.dropMembers)
	g = provision(&Gateway{RecordsPath: "data", DropEnvelopeMembers: []string{}})
	assert.Empty(t, g.dropMembers)
}

// TestPurgeInterval: the timer runs at half the TTL, never more often
// than minPurgeInterval, whatever TTL is configured.
func TestPurgeInterval(t *testing.T) {
	for ttl, want := range map[time.Duration]time.Duration{
		2 * time.Second:        time.Second,
		time.Millisecond:       minPurgeInterval,
		time.Nanosecond:        minPurgeInterval,
		200 * time.Millisecond: minPurgeInterval,
		time.Minute:            30 * time.Second,
	} {
		assert.Equal(t, want, purgeInterval(ttl), ttl)
	}
}
