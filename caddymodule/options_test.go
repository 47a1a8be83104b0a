package caddymodule

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docOption is one row of docs/options.md's table.
type docOption struct{ name, def, rng, apart string }

// docOptions reads the option table of docs/options.md, by name, in
// its order.
func docOptions(t *testing.T) ([]string, map[string]docOption) {
	t.Helper()
	raw, err := os.ReadFile("../docs/options.md")
	require.NoError(t, err)
	_, table, ok := strings.Cut(string(raw), "| option | default | range | keeps deployments apart | meaning |\n|---|---|---|---|---|\n")
	require.True(t, ok, "docs/options.md has the option table")
	var order []string
	rows := map[string]docOption{}
	for line := range strings.Lines(table) {
		if !strings.HasPrefix(line, "| `") {
			break
		}
		cells := strings.Split(line, " | ")
		require.GreaterOrEqual(t, len(cells), 5, line)
		unquote := func(s string) string { return strings.ReplaceAll(strings.TrimSpace(s), "`", "") }
		r := docOption{unquote(strings.TrimPrefix(cells[0], "|")), unquote(cells[1]), unquote(cells[2]), unquote(cells[3])}
		require.NotContains(t, rows, r.name, "one row per option")
		order = append(order, r.name)
		rows[r.name] = r
	}
	return order, rows
}

// TestOptionsDocMatchesTable holds docs/options.md's table to the
// code's (options.go): the same options in the same order, each with
// the default the code applies, the range it holds the value to (where
// the code's row has one) and the fingerprint's decision. An option
// added to one and not the other fails it.
func TestOptionsDocMatchesTable(t *testing.T) {
	order, docs := docOptions(t)
	var names []string
	for i := range options {
		o := &options[i]
		names = append(names, o.name)
		d, ok := docs[o.name]
		if !assert.True(t, ok, "%s: a row in docs/options.md", o.name) {
			continue
		}
		assert.Equal(t, o.defaultText(), d.def, "%s: the default", o.name)
		if r := o.rangeText(); r != "" {
			assert.Equal(t, r, d.rng, "%s: the range", o.name)
		}
		apart := map[bool]string{true: "yes", false: "no"}[o.sameDeployment == ""]
		assert.Equal(t, apart, d.apart, "%s: whether it keeps deployments apart", o.name)
	}
	assert.Equal(t, names, order, "docs/options.md lists the code's options, in its order")
}

// TestOptionTableCoversGateway: every JSON member of Gateway is one row
// of the table and every row names one, so a field added without its
// row (parsing, defaults, fingerprint) fails here.
func TestOptionTableCoversGateway(t *testing.T) {
	rows := map[string]bool{}
	for _, o := range options {
		assert.False(t, rows[o.name], "%s: one row", o.name)
		rows[o.name] = true
		assert.Contains(t, optionFields, o.name, "%s: a Gateway field of that JSON name", o.name)
	}
	for name := range optionFields {
		assert.True(t, rows[name], "Gateway's %s: a row in the option table (options.go)", name)
	}
}

// sampleValue is a value of the option other than its zero, for a
// Gateway field of its kind.
func sampleValue(o *option, f reflect.Value) reflect.Value {
	switch o.kind {
	case flag:
		return reflect.ValueOf(true)
	case paths, codes, headers, members, placeholders:
		return reflect.ValueOf([]string{"/x{http.request.uuid}"})
	case duration:
		return reflect.ValueOf(caddy.Duration(3 * time.Second))
	case whole, size:
		return reflect.ValueOf(int64(max(o.min, 1) + 1))
	}
	if f.Kind() == reflect.String {
		return reflect.ValueOf("x")
	}
	return reflect.ValueOf(0) // backend_first_page: 0 is a value
}

// TestFingerprintFollowsTheTable: an option goes into the fingerprint's
// options (optionsJSON) exactly when its row says it keeps deployments
// apart, whatever its value; one whose row gives no reason counts.
func TestFingerprintFollowsTheTable(t *testing.T) {
	base, err := new(Gateway).optionsJSON()
	require.NoError(t, err)
	for i := range options {
		o := &options[i]
		t.Run(o.name, func(t *testing.T) {
			var g Gateway
			f := o.field(&g)
			set(f, sampleValue(o, f))
			require.False(t, f.IsZero())
			raw, err := json.Marshal(&g)
			require.NoError(t, err)
			require.Contains(t, string(raw), `"`+o.name+`"`, "the value is in the gateway's JSON")
			got, err := g.optionsJSON()
			require.NoError(t, err)
			if o.sameDeployment == "" {
				assert.NotEqual(t, string(base), string(got), "it keeps deployments apart")
			} else {
				assert.Equal(t, string(base), string(got), "it leaves the deployment as it is: %s", o.sameDeployment)
			}
		})
	}
}
