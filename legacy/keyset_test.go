package legacy

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/translate"
)

// exampleKeysets are the four templates the README shows, each as the
// backend that reads it spells it.
var exampleKeysets = []string{"id_gt={id}", "id_gte={id}", "id=gt.{id}", "filter=(id>'{id}')"}

func TestDialectKeysetQuery(t *testing.T) {
	after := func(id string, size int) translate.Window { return translate.Window{Start: -1, Size: size, After: id} }
	for _, tc := range []struct {
		name         string
		d            Dialect
		client, sort string
		w            translate.Window
		want         string
		params       []string
	}{
		{name: "id_gt, LiveAgent names", d: Dialect{Keyset: "id_gt={id}"}, client: "a=1", sort: "_sortField=id&_sortDir=ASC", w: after("120", 11),
			want: "a=1&_sortField=id&_sortDir=ASC&id_gt=120&_perPage=11", params: []string{"_page", "_perPage", "id_gt"}},
		{name: "json-server id_gte", d: Dialect{Keyset: "id_gte={id}", PerPage: "_limit"}, sort: "_sort=id", w: after("7", 3),
			want: "_sort=id&id_gte=7&_limit=3", params: []string{"_page", "_limit", "id_gte"}},
		{name: "PostgREST id=gt.", d: Dialect{Keyset: "id=gt.{id}", Offset: "offset", PerPage: "limit"}, sort: "order=id.asc", w: after("abc-1", 26),
			want: "order=id.asc&id=gt.abc-1&limit=26", params: []string{"offset", "limit", "id"}},
		{name: "PocketBase filter, the colon escaped", d: Dialect{Keyset: "filter=(id>'{id}')", Page: "page", PerPage: "perPage"}, sort: "sort=id", w: after("urn:x", 5),
			want: "sort=id&filter=(id>'urn%3Ax')&perPage=5", params: []string{"page", "perPage", "filter"}},
		{name: "an offset window of a keyset dialect", d: Dialect{Keyset: "id_gt={id}"}, w: translate.Window{Start: 20, Size: 10},
			want: "_page=3&_perPage=10", params: []string{"_page", "_perPage", "id_gt"}},
		{name: "a template of two parameters", d: Dialect{Keyset: "where[id][gt]={id}&strict=1"}, w: after("9", 2),
			want: "where[id][gt]=9&strict=1&_perPage=2", params: []string{"_page", "_perPage", "where[id][gt]", "strict"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, string(tc.d.AppendQuery(nil, tc.client, tc.sort, tc.w)))
			assert.Equal(t, "x"+tc.want, string(tc.d.AppendQuery([]byte("x"), tc.client, tc.sort, tc.w)))
			assert.Equal(t, tc.params, tc.d.Params())
			assert.True(t, tc.d.Keysets())
		})
	}
}

func TestDialectKeysetCheck(t *testing.T) {
	d := Dialect{Keyset: "filter=(id>'{id}')"}
	for _, id := range []string{"1", "-5", "000123", "a1b2c3d4e5f6g7h", "550e8400-e29b-41d4-a716-446655440000",
		"TK-00012", "urn:x:1", "a.b_c~d", strings.Repeat("9", 512)} {
		assert.NoError(t, d.KeysetCheck(id), id)
	}
	for _, tc := range []struct{ id, want string }{
		{"a'b", "(it would end or escape a quoted value)"},
		{`a\b`, "(it would end or escape a quoted value)"},
		{`a"b`, "(it would end or escape a quoted value)"},
		{"1)", `")" at byte 1`},
		{"1&id_gt=0", `"&" at byte 1`},
		{"1%27", `"%" at byte 1`},
		{"a b", `" " at byte 1`},
		{"a+b", `"+" at byte 1`},
		{"a,b", `"," at byte 1`},
		{"a*", `"*" at byte 1`},
		{"é", `"\xc3" at byte 0`},
		{"a\x00", `"\x00" at byte 1`},
		{"a/b", `"/" at byte 1`},
	} {
		err := d.KeysetCheck(tc.id)
		if assert.Error(t, err, "%q", tc.id) {
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "ASCII letters, digits and - _ . ~ :")
		}
	}
	assert.EqualError(t, d.KeysetCheck(""), "empty id")
	assert.Error(t, Dialect{}.KeysetCheck("1"), "no template, no keyset")
	assert.False(t, Dialect{}.Keysets())
	assert.Nil(t, Dialect{}.KeysetParams())
}

