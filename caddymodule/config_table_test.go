package caddymodule

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// badConfig is one mistake in one option family, written in a Caddyfile
// block and as the handler's JSON.
type badConfig struct {
	option string // the option the error must name
	module string // the handler: helpdesk_gateway when empty
	// block is the Caddyfile block's lines; line is the one the error
	// names (1 is the block's first), or 0 when the Caddyfile adapts and
	// only Provision can tell (placeholders replaced).
	block string
	line  int
	// json is the handler's members with the same mistake, or "" when
	// JSON cannot make it (an empty Caddyfile value, say).
	json string
}

// badConfigs: one case per option family of the gateway and of the
// reference backend, and the store's mistakes of issue 41. Never a real
// store: the URLs name a closed port, and a refused config is refused
// before any connection.
var badConfigs = []badConfig{
	// Options that do not exist, in either module.
	{option: `"bogus"`, block: "bogus 1", line: 1, json: `"bogus": 1`},
	{option: `"max_per_pages"`, block: "base_path /a\nmax_per_pages 10", line: 2, json: `"max_per_pages": 10`},
	// Paths.
	{option: "base_path", block: "base_path api", line: 1, json: `"base_path": "api"`},
	{option: "base_path", block: "base_path /api/", line: 1, json: `"base_path": "/api/"`},
	{option: "cursor_endpoints", block: "cursor_endpoints calls", line: 1, json: `"cursor_endpoints": ["calls"]`},
	{option: "cursor_endpoints", block: "cursor_endpoints /calls /Calls", line: 1, json: `"cursor_endpoints": ["/calls", "/Calls"]`},
	{option: "filter_endpoints", block: "filter_endpoints /calls", line: 1, json: `"filter_endpoints": ["/calls"]`},
	{option: "openapi_path", block: "openapi_path openapi.json", line: 1, json: `"openapi_path": "openapi.json"`},
	{option: "openapi_path", block: "openapi_path /calls", line: 1, json: `"openapi_path": "/calls"`},
	// Records.
	{option: "id_field", block: `id_field ""`, line: 1},
	{option: "records_path", block: `records_path ""`, line: 1},
	{option: "id_order", block: "id_order random", line: 1, json: `"id_order": "random"`},
	{option: "backend_sort", block: "backend_sort a=%zz", line: 1, json: `"backend_sort": "a=%zz"`},
	{option: "drop_backend_headers", block: "drop_backend_headers Link X:Page", line: 1, json: `"drop_backend_headers": ["Link", "X:Page"]`},
	{option: "drop_envelope_members", block: "drop_envelope_members data\nrecords_path data", line: 1, json: `"records_path": "data", "drop_envelope_members": ["data"]`},
	{option: "link_header", block: "link_header on", line: 1, json: `"link_header": "on"`},
	{option: "caller_key", block: "caller_key tenant", line: 1, json: `"caller_key": ["tenant"]`},
	{option: "status_codes", block: "status_codes C,L", line: 1, json: `"status_codes": ["C,L"]`},
	{option: "channel_types", block: "channel_types", line: 1, json: `"channel_types": [""]`},
	{option: "period_codes", block: `period_codes T "L 7D"`, line: 1, json: `"period_codes": ["T", "L 7D"]`},
	// Page sizes.
	{option: "default_per_page", block: "default_per_page 0", line: 1, json: `"default_per_page": -1`},
	{option: "default_per_page", block: "default_per_page 50\nmax_per_page 20", line: 1, json: `"default_per_page": 50, "max_per_page": 20`},
	{option: "default_per_page", block: "default_per_page 2000", line: 1, json: `"default_per_page": 2000`},
	{option: "max_per_page", block: "max_per_page -3", line: 1, json: `"max_per_page": -3`},
	{option: "max_per_page", block: "max_per_page 2000000", line: 1, json: `"max_per_page": 2000000`},
	{option: "backend_max_per_page", block: "backend_max_per_page 24", line: 1, json: `"backend_max_per_page": 24`},
	{option: "backend_max_per_page", block: "backend_max_per_page many", line: 1, json: `"backend_max_per_page": "many"`},
	// Bounds and sizes.
	{option: "index_size", block: "index_size -2", line: 1, json: `"index_size": -2`},
	{option: "max_body_size", block: "max_body_size 10", line: 1, json: `"max_body_size": 10`},
	{option: "max_body_size", block: "max_body_size lots", line: 1, json: `"max_body_size": "lots"`},
	{option: "max_subrequests", block: "max_subrequests 0", line: 1, json: `"max_subrequests": -1`},
	{option: "max_query_length", block: "max_query_length 100", line: 1, json: `"max_query_length": 100`},
	{option: "max_filters", block: "max_filters 0", line: 1, json: `"max_filters": -1`},
	{option: "max_filters_length", block: "max_filters_length 2MiB", line: 1, json: `"max_filters_length": 2097152`},
	{option: "readahead_memory", block: "readahead_memory 10", line: 1, json: `"readahead_memory": 10`},
	{option: "readahead_memory", block: "readahead_memory 2TiB", line: 1, json: `"readahead_memory": -1`},
	// Durations.
	{option: "readahead_ttl", block: "readahead_ttl -1s", line: 1, json: `"readahead_ttl": -1000000000`},
	{option: "readahead_ttl", block: "readahead_ttl soon", line: 1, json: `"readahead_ttl": "soon"`},
	{option: "readahead_ttl", block: "readahead_ttl 2h", line: 1, json: `"readahead_ttl": "2h"`},
	{option: "readahead_store_timeout", block: "readahead_store_timeout 0", line: 1, json: `"readahead_store_timeout": -1`},
	{option: "readahead_store_timeout", block: "readahead_store_timeout 1m", line: 1, json: `"readahead_store_timeout": "1m"`},
	// The backend's dialect.
	{option: "backend_page_param", block: "backend_page_param a&b", line: 1, json: `"backend_page_param": "a&b"`},
	{option: "backend_per_page_param", block: "backend_per_page_param _page", line: 1, json: `"backend_per_page_param": "_page"`},
	{option: "backend_first_page", block: "backend_first_page 2", line: 1, json: `"backend_first_page": 2`},
	{option: "backend_offset_param", block: "backend_offset_param offset\nbackend_page_param page", line: 2, json: `"backend_offset_param": "offset", "backend_page_param": "page"`},
	{option: "backend_keyset", block: "backend_keyset id_gt=1", line: 1, json: `"backend_keyset": "id_gt=1"`},
	{option: "backend_keyset", block: "backend_keyset _page={id}", line: 1, json: `"backend_keyset": "_page={id}"`},
	// The shared store.
	{option: "readahead_store", block: "readahead_store http://127.0.0.1:1\nreadahead_store_key " + storeKey, line: 1, json: `"readahead_store": "http://127.0.0.1:1", "readahead_store_key": "` + storeKey + `"`},
	{option: "readahead_store", block: "readahead_store {env.HELPDESK_CFGTEST_UNSET}\nreadahead_store_key " + storeKey, json: `"readahead_store": "{env.HELPDESK_CFGTEST_UNSET}", "readahead_store_key": "` + storeKey + `"`},
	{option: "readahead_store_key", block: "readahead_store redis://127.0.0.1:1/0", line: 1, json: `"readahead_store": "redis://127.0.0.1:1/0"`},
	{option: "readahead_store_key", block: "readahead_store redis://127.0.0.1:1/0\nreadahead_store_key too-short", line: 2, json: `"readahead_store": "redis://127.0.0.1:1/0", "readahead_store_key": "too-short"`},
	{option: "readahead_store_key", block: "readahead_store redis://127.0.0.1:1/0\nreadahead_store_key {env.HELPDESK_CFGTEST_SHORT}", json: `"readahead_store": "redis://127.0.0.1:1/0", "readahead_store_key": "{env.HELPDESK_CFGTEST_SHORT}"`},
	{option: "readahead_store_key", block: "readahead_store redis://127.0.0.1:1/0\nreadahead_store_key {env.HELPDESK_CFGTEST_UNSET}", json: `"readahead_store": "redis://127.0.0.1:1/0", "readahead_store_key": "{env.HELPDESK_CFGTEST_UNSET}"`},
	{option: "readahead_store_key", block: "readahead_store_key " + storeKey, line: 1, json: `"readahead_store_key": "` + storeKey + `"`},
	{option: "readahead_store_key", block: "readahead_store_key {env.HELPDESK_CFGTEST_KEY}", line: 1, json: `"readahead_store_key": "{env.HELPDESK_CFGTEST_KEY}"`},

	// The reference backend, helpdesk_legacy.
	{module: "helpdesk_legacy", option: `"bogus"`, block: "bogus 1", line: 1, json: `"bogus": 1`},
	{module: "helpdesk_legacy", option: "seed", block: "seed -1", line: 1, json: `"seed": -1`},
	{module: "helpdesk_legacy", option: "records", block: "records x", line: 1, json: `"records": -1`},
	{module: "helpdesk_legacy", option: "max_per_page", block: "max_per_page 0", line: 1, json: `"max_per_page": -1`},
	{module: "helpdesk_legacy", option: "max_per_page", block: "max_per_page /nowhere 10", line: 1, json: `"list_max_per_page": {"nowhere": 10}`},
	{module: "helpdesk_legacy", option: "fixed_per_page", block: "fixed_per_page /calls 0", line: 1, json: `"fixed_per_page": {"calls": 0}`},
	{module: "helpdesk_legacy", option: "churn", block: "churn -1", line: 1, json: `"churn": -1`},
	{module: "helpdesk_legacy", option: "page_param", block: "page_param a&b", line: 1, json: `"page_param": "a&b"`},
	{module: "helpdesk_legacy", option: "per_page_param", block: "per_page_param _page", line: 1, json: `"per_page_param": "_page"`},
	{module: "helpdesk_legacy", option: "first_page", block: "first_page 2", line: 1, json: `"first_page": 2`},
	{module: "helpdesk_legacy", option: "first_page", block: `first_page ""`, line: 1},
	{module: "helpdesk_legacy", option: "offset_param", block: "offset_param o\npage_param p", line: 2, json: `"offset_param": "o", "page_param": "p"`},
	{module: "helpdesk_legacy", option: "keyset", block: "keyset id_gt=1", line: 1, json: `"keyset": "id_gt=1"`},
	{module: "helpdesk_legacy", option: "keyset_inclusive", block: "keyset_inclusive", line: 1, json: `"keyset_inclusive": true`},
}

