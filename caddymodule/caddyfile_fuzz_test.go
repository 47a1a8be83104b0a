package caddymodule

import (
	"encoding/json"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/stretchr/testify/require"
)

// FuzzCaddyfileBlock: whatever a helpdesk_gateway block holds, parsing
// it, adapting a site with it and provisioning the gateway it gives
// never panic; a refused block gives an error, and Cleanup after a
// Provision, failed or not, leaves no gateway in the admin endpoint's
// report. Seeds: badConfigs' blocks and those in
// testdata/fuzz/FuzzCaddyfileBlock.
func FuzzCaddyfileBlock(f *testing.F) {
	for _, c := range badConfigs {
		if c.module == "" {
			f.Add(c.block)
		}
	}
	f.Fuzz(func(t *testing.T, block string) {
		// Not NewTestDispenser, which exits the process on a lexer error.
		tokens, err := caddyfile.Tokenize([]byte("helpdesk_gateway {\n"+block+"\n}"), "Testfile")
		if err != nil {
			return
		}
		var g Gateway
		err = g.UnmarshalCaddyfile(caddyfile.NewDispenser(tokens))
		if adaptable(tokens) {
			site := "http://127.0.0.1:0 {\n\thelpdesk_gateway {\n" + block + "\n\t}\n}\n"
			_, _, adaptErr := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(site), nil)
			if err == nil && adaptErr != nil {
				// The block may still not adapt: a `{$VAR}` or a `}` the site reads.
				return
			}
		}
		if err != nil {
			return
		}
		// What the adapter writes, read back as Caddy reads it.
		raw, err := json.Marshal(&g)
		require.NoError(t, err)
		var h Gateway
		require.NoError(t, json.Unmarshal(raw, &h), "what the adapter writes decodes")
		ctx, cancel := caddy.NewContext(caddy.Context{Context: t.Context()})
		defer cancel()
		_ = h.Provision(ctx) // refused or not, as Caddy does:
		require.NoError(t, h.Cleanup())
		require.NoError(t, h.Cleanup(), "twice: Cleanup, then the context's end")
		for _, running := range runningGateways() {
			require.NotSame(t, &h, running, "Cleanup takes the gateway out of the report")
		}
	})
}

// adaptable reports whether a site can hold the block of tokens as the
// gateway's block, so that the Caddyfile adapter reads what the
// gateway's parser reads: no brace token of its own (which would close
// the block and open the site to any directive) and no import (which
// reads files). The tokens' first two and last are the block's own.
func adaptable(tokens []caddyfile.Token) bool {
	if len(tokens) < 3 {
		return false
	}
	for _, tok := range tokens[2 : len(tokens)-1] {
		switch tok.Text {
		case "{", "}", "import":
			return false
		}
	}
	return true
}
