package legacy

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/helpdesk-gateway/gateway/translate"
)

func TestDialectAppendQuery(t *testing.T) {
	third := translate.Window{Start: 50, Size: 25} // offsets 50..74
	for _, tc := range []struct {
		name         string
		d            Dialect
		client, sort string
		w            translate.Window
		want         string
		offsets      bool
		params       []string
	}{
		{name: "LiveAgent, the zero value", client: "a=1&b=%20", sort: "_sortField=id&_sortDir=ASC", w: third,
			want: "a=1&b=%20&_sortField=id&_sortDir=ASC&_page=3&_perPage=25", params: []string{"_page", "_perPage"}},
		{name: "no client query, no sort", w: third, want: "_page=3&_perPage=25", params: []string{"_page", "_perPage"}},
		{name: "Zendesk-style names", d: Dialect{Page: "page", PerPage: "per_page"}, sort: "sort_by=id&sort_order=asc", w: third,
			want: "sort_by=id&sort_order=asc&page=3&per_page=25", params: []string{"page", "per_page"}},
		{name: "pages from 0", d: Dialect{Page: "page", PerPage: "size", FromZero: true}, w: third,
			want: "page=2&size=25", params: []string{"page", "size"}},
		{name: "first page from 0", d: Dialect{FromZero: true}, w: translate.Window{Start: 0, Size: 10},
			want: "_page=0&_perPage=10", params: []string{"_page", "_perPage"}},
		{name: "offset and limit", d: Dialect{Offset: "startAt", PerPage: "maxResults"}, client: "jql=x", w: third,
			want: "jql=x&startAt=50&maxResults=25", offsets: true, params: []string{"startAt", "maxResults"}},
		{name: "offset with the default limit name", d: Dialect{Offset: "offset"}, w: translate.Window{Start: 0, Size: 7},
			want: "offset=0&_perPage=7", offsets: true, params: []string{"offset", "_perPage"}},
		{name: "bracketed names", d: Dialect{Page: "page[number]", PerPage: "page[size]"}, w: third,
			want: "page[number]=3&page[size]=25", params: []string{"page[number]", "page[size]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, string(tc.d.AppendQuery(nil, tc.client, tc.sort, tc.w)))
			assert.Equal(t, tc.offsets, tc.d.Offsets())
			assert.Equal(t, tc.params, tc.d.Params())
			// appends, never overwrites
			assert.Equal(t, "x"+tc.want, string(tc.d.AppendQuery([]byte("x"), tc.client, tc.sort, tc.w)))
		})
	}
}