// TestBadConfigsAreRefused: every bad config of badConfigs is refused
// by `caddy adapt` with the option and its line, or, where only the
// placeholders replaced tell, by `caddy validate`, which provisions; and
// its JSON twin by `caddy validate` (what `caddy run` and a reload's
// POST /load provision alike). None panics, and none leaves a gateway in
// the admin endpoint's report.
func TestBadConfigsAreRefused(t *testing.T) {
	t.Setenv("HELPDESK_CFGTEST_SHORT", "short")
	t.Setenv("HELPDESK_CFGTEST_KEY", storeKey)
	before := runningGateways() // other tests' may leave as their contexts end
	for _, tc := range badConfigs {
		module := cmp.Or(tc.module, "helpdesk_gateway")
		t.Run(module+"/"+strings.ReplaceAll(tc.block, "\n", ";"), func(t *testing.T) {
			site := "http://127.0.0.1:0 {\n\t" + module + " {\n\t\t" + strings.ReplaceAll(tc.block, "\n", "\n\t\t") + "\n\t}\n}\n"
			out, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(site), map[string]any{"filename": "Caddyfile"})
			if tc.line > 0 {
				require.Error(t, err, "caddy adapt")
				assert.Contains(t, err.Error(), tc.option)
				assert.Contains(t, err.Error(), fmt.Sprintf("Caddyfile:%d", tc.line+2), "the line")
			} else {
				require.NoError(t, err, "only Provision can tell")
				assert.ErrorContains(t, validateNoPanic(t, out), tc.option, "caddy validate")
			}
			if tc.json == "" {
				return
			}
			cfg := `{"apps": {"http": {"servers": {"s": {"listen": ["127.0.0.1:0"], "routes": [{"handle": [{"handler": "` +
				module + `", ` + tc.json + `}]}]}}}}}`
			assert.ErrorContains(t, validateNoPanic(t, []byte(cfg)), tc.option, "caddy validate, JSON")
		})
	}
	for _, g := range runningGateways() {
		assert.Contains(t, before, g, "a refused config leaves no gateway behind")
	}
}

