package caddymodule

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/legacy"
)

func intPtr(n int) *int { return &n }

func TestCaddyfileDialectOptions(t *testing.T) {
	for _, tc := range []struct {
		options string
		want    Gateway
		dialect legacy.Dialect
	}{
		{"", Gateway{}, legacy.Dialect{}},
		{"backend_page_param page\nbackend_per_page_param per_page", Gateway{BackendPageParam: "page", BackendPerPageParam: "per_page"},
			legacy.Dialect{Page: "page", PerPage: "per_page"}},
		{"backend_first_page 0", Gateway{BackendFirstPage: intPtr(0)}, legacy.Dialect{FromZero: true}},
		{"backend_first_page 1", Gateway{BackendFirstPage: intPtr(1)}, legacy.Dialect{}},
		{"backend_offset_param startAt\nbackend_per_page_param maxResults", Gateway{BackendOffsetParam: "startAt", BackendPerPageParam: "maxResults"},
			legacy.Dialect{Offset: "startAt", PerPage: "maxResults"}},
		{"backend_page_param page[number]\nbackend_per_page_param page[size]", Gateway{BackendPageParam: "page[number]", BackendPerPageParam: "page[size]"},
			legacy.Dialect{Page: "page[number]", PerPage: "page[size]"}},
		{"backend_offset_param _from", Gateway{BackendOffsetParam: "_from"}, legacy.Dialect{Offset: "_from"}},
		{"backend_keyset id_gt={id}", Gateway{BackendKeyset: "id_gt={id}"}, legacy.Dialect{Keyset: "id_gt={id}"}},
		{"backend_keyset id_gte={id}\nbackend_per_page_param _limit", Gateway{BackendKeyset: "id_gte={id}", BackendPerPageParam: "_limit"},
			legacy.Dialect{Keyset: "id_gte={id}", PerPage: "_limit"}},
		{"backend_keyset id=gt.{id}\nbackend_offset_param offset\nbackend_per_page_param limit\nbackend_sort order=id.asc",
			Gateway{BackendKeyset: "id=gt.{id}", BackendOffsetParam: "offset", BackendPerPageParam: "limit", BackendSort: "order=id.asc"},
			legacy.Dialect{Keyset: "id=gt.{id}", Offset: "offset", PerPage: "limit"}},
		{`backend_keyset "filter=(id>'{id}')"` + "\nbackend_page_param page\nbackend_per_page_param perPage\nbackend_sort sort=id",
			Gateway{BackendKeyset: "filter=(id>'{id}')", BackendPageParam: "page", BackendPerPageParam: "perPage", BackendSort: "sort=id"},
			legacy.Dialect{Keyset: "filter=(id>'{id}')", Page: "page", PerPage: "perPage"}},
	} {
		t.Run(tc.options, func(t *testing.T) {
			var g Gateway
			require.NoError(t, g.UnmarshalCaddyfile(caddyfile.NewTestDispenser("helpdesk_gateway {\n"+tc.options+"\n}")))
			assert.Equal(t, tc.want, g)
			assert.Equal(t, tc.dialect, g.backendDialect())
			require.NoError(t, g.checkDialect(), "what the Caddyfile accepts, Validate accepts")
		})
	}
}

