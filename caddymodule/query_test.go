package caddymodule

import (
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testGateway() *Gateway {
	return &Gateway{IDField: "id", DefaultPerPage: 10, MaxPerPage: 100, MaxQueryLength: 512}
}

func TestParsePageQuery(t *testing.T) {
	g := testGateway()
	for _, tc := range []struct {
		raw     string
		want    pageQuery
		wantErr string
	}{
		{raw: "", want: pageQuery{perPage: 10}},
		{raw: "_perPage=5&a=1", want: pageQuery{perPage: 5, forward: "a=1"}},
		{raw: "a=%20x&_cursor=abc%2B&b&&c=", want: pageQuery{perPage: 10, cursor: "abc+", forward: "a=%20x&b&c="}},
		{raw: "_page=3&_perPage=20", want: pageQuery{perPage: 20, page: 3}},
		{raw: "_sortField=id&_sortDir=ASC&z=9", want: pageQuery{perPage: 10, forward: "z=9"}},
		{raw: "_filters=%5B%5D&x=1", want: pageQuery{perPage: 10, forward: "_filters=%5B%5D&x=1"}},
		// smuggling: encoded names are the same parameters, never forwarded
		{raw: "%5Fpage=2", want: pageQuery{perPage: 10, page: 2}},
		{raw: "%5fperPage=7&%5FsortField=id", want: pageQuery{perPage: 7}},
		{raw: "_page=1&%5Fpage=2", wantErr: "_page is repeated"},
		{raw: "_sortField=date", wantErr: "ascending id order"},
		{raw: "%5FsortDir=desc", wantErr: "ascending id order"},
		{raw: "_perPage=+5", wantErr: "_perPage must be"},
		{raw: "_perPage=5.0", wantErr: "_perPage must be"},
		{raw: "_perPage=99999999999999999999", wantErr: "_perPage must be"},
		{raw: "_page=999999999999", wantErr: "_page must be"},
		{raw: "a%zz=1", wantErr: "percent-encoding"},
		{raw: "_cursor=%zz", wantErr: "percent-encoding"},
		{raw: "a=1;b=2", wantErr: "';'"},
		{raw: "_cursor=", wantErr: "_cursor is empty"},
		{raw: "x=" + strings.Repeat("a", 600), wantErr: "longer than 512 bytes"},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			got, err := g.parsePageQuery(tc.raw)
			if tc.wantErr != "" {
				var qe *queryError
				require.ErrorAs(t, err, &qe)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// FuzzParsePageQuery checks that whatever a client sends, nothing the
// gateway owns is forwarded: the forwarded query never names _cursor,
// _page, _perPage, _sortField or _sortDir, however encoded.
func FuzzParsePageQuery(f *testing.F) {
	g := testGateway()
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := g.parsePageQuery(raw)
		if err != nil {
			if _, ok := err.(*queryError); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		if q.perPage < 1 || q.perPage > g.MaxPerPage || q.page < 0 {
			t.Fatalf("bad numbers %+v", q)
		}
		if q.page > 0 && q.cursor != "" {
			t.Fatalf("page and cursor both set from %q", raw)
		}
		for pair := range strings.SplitSeq(q.forward, "&") {
			k, _, _ := strings.Cut(pair, "=")
			key, err := url.QueryUnescape(k)
			if err != nil {
				t.Fatalf("forwarded a bad key %q", k)
			}
			switch key {
			case "_cursor", "_page", "_perPage", "_sortField", "_sortDir":
				t.Fatalf("forwarded %q from %q", key, raw)
			}
		}
	})
}

func TestRedactQuery(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"apikey=s3cret&status=open&_page=2", "apikey=REDACTED&status=open&_page=2"},
		{"api_key=a&access_token=b&X-Auth=c&Password=d&sig=e", "api_key=REDACTED&access_token=REDACTED&X-Auth=REDACTED&Password=REDACTED&sig=REDACTED"},
		{"%61pikey=s3cret", "%61pikey=REDACTED"},
		{"keyless", "keyless"},
		{"", ""},
	} {
		assert.Equal(t, tc.want, redactQuery(tc.in))
		assert.NotContains(t, redactQuery(tc.in), "s3cret")
	}
}
