package caddymodule_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule"
	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
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
	return fingerprintOfSite(t, fmt.Sprintf(fingerprintSite, cfg.options, cfg.between, cfg.upstream, cfg.proxy))
}

// fingerprintOfSite loads a Caddyfile of one gateway as the running
// config and returns its fingerprint.
func fingerprintOfSite(t *testing.T, caddyfile string) caddymodule.Fingerprint {
	t.Helper()
	c := gatewaytest.Start(t, caddyfile, "")
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
// records (its row's sameDeployment in options.go) leaves it as it is.
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
		{"an upstream's DNS name", fingerprintConfig{upstream: "backend.internal:8080"}, "DNS name"},
		{"localhost", fingerprintConfig{upstream: "localhost:8080"}, "DNS name"},
		{"a file placeholder", fingerprintConfig{upstream: "127.0.0.1:9", proxy: "header_up X-Tenant {file./run/secrets/tenant}"}, "{file./run/secrets/tenant}"},
		{"a variable", fingerprintConfig{upstream: "127.0.0.1:9", proxy: "header_up X-Tenant {http.vars.tenant}"}, "{http.vars.tenant}"},
		{"a map's output", fingerprintConfig{upstream: "127.0.0.1:9", proxy: "header_up X-Tenant {tenant}"}, "{tenant}"},
		{"a handler that reads files", fingerprintConfig{upstream: "127.0.0.1:9", between: "templates"}, "http.handlers.templates"},
		{"a matcher that reads files", fingerprintConfig{upstream: "127.0.0.1:9", between: "try_files {path} /index.json"}, "http.matchers.file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fp := fingerprintOf(t, tc.cfg)
			require.NotEmpty(t, fp.Unknown)
			assert.Contains(t, strings.Join(fp.Unknown, "\n"), tc.want)
			assert.True(t, fp.Private, "the store's keys are the instance's own")
			assert.NotEqual(t, fp.Sum, fp.Key)
			named := tc.cfg
			named.options = "deployment production"
			fp = fingerprintOf(t, named)
			assert.False(t, fp.Private, "the deployment option names it")
			assert.Equal(t, fp.Sum, fp.Key)
		})
	}
	t.Run("a deployment name from the environment", func(t *testing.T) {
		cfg := fingerprintConfig{upstream: "backend.internal:8080", options: "deployment {env.HELPDESK_TEST_DEPLOYMENT}"}
		t.Setenv("HELPDESK_TEST_DEPLOYMENT", "")
		assert.True(t, fingerprintOf(t, cfg).Private, "an unset variable names no deployment")
		t.Setenv("HELPDESK_TEST_DEPLOYMENT", "staging")
		staging := fingerprintOf(t, cfg)
		assert.False(t, staging.Private)
		t.Setenv("HELPDESK_TEST_DEPLOYMENT", "production")
		assert.NotEqual(t, staging.Key, fingerprintOf(t, cfg).Key)
	})
	t.Run("the request's placeholders are the caller's, the instance's its name", func(t *testing.T) {
		fp := fingerprintOf(t, fingerprintConfig{upstream: "127.0.0.1:9",
			between: "rewrite * /v2{uri}",
			proxy:   "header_up X-Request-Id {http.request.uuid}\n\t\t\theader_up X-Real-IP {client_ip}\n\t\t\theader_up X-Tenant {http.request.header.X-Tenant}\n\t\t\theader_up X-Path {http.request.orig_uri.path}\n\t\t\theader_up X-Instance {system.hostname}:{http.request.local.port}"})
		assert.Empty(t, fp.Unknown)
		assert.False(t, fp.Private)
	})
	t.Run("invoked named routes", func(t *testing.T) {
		site := func(upstream string) string {
			return "&(backend) {\n\treverse_proxy " + upstream + "\n}\n" + fmt.Sprintf(fingerprintSite, "", "invoke backend", "127.0.0.1:9", "")
		}
		a := fingerprintOfSite(t, site("127.0.0.1:10"))
		assert.Empty(t, a.Unknown)
		assert.Equal(t, a, fingerprintOfSite(t, site("127.0.0.1:10")))
		assert.NotEqual(t, a.Sum, fingerprintOfSite(t, site("127.0.0.1:11")).Sum, "another backend in the named route")
	})
	t.Run("the other routes of a handle group never run", func(t *testing.T) {
		fp := fingerprintOfSite(t, "http://:0 {\n\thandle /calls* {\n\t\thelpdesk_gateway\n\t\treverse_proxy 127.0.0.1:9\n\t}\n\thandle {\n\t\tfile_server\n\t}\n}\n")
		assert.Empty(t, fp.Unknown)
	})
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