// TestCaddyfileDialectErrors: each invalid dialect, alone or together with
// other options, is refused with the line of the option at fault.
func TestCaddyfileDialectErrors(t *testing.T) {
	for _, tc := range []struct{ options, want string }{
		{"backend_first_page 2", `backend_first_page: "2" is not 0 or 1; it is the number the backend gives its first page, at Testfile:3`},
		{"backend_first_page -0", `backend_first_page: "-0" is not 0 or 1`},
		{"backend_first_page", "backend_first_page: a value is needed, at Testfile:3"},
		{"backend_page_param", "backend_page_param: a value is needed, at Testfile:3"},
		{"backend_page_param a b", `backend_page_param: one value only, got also "b", at Testfile:3`},
		{"backend_page_param pa&ge", `backend_page_param: "pa&ge" is not a parameter name`},
		{"backend_per_page_param per%5Fpage", `backend_per_page_param: "per%5Fpage" is not a parameter name`},
		{"backend_offset_param [x]", `backend_offset_param: "[x]" is not a parameter name`},
		{"backend_per_page_param page[size", `"page[size": the bracketed keys must each be`},
		{"backend_per_page_param page[a=b]", `"page[a=b]": the bracketed keys must each be`},
		{"backend_page_param page\nbackend_per_page_param PAGE", `backend_per_page_param: "PAGE" is the same parameter as backend_page_param "page"; the backend needs two, at Testfile:4`},
		{"backend_page_param _perPage", `backend_per_page_param: "_perPage" is the same parameter as backend_page_param "_perPage"; the backend needs two, at Testfile:3`},
		{"backend_page_param page\nbackend_per_page_param page[size]", `"page[size]" is the same parameter as backend_page_param "page"`},
		{"backend_page_param per.page\nbackend_per_page_param per_page", `"per_page" is the same parameter as backend_page_param "per.page"`},
		{"backend_offset_param limit\nbackend_per_page_param limit", `backend_per_page_param: "limit" is the same parameter as backend_offset_param "limit"; the backend needs two, at Testfile:4`},
		{"backend_page_param page\nbackend_offset_param offset", `backend_page_param: backend_offset_param "offset" asks the backend by offset, with no page number; remove one of the two, at Testfile:3`},
		{"backend_offset_param offset\nbackend_first_page 0", `backend_first_page: backend_offset_param "offset" asks the backend by offset, with no page number; remove backend_first_page, at Testfile:4`},
		{"backend_page_param _cursor", `backend_page_param: "_cursor" would be read as _cursor, which clients send; name the backend's own parameter, at Testfile:3`},
		{"backend_offset_param _Filters", `backend_offset_param: "_Filters" would be read as _filters`},
		{"backend_page_param _sortDir", `backend_page_param: "_sortDir" is also set by backend_sort ("_sortDir"); paging and sorting need parameters of their own, at Testfile:3`},
		{"backend_sort sort=id&_page=1", `backend_page_param: "_page" is also set by backend_sort ("_page"); paging and sorting need parameters of their own, at Testfile:3`},
		{"backend_sort sort=id&per_page=1\nbackend_per_page_param per_page", `backend_per_page_param: "per_page" is also set by backend_sort ("per_page")`},
		{"backend_sort _perPage=1000", `backend_per_page_param: "_perPage" is also set by backend_sort ("_perPage"); paging and sorting need parameters of their own, at Testfile:3`},
		// backend_keyset: {id} once, a query, names of its own
		{"backend_keyset id_gt=5", `backend_keyset: "id_gt=5" holds {id} 0 times; write it once, where the cursor id goes, e.g. id_gt={id}, at Testfile:3`},
		{"backend_keyset id_gt={id}&id_lt={id}", `backend_keyset: "id_gt={id}&id_lt={id}" holds {id} 2 times`},
		{"backend_keyset {id}=1", `backend_keyset: "{id}=1": {id} must be in a value, as in id_gt={id}, not in the name "{id}", at Testfile:3`},
		{"backend_keyset id_gt=%zz{id}", `backend_keyset: "id_gt=%zz{id}" is not a query`},
		{`backend_keyset "id_gt={id} x"`, `backend_keyset: "id_gt={id} x" holds ' ', which a query cannot carry as written`},
		{"backend_keyset id_gt={id}&id_gt=1", `backend_keyset: "id_gt={id}&id_gt=1" sets "id_gt" twice`},
		{"backend_keyset id_gt={id}&ID_GT=1", `backend_keyset: "ID_GT" is the same parameter as backend_keyset "id_gt"`},
		{"backend_keyset a%26b={id}", `backend_keyset: "a&b" is not a parameter name`},
		{"backend_keyset _page={id}", `backend_keyset: "_page" is the same parameter as backend_page_param "_page"; the backend needs two, at Testfile:3`},
		{"backend_keyset _perPage={id}", `backend_keyset: "_perPage" is the same parameter as backend_per_page_param "_perPage"`},
		{"backend_offset_param offset\n\tbackend_keyset Offset={id}", `backend_keyset: "Offset" is the same parameter as backend_offset_param "offset"; the backend needs two, at Testfile:4`},
		{"backend_keyset _sortField={id}", `backend_keyset: "_sortField" is also set by backend_sort ("_sortField"); paging and sorting need parameters of their own, at Testfile:3`},
		{"backend_sort sort=id&id_gt=0\n\tbackend_keyset id_gt={id}", `backend_keyset: "id_gt" is also set by backend_sort ("id_gt")`},
		{"backend_keyset _cursor={id}", `backend_keyset: "_cursor" would be read as _cursor, which clients send`},
		{"backend_keyset", "backend_keyset: a value is needed, at Testfile:3"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			var g Gateway
			err := g.UnmarshalCaddyfile(caddyfile.NewTestDispenser("helpdesk_gateway {\n\tbase_path /a\n\t" + tc.options + "\n}"))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestValidateDialect: the JSON config is held to the same rules.
func TestValidateDialect(t *testing.T) {
	for _, tc := range []struct {
		g    Gateway
		want string
	}{
		{Gateway{BackendFirstPage: intPtr(2)}, "backend_first_page: 2 is not 0 or 1"},
		{Gateway{BackendFirstPage: intPtr(-1)}, "backend_first_page: -1 is not 0 or 1"},
		{Gateway{BackendPageParam: "a b"}, `backend_page_param: "a b" is not a parameter name`},
		{Gateway{BackendOffsetParam: "o", BackendPageParam: "p"}, "remove one of the two"},
		{Gateway{BackendOffsetParam: "o", BackendFirstPage: intPtr(1)}, "remove backend_first_page"},
		{Gateway{BackendPageParam: "x", BackendPerPageParam: "X"}, "the same parameter"},
		{Gateway{BackendPageParam: "_sortField"}, "also set by backend_sort"},
		{Gateway{BackendSort: "s=id&limit=1", BackendOffsetParam: "start", BackendPerPageParam: "limit"}, "also set by backend_sort"},
		{Gateway{BackendKeyset: "id_gt=1"}, "backend_keyset: \"id_gt=1\" holds {id} 0 times"},
		{Gateway{BackendKeyset: "id_gt={id}{id}"}, "backend_keyset: \"id_gt={id}{id}\" holds {id} 2 times"},
		{Gateway{BackendKeyset: "id_gt={id}", BackendPageParam: "id.gt"}, "backend_keyset: \"id_gt\" is the same parameter as backend_page_param \"id.gt\""},
		{Gateway{BackendKeyset: "sort={id}", BackendSort: "sort=id"}, "backend_keyset: \"sort\" is also set by backend_sort"},
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

// TestCaddyValidateDialect is `caddy validate` on a whole Caddyfile: a bad
// dialect fails with the file and the line; a good one adapts to its JSON
// twins and provisions.
func TestCaddyValidateDialect(t *testing.T) {
	site := func(options string) []byte {
		return []byte(":8080 {\n\treverse_proxy 127.0.0.1:9080\n\thelpdesk_gateway {\n\t\trecords_path data\n" + options + "\t}\n}\n")
	}
	_, _, err := caddyconfig.GetAdapter("caddyfile").Adapt(site("\t\tbackend_page_param page\n\t\tbackend_offset_param offset\n"), map[string]any{"filename": "Caddyfile"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "remove one of the two, at Caddyfile:5")

	out, warnings, err := caddyconfig.GetAdapter("caddyfile").Adapt(site(
		"\t\tbackend_page_param page\n\t\tbackend_per_page_param per_page\n\t\tbackend_first_page 0\n"), map[string]any{"filename": "Caddyfile"})
	require.NoError(t, err)
	assert.Empty(t, warnings)
	for _, twin := range []string{`"backend_page_param":"page"`, `"backend_per_page_param":"per_page"`, `"backend_first_page":0`} {
		assert.Contains(t, string(out), twin)
	}
	require.NoError(t, caddy.Validate(mustConfig(t, out)))

	out, _, err = caddyconfig.GetAdapter("caddyfile").Adapt(site(
		"\t\tbackend_offset_param offset\n\t\tbackend_per_page_param limit\n"), nil)
	require.NoError(t, err)
	assert.Contains(t, string(out), `"backend_offset_param":"offset","backend_per_page_param":"limit"`)
	require.NoError(t, caddy.Validate(mustConfig(t, out)))

	// The four example templates adapt to their JSON twin and provision.
	for _, tmpl := range []string{"id_gt={id}", "id_gte={id}", "id=gt.{id}", "filter=(id>'{id}')"} {
		out, warnings, err = caddyconfig.GetAdapter("caddyfile").Adapt(site("\t\tbackend_keyset \""+tmpl+"\"\n"), nil)
		require.NoError(t, err, tmpl)
		assert.Empty(t, warnings)
		twin, _ := json.Marshal(map[string]string{"backend_keyset": tmpl})
		assert.Contains(t, string(out), strings.Trim(string(twin), "{}"), tmpl)
		require.NoError(t, caddy.Validate(mustConfig(t, out)), tmpl)
	}
	_, _, err = caddyconfig.GetAdapter("caddyfile").Adapt(site("\t\tbackend_keyset id_gt=x\n"), map[string]any{"filename": "Caddyfile"})
	assert.ErrorContains(t, err, "holds {id} 0 times; write it once, where the cursor id goes, e.g. id_gt={id}, at Caddyfile:5")

	// backend_first_page 0 survives the JSON round trip: 0 is a value here.
	var g Gateway
	require.NoError(t, json.Unmarshal([]byte(`{"backend_first_page":0}`), &g))
	require.NotNil(t, g.BackendFirstPage)
	assert.Equal(t, legacy.Dialect{FromZero: true}, g.backendDialect())
}