func plainTestName(name string) error {
	if name == "" || strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.~[]") != "" {
		return assert.AnError
	}
	return nil
}

func TestParseKeysetTemplate(t *testing.T) {
	for _, tc := range []struct {
		tmpl  string
		param string
		pre   string
		suf   string
	}{
		{"id_gt={id}", "id_gt", "", ""},
		{"id_gte={id}", "id_gte", "", ""},
		{"id=gt.{id}", "id", "gt.", ""},
		{"filter=(id>'{id}')", "filter", "(id>'", "')"},
		{"filter=%28id%3E%27{id}%27%29", "filter", "(id>'", "')"},
		{"a=1&id_gt={id}", "id_gt", "", ""},
	} {
		kt, err := ParseKeysetTemplate(tc.tmpl, plainTestName)
		require.NoError(t, err, tc.tmpl)
		assert.Equal(t, KeysetTemplate{Param: tc.param, Prefix: tc.pre, Suffix: tc.suf, Params: Dialect{Keyset: tc.tmpl}.KeysetParams()}, kt)
	}
	for _, tc := range []struct{ tmpl, want string }{
		{"", "empty"},
		{"id_gt=5", "holds {id} 0 times"},
		{"id_gt={id}&id_lt={id}", "holds {id} 2 times"},
		{"{id}=1", "must be in a value"},
		{"id_gt", "holds {id} 0 times"},
		{"id gt={id}", "' '"},
		{"id_gt={id}#x", "'#'"},
		{"id_gt={id};a=1", "';'"},
		{"id_gt=%zz{id}", "is not a query"},
		{"a b=1&x={id}", "' '"},
		{"a!=1&x={id}", "assert.AnError"},
		{"x&y={id}", "has no value"},
		{"0=&0={id}", `sets "0" twice`},
	} {
		_, err := ParseKeysetTemplate(tc.tmpl, plainTestName)
		if assert.Error(t, err, tc.tmpl) {
			assert.Contains(t, err.Error(), tc.want, tc.tmpl)
		}
	}
}

// TestDialectKeysetInclusive: the templates whose operator reads "at or
// above" are expected to send the cursor's own record.
func TestDialectKeysetInclusive(t *testing.T) {
	for tmpl, want := range map[string]bool{
		"id_gt={id}":                      false,
		"id=gt.{id}":                      false,
		"filter=(id>'{id}')":              false,
		"filter=%28id%3E%27{id}%27%29":    false,
		"filters[id][$gt]={id}":           false,
		"id_gte={id}":                     true,
		"id=gte.{id}":                     true,
		"filter=(id>='{id}')":             true,
		"filter=%28id%3E%3D%27{id}%27%29": true,
		"filters[id][$gte]={id}":          true,
		"ID__GTE={id}":                    true,
	} {
		assert.Equal(t, want, Dialect{Keyset: tmpl}.KeysetInclusive(), tmpl)
	}
}

// FuzzKeysetQuery: for every template ParseKeysetTemplate accepts and
// every id KeysetCheck accepts, the backend query parses back to the
// template's parameter holding exactly the template's text around the
// id, and to no parameter beyond the client's, the sort's, the
// template's and the page size.
func FuzzKeysetQuery(f *testing.F) {
	for _, tmpl := range exampleKeysets {
		for _, id := range []string{"1", "abc", "a'b", "1)", "1&x=2", "%41", "é", "urn:x", "a+b"} {
			f.Add(tmpl, id)
		}
	}
	f.Fuzz(func(t *testing.T, tmpl, id string) {
		kt, err := ParseKeysetTemplate(tmpl, plainTestName)
		if err != nil {
			return
		}
		d := Dialect{Keyset: tmpl, PerPage: "limit"}
		if slices.Contains(kt.Params, "limit") || slices.Contains(kt.Params, "s") || slices.Contains(kt.Params, "c") {
			return // a collision Validate refuses
		}
		if d.KeysetCheck(id) != nil {
			return
		}
		q := string(d.AppendQuery(nil, "c=1", "s=2", translate.Window{Start: -1, Size: 7, After: id}))
		v, err := url.ParseQuery(q)
		require.NoError(t, err, q)
		require.Equal(t, []string{kt.Prefix + id + kt.Suffix}, v[kt.Param], q)
		want := append([]string{"c", "s", "limit"}, kt.Params...)
		for name := range v {
			require.Contains(t, want, name, "an extra parameter in %s", q)
		}
		require.Equal(t, []string{"7"}, v["limit"], q)
		require.Equal(t, []string{"1"}, v["c"], q)
	})
}
