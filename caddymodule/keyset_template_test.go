package caddymodule

import (
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKeysetTemplateQuoting: on a lexical list, a backend_keyset whose
// {id} sits unquoted inside a filter expression is refused when the
// config loads, through the Caddyfile (with the line and the fix), `caddy
// adapt`, and Provision of a JSON config; quoted, or the whole value of
// its parameter (after an operator, as PostgREST's), it is accepted, and
// on a numeric list, whose cursor ids are numbers, so is the unquoted form.
func TestKeysetTemplateQuoting(t *testing.T) {
	const fix = `quote it, as in "filter=(id>'{id}')"`
	for _, tc := range []struct {
		tmpl, order string
		want        string // "" accepted; else a part of the error
	}{
		{"filter=(id>{id})", "lexical", `backend_keyset: "filter=(id>{id})" puts {id} unquoted inside a filter expression; with id_order lexical the backend would read a cursor id such as passwordHash as a field name: ` + fix},
		{"filter=id>{id}", "lexical", "puts {id} unquoted inside a filter expression"},
		{"filter=(id>'{id})", "lexical", "puts {id} unquoted"}, // a quote on one side only
		{`filter=(id>"{id}')`, "lexical", "puts {id} unquoted"},
		{"q={id}%29", "lexical", "puts {id} unquoted"},
		{"filter=(id>'{id}')", "lexical", ""},
		{`filter=(id>"{id}")`, "lexical", ""},
		{"filter=(id%3E%27{id}%27)", "lexical", ""}, // percent-encoded, as a backend decodes it
		{"id_gt={id}", "lexical", ""},
		{"id=gt.{id}", "lexical", ""},
		{"id=not.lte.{id}", "lexical", ""},
		{"filter=(id>{id})", "numeric", ""},
		{"filter=(id>{id})", "", ""}, // numeric by default
	} {
		t.Run(tc.order+" "+tc.tmpl, func(t *testing.T) {
			options := "backend_keyset `" + tc.tmpl + "`"
			if tc.order != "" {
				options = "id_order " + tc.order + "\n\t" + options
			}
			var g Gateway
			err := g.UnmarshalCaddyfile(caddyfile.NewTestDispenser("helpdesk_gateway {\n\tbase_path /a\n\t" + options + "\n}"))
			line := "Testfile:3"
			if tc.order != "" {
				line = "Testfile:4"
			}
			if tc.want == "" {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.want)
				assert.Contains(t, err.Error(), "at "+line, "the line of backend_keyset")
			}

			// the JSON config, provisioned
			ctx, cancel := caddy.NewContext(caddy.Context{Context: t.Context()})
			defer cancel()
			j := Gateway{BackendKeyset: tc.tmpl, IDOrder: tc.order}
			err = j.Provision(ctx)
			if err == nil {
				err = j.Validate()
			}
			if tc.want == "" {
				assert.NoError(t, err)
			} else {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.want)
			}
		})
	}

	// caddy adapt / caddy validate on a whole Caddyfile
	site := ":8080 {\n\treverse_proxy 127.0.0.1:9080\n\thelpdesk_gateway {\n\t\tid_order lexical\n\t\tbackend_keyset \"filter=(id>{id})\"\n\t}\n}\n"
	_, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(site), map[string]any{"filename": "Caddyfile"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), fix+", at Caddyfile:5")
}
