package legacy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func intPtr(n int) *int { return &n }

// TestOptionsCheck: each rule of the dialect options, with the option the
// error is reported at, the other option involved, and the message the
// Caddyfile shows (caddymodule's Caddyfile tests add the line).
func TestOptionsCheck(t *testing.T) {
	const sort = "_sortField=id&_sortDir=ASC" // backend_sort's default
	for _, tc := range []struct {
		o             Options
		option, other string // "" option: accepted
		msg           string
	}{
		{o: Options{}},
		{o: Options{PageParam: "page[number]", PerPageParam: "page[size]", FirstPage: intPtr(0)}},
		{o: Options{OffsetParam: "startAt", PerPageParam: "maxResults"}},
		{o: Options{Keyset: "filter=(id>'{id}')", PageParam: "page", PerPageParam: "perPage", Sort: "sort=id", LexicalIDs: true}},
		{o: Options{Keyset: "id=gt.{id}", OffsetParam: "offset", PerPageParam: "limit", LexicalIDs: true}},
		{o: Options{Keyset: "filter=(id>{id})"}}, // numeric ids: never read as a name

		{o: Options{PageParam: "pa&ge"}, option: "backend_page_param",
			msg: `"pa&ge" is not a parameter name; use letters, digits and _ - . ~, optionally followed by bracketed keys such as page[size]`},
		{o: Options{PerPageParam: "page[a=b]"}, option: "backend_per_page_param",
			msg: `"page[a=b]": the bracketed keys must each be letters, digits and _ - . ~, as in page[size]`},
		{o: Options{FirstPage: intPtr(2)}, option: "backend_first_page", msg: "2 is not 0 or 1; it is the number the backend gives its first page"},
		{o: Options{OffsetParam: "offset", PageParam: "page"}, option: "backend_page_param",
			msg: `backend_offset_param "offset" asks the backend by offset, with no page number; remove one of the two`},
		{o: Options{OffsetParam: "offset", FirstPage: intPtr(1)}, option: "backend_first_page",
			msg: `backend_offset_param "offset" asks the backend by offset, with no page number; remove backend_first_page`},
		{o: Options{PageParam: "page", PerPageParam: "PAGE"}, option: "backend_per_page_param", other: "backend_page_param",
			msg: `"PAGE" is the same parameter as backend_page_param "page"; the backend needs two`},
		{o: Options{OffsetParam: "limit", PerPageParam: "limit"}, option: "backend_per_page_param", other: "backend_offset_param",
			msg: `"limit" is the same parameter as backend_offset_param "limit"; the backend needs two`},
		{o: Options{PageParam: "_cursor"}, option: "backend_page_param",
			msg: `"_cursor" would be read as _cursor, which clients send; name the backend's own parameter`},
		{o: Options{OffsetParam: "_Filters"}, option: "backend_offset_param",
			msg: `"_Filters" would be read as _filters, which clients send; name the backend's own parameter`},
		{o: Options{Sort: sort + "&_page=1"}, option: "backend_page_param", other: "backend_sort",
			msg: `"_page" is also set by backend_sort ("_page"); paging and sorting need parameters of their own`},
		{o: Options{Keyset: "id_gt=5"}, option: "backend_keyset",
			msg: `"id_gt=5" holds {id} 0 times; write it once, where the cursor id goes, e.g. id_gt={id}`},
		{o: Options{Keyset: "a%26b={id}"}, option: "backend_keyset", msg: `"a&b" is not a parameter name`},
		{o: Options{Keyset: "_perPage={id}"}, option: "backend_keyset", other: "backend_per_page_param",
			msg: `"_perPage" is the same parameter as backend_per_page_param "_perPage"; the backend needs two`},
		{o: Options{Keyset: "id_gt={id}&ID_GT=1"}, option: "backend_keyset", other: "backend_keyset",
			msg: `"ID_GT" is the same parameter as backend_keyset "id_gt"; the backend needs two`},
		{o: Options{Keyset: "sort={id}", Sort: "sort=id"}, option: "backend_keyset", other: "backend_sort",
			msg: `"sort" is also set by backend_sort ("sort"); paging and sorting need parameters of their own`},
		{o: Options{Keyset: "filter=(id>{id})", LexicalIDs: true}, option: "backend_keyset", other: "id_order",
			msg: `"filter=(id>{id})" puts {id} unquoted inside a filter expression; with id_order lexical the backend would read a cursor id such as passwordHash as a field name: quote it, as in "filter=(id>'{id}')"`},
		{o: Options{Keyset: "filter=(id>'{id})", LexicalIDs: true}, option: "backend_keyset", other: "id_order",
			msg: `"filter=(id>'{id})" puts {id} unquoted`},
	} {
		o := tc.o
		if o.Sort == "" {
			o.Sort = sort
		}
		err := o.Check()
		if tc.option == "" {
			assert.NoError(t, err, "%+v", tc.o)
			continue
		}
		var oe *OptionError
		require.ErrorAs(t, err, &oe, "%+v", tc.o)
		assert.Equal(t, tc.option, oe.Option, "%+v", tc.o)
		assert.Equal(t, tc.other, oe.Other, "%+v", tc.o)
		assert.Contains(t, oe.Msg, tc.msg)
		assert.Equal(t, tc.option+": "+oe.Msg, err.Error())
	}
}

// TestSameParam: names a backend may read as one, in PHP's and
// ASP.NET's readings, and the nested keys that keep two names apart.
func TestSameParam(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"page", "page", true},
		{"page", "PAGE", true},
		{"per.page", "per_page", true},
		{"per page", "per_page", true},
		{"per%5Fpage", "per_page", true},
		{"page", "page[size]", true},
		{"page[size]", "page[SIZE]", true},
		{"page[number]", "page[size]", false},
		{"page", "pages", false},
		{"_page", "page", false},
	} {
		assert.Equal(t, tc.same, SameParam(tc.a, tc.b), "%q and %q", tc.a, tc.b)
		assert.Equal(t, tc.same, SameParam(tc.b, tc.a), "%q and %q", tc.b, tc.a)
	}
}

// TestOptionsDialect: the dialect the options describe; backend_first_page
// 0 is pages from 0, 1 and unset are pages from 1.
func TestOptionsDialect(t *testing.T) {
	assert.Equal(t, Dialect{Page: "p", PerPage: "n", FromZero: true, Keyset: "id_gt={id}"},
		Options{PageParam: "p", PerPageParam: "n", FirstPage: intPtr(0), Keyset: "id_gt={id}", Sort: "s=id"}.Dialect())
	assert.Equal(t, Dialect{}, Options{FirstPage: intPtr(1)}.Dialect())
	assert.Equal(t, Dialect{Offset: "o", PerPage: "l"}, Options{OffsetParam: "o", PerPageParam: "l"}.Dialect())
}
