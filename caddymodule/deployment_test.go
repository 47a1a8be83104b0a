package caddymodule_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule"
	"github.com/helpdesk-gateway/gateway/internal/harness"
)

// fingerprintSite is one site of a gateway in front of reverse_proxy:
// the gateway's options, the handlers between it and the proxy (in a
// route block, so that they run after the gateway, as written), the
// proxy's upstream and its lines.
const fingerprintSite = `
http://:0 {
	route {
		helpdesk_gateway {
			%s
		}
		%s
		reverse_proxy %s {
			%s
		}
	}
}
`

// fingerprintConfig is one deployment's config, as fingerprintSite
// writes it.
type fingerprintConfig struct {
	options, between, upstream, proxy string
}

var baseFingerprint = fingerprintConfig{
	options:  "backend_sort _sortField=id&_sortDir=ASC\n\t\t\tmax_per_page 500",
	upstream: "127.0.0.1:9",
	proxy:    "header_up X-Tenant one",
}

// fingerprintOf loads cfg as the running config and returns its
// gateway's fingerprint.
func fingerprintOf(t *testing.T, cfg fingerprintConfig) caddymodule.Fingerprint {
	t.Helper()
	c := harness.Start(t, fmt.Sprintf(fingerprintSite, cfg.options, cfg.between, cfg.upstream, cfg.proxy), "")
	fps := caddymodule.Fingerprints()
	require.Len(t, fps, 1)
	for _, fp := range fps {
		c.Stop(t)
		return fp
	}
	return caddymodule.Fingerprint{}
}

// TestDeploymentFingerprint: two configs loaded one after the other have
// the same fingerprint when they are the same deployment, and another
// when anything that decides a list's records differs: the gateway's
// list-shaping options, the deployment option, or the backend the
// handlers after it reach. An option that never changes a list's
// records (fingerprintIgnores) leaves it as it is.
func TestDeploymentFingerprint(t *testing.T) {
	base := fingerprintOf(t, baseFingerprint)
	require.Empty(t, base.Unknown, "the config describes the backend whole")
	assert.Equal(t, base, fingerprintOf(t, baseFingerprint), "the same config loaded again")

	with := func(mod func(*fingerprintConfig)) fingerprintConfig {
		cfg := baseFingerprint
		mod(&cfg)
		return cfg
	}
	option := func(line string) fingerprintConfig {
		return with(func(c *fingerprintConfig) { c.options += "\n\t\t\t" + line })
	}
	for _, tc := range []struct {
		name string
		cfg  fingerprintConfig
		same bool
	}{
		{"backend_sort", with(func(c *fingerprintConfig) {
			c.options = "backend_sort _sortField=id&_sortDir=ASC&view=all\n\t\t\tmax_per_page 500"
		}), false},
		{"base_path", option("base_path /api/v3"), false},
		{"backend_page_param", option("backend_page_param page"), false},
		{"backend_offset_param", option("backend_offset_param offset"), false},
		{"id_order", option("id_order lexical"), false},
		{"max_per_page", with(func(c *fingerprintConfig) {
			c.options = "backend_sort _sortField=id&_sortDir=ASC\n\t\t\tmax_per_page 400"
		}), false},
		{"backend_max_per_page", option("backend_max_per_page 100"), false},
		{"records_path", option("records_path data"), false},
		{"deployment", option("deployment staging"), false},
		{"upstream", with(func(c *fingerprintConfig) { c.upstream = "127.0.0.1:10" }), false},
		{"header_up", with(func(c *fingerprintConfig) { c.proxy = "header_up X-Tenant two" }), false},
		{"the proxy's rewrite", with(func(c *fingerprintConfig) { c.proxy += "\n\t\t\trewrite /v2{uri}" }), false},
		{"a rewrite after the gateway", with(func(c *fingerprintConfig) { c.between = "rewrite * /v2{uri}" }), false},
		{"a header after the gateway", with(func(c *fingerprintConfig) { c.between = "request_header X-View all" }), false},
		{"the transport", with(func(c *fingerprintConfig) { c.proxy += "\n\t\t\ttransport http {\n\t\t\t\tdial_timeout 7s\n\t\t\t}" }), false},
		{"readahead_ttl", option("readahead_ttl 5s"), true},
		{"readahead_memory", option("readahead_memory 1MiB"), true},
		{"readahead_store", option("readahead_store redis://127.0.0.1:9/0\n\t\t\treadahead_store_key 0123456789abcdef-fingerprint\n\t\t\treadahead_store_timeout 80ms"), true},
		{"index_size", option("index_size 1000"), true},
		{"max_subrequests", option("max_subrequests 8"), true},
		{"max_query_length", option("max_query_length 4KiB"), true},
		{"openapi_path", option("openapi_path /openapi.json"), true},
		{"link_header", option("link_header"), true},
		{"status_codes", option("status_codes C L"), true},
		{"max_filters", option("max_filters 10"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fp := fingerprintOf(t, tc.cfg)
			if tc.same {
				assert.Equal(t, base.Sum, fp.Sum)
			} else {
				assert.NotEqual(t, base.Sum, fp.Sum)
			}
		})
	}
}

// TestDeploymentFingerprintUnknown: where the config does not say which
// backend the gateway reaches, the fingerprint says what it misses (and
// the gateway warns, recommending the deployment option).
func TestDeploymentFingerprintUnknown(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  fingerprintConfig
		want string
	}{
		{"dynamic upstreams", fingerprintConfig{proxy: "dynamic a backend.internal 8080"}, "dynamic upstreams"},
		{"an upstream placeholder", fingerprintConfig{upstream: "{http.request.header.X-Backend}"}, "placeholder"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fp := fingerprintOf(t, tc.cfg)
			require.Len(t, fp.Unknown, 1)
			assert.Contains(t, fp.Unknown[0], tc.want)
		})
	}
	t.Run("env placeholders are replaced", func(t *testing.T) {
		cfg := fingerprintConfig{upstream: "{env.HELPDESK_TEST_BACKEND}"}
		t.Setenv("HELPDESK_TEST_BACKEND", "127.0.0.1:9")
		a := fingerprintOf(t, cfg)
		assert.Empty(t, a.Unknown)
		assert.Equal(t, a, fingerprintOf(t, cfg))
		t.Setenv("HELPDESK_TEST_BACKEND", "127.0.0.1:10")
		assert.NotEqual(t, a.Sum, fingerprintOf(t, cfg).Sum)
	})
	t.Run("handler-level trusted_proxies", func(t *testing.T) {
		fp := fingerprintOf(t, fingerprintConfig{upstream: "127.0.0.1:9", proxy: "trusted_proxies 127.0.0.0/8 10.0.0.1"})
		assert.Equal(t, 2, fp.Trusts)
	})
}