// validateNoPanic is `caddy validate` on the JSON config cfg, a panic
// failing the test rather than the test binary.
func validateNoPanic(t *testing.T, cfg []byte) (err error) {
	t.Helper()
	var c caddy.Config
	require.NoError(t, json.Unmarshal(cfg, &c))
	require.NotPanics(t, func() { err = caddy.Validate(&c) }, "caddy validate")
	return err
}

// TestFailedProvisionLeavesNothing: a Provision refused, for a value
// only the placeholders replaced tell among others, sets nothing up (no
// store client, no windows and their purge timer, no entry in the admin
// endpoint's report), and Caddy's Cleanup after it, then the context's
// end, find nothing to undo. A gateway that was provisioned is undone
// whole: out of the report, its store closed.
func TestFailedProvisionLeavesNothing(t *testing.T) {
	t.Setenv("HELPDESK_CFGTEST_SHORT", "short")
	for _, g := range []*Gateway{
		{ReadaheadStore: "redis://127.0.0.1:1/0", ReadaheadStoreKey: "{env.HELPDESK_CFGTEST_SHORT}"},
		{ReadaheadStore: "redis://127.0.0.1:1/0", ReadaheadStoreKey: "{env.HELPDESK_CFGTEST_UNSET}"},
		{ReadaheadStore: "{env.HELPDESK_CFGTEST_UNSET}", ReadaheadStoreKey: storeKey},
		{ReadaheadStore: "redis://127.0.0.1:1/0?bogus=1", ReadaheadStoreKey: storeKey}, // refused by go-redis, as the store is made
		{MaxPerPage: -1},
	} {
		ctx, cancel := caddy.NewContext(caddy.Context{Context: t.Context()})
		require.Error(t, g.Provision(ctx))
		assert.Nil(t, g.store)
		assert.Nil(t, g.windows)
		assert.Nil(t, g.stopPurge)
		assert.NotContains(t, runningGateways(), g)
		require.NotPanics(t, func() { _ = g.Cleanup(); _ = g.Cleanup() })
		cancel()
	}

	ctx, cancel := caddy.NewContext(caddy.Context{Context: t.Context()})
	defer cancel()
	g := &Gateway{ReadaheadStore: "redis://127.0.0.1:1/0", ReadaheadStoreKey: storeKey}
	require.NoError(t, g.Provision(ctx))
	require.Contains(t, runningGateways(), g)
	require.NotNil(t, g.store)
	require.NoError(t, g.Cleanup())
	assert.NotContains(t, runningGateways(), g)
	assert.True(t, g.store.closed.Load(), "its store's connections closed")
	require.NotPanics(t, func() { _ = g.Cleanup() })
}
