package caddymodule

import (
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/legacy"
)

func testGateway() *Gateway {
	// The fields Provision would fill that parsePageQuery reads.
	return &Gateway{IDField: "id", DefaultPerPage: 10, MaxPerPage: 100, MaxQueryLength: 512, shadowNames: shadowNames(nil, legacy.Dialect{})}
}

// bigPages are _page values past 32 bits, as variables: the cases that
// use them run on 64-bit ints, and the package must still build (go vet)
// for 32-bit ones.
var bigPages = [...]int64{1000000000000, 1 << 40, 109951162777}

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
		{raw: "_page=999999999999", wantErr: "_page must be a whole number from 1 to 109951162777,"},
		// _page's bound and its message agree: _page × _perPage ≤ 2^40
		{raw: "_page=1000000000000&_perPage=1", want: pageQuery{perPage: 1, page: int(bigPages[0])}},
		{raw: "_page=1099511627776&_perPage=1", want: pageQuery{perPage: 1, page: int(bigPages[1])}},
		{raw: "_page=01099511627776&_perPage=1", want: pageQuery{perPage: 1, page: int(bigPages[1])}},
		{raw: "_page=1099511627777&_perPage=1", wantErr: "_page must be a whole number from 1 to 1099511627776,"},
		{raw: "_page=109951162777&_perPage=10", want: pageQuery{perPage: 10, page: int(bigPages[2])}},
		{raw: "_page=109951162778&_perPage=10", wantErr: "from 1 to 109951162777,"},
		{raw: "_page=99999999999999999999&_perPage=1", wantErr: "from 1 to 1099511627776,"},
		{raw: "_perPage=0000000000000000001", want: pageQuery{perPage: 1}},
		{raw: "a%zz=1", wantErr: "percent-encoding"},
		{raw: "_cursor=%zz", wantErr: "percent-encoding"},
		// a pair a backend's parser would drop in silence: refused, named
		{raw: "_perPage=5&_filters=%7B%22type%22%3A%22I%22%7D%ZZ", wantErr: `pair "_filters=%7B%22type%22%3A%22I%22%7D%ZZ" is not valid percent-encoding`},
		{raw: "search=50%%20off", wantErr: `pair "search=50%%20off"`},
		{raw: "search=50%", wantErr: `pair "search=50%"`},
		{raw: "search=50%2", wantErr: `pair "search=50%2"`},
		{raw: "a=1&b=%G1", wantErr: `pair "b=%G1"`},
		{raw: "a%2=1", wantErr: "percent-encoding"},
		{raw: "search=50%25%20off&x=%e2%82%ac", want: pageQuery{perPage: 10, forward: "search=50%25%20off&x=%e2%82%ac"}},
		{raw: "a=1;b=2", wantErr: "';'"},
		{raw: "_cursor=", wantErr: "_cursor is empty"},
		{raw: "x=" + strings.Repeat("a", 600), wantErr: "longer than 512 bytes"},
		// names a backend may read as the gateway's own parameters
		{raw: "_PAGE=2", wantErr: `"_PAGE" could be read as _page`},
		{raw: "_perpage=2", wantErr: "could be read as _perPage"},
		{raw: ".page=2", wantErr: "could be read as _page"},
		{raw: "+%2Epage=2", wantErr: "could be read as _page"},
		{raw: "++_page=2", wantErr: "could be read as _page"},
		{raw: "_page[]=2", wantErr: "could be read as _page"},
		{raw: "_page%5B0%5D=2", wantErr: "could be read as _page"},
		{raw: "_page%00=2", wantErr: "could be read as _page"},
		{raw: "%255Fpage=2", wantErr: "could be read as _page"},
		{raw: "%25255FperPage=2", wantErr: "could be read as _perPage"},
		{raw: ".sortField=date", wantErr: "could be read as _sortField"},
		{raw: "_Cursor=abc", wantErr: "could be read as _cursor"},
		// LiveAgent's result window: a backend honours it over _page
		{raw: "_from=0", wantErr: "_from is not served"},
		{raw: "_to=25&_perPage=10", wantErr: "_to is not served"},
		{raw: "_cursor=abc&_from=0&_to=10", wantErr: "_from is not served"},
		{raw: "_page=5&_perPage=10&_from=0&_to=10", wantErr: "_from is not served"},
		{raw: "%5Ffrom=0", wantErr: "_from is not served"},
		{raw: "_FROM=0", wantErr: "could be read as _from"},
		{raw: ".to=9", wantErr: "could be read as _to"},
		{raw: "_from[]=0", wantErr: "could be read as _from"},
		// near names that no backend reads as ours pass
		{raw: "page=2&per_page=3&_pages=1&x_page=1&_page_size=5&+page=1&_sort.field=x", want: pageQuery{perPage: 10, forward: "page=2&per_page=3&_pages=1&x_page=1&_page_size=5&+page=1&_sort.field=x"}},
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

func TestParsePageQueryCustomSort(t *testing.T) {
	g := testGateway()
	g.sortParams = url.Values{"sort": {"id"}, "order": {"asc"}}
	g.shadowNames = shadowNames(g.sortParams, legacy.Dialect{})
	for _, tc := range []struct{ raw, forward, wantErr string }{
		{raw: "sort=id&order=ASC&x=1", forward: "x=1"},
		{raw: "sort=date", wantErr: "omit sort, or send sort=id"},
		{raw: "order=desc", wantErr: "omit order, or send order=asc"},
		{raw: "sort=id&sort=id", wantErr: "sort is repeated"},
		{raw: "Sort=date", wantErr: "could be read as sort"},
		{raw: "order[]=desc", wantErr: "could be read as order"},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			q, err := g.parsePageQuery(tc.raw)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.forward, q.forward)
		})
	}
}

// backendName is how a lenient backend could read a parameter name: decoded
// as often as it nests, trimmed, ' ' and '.' as '_', cut at '[' or NUL,
// lower case. It is written apart from backendReading on purpose.
func backendName(k string) string {
	for range 4 {
		d, err := url.QueryUnescape(k)
		if err != nil || d == k {
			break
		}
		k = d
	}
	k, _, _ = strings.Cut(k, "[")
	k, _, _ = strings.Cut(k, "\x00")
	k = strings.TrimSpace(k)
	k = strings.ReplaceAll(strings.ReplaceAll(k, " ", "_"), ".", "_")
	return strings.ToLower(k)
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
			k, v, _ := strings.Cut(pair, "=")
			key, err := url.QueryUnescape(k)
			if err != nil {
				t.Fatalf("forwarded a bad key %q", k)
			}
			if _, err := url.QueryUnescape(v); err != nil {
				t.Fatalf("forwarded %q, whose value a backend's parser would drop, from %q", pair, raw)
			}
			switch key {
			case "_cursor", "_page", "_perPage", "_sortField", "_sortDir":
				t.Fatalf("forwarded %q from %q", key, raw)
			}
			switch backendName(k) {
			case "_cursor", "_page", "_perpage", "_sortfield", "_sortdir":
				t.Fatalf("forwarded %q, which a backend may read as %q, from %q", k, backendName(k), raw)
			}
		}
	})
}

// TestCheckQueryEncoding: every pair of a query is valid percent-encoding,
// as a backend's parser needs to keep it, or the pair is named.
func TestCheckQueryEncoding(t *testing.T) {
	for _, tc := range []struct{ raw, wantPair string }{
		{raw: ""},
		{raw: "a=1&b=2"},
		{raw: "a=%41&b=%e2%82%AC&c=%25"},
		{raw: "_filters=%7B%7D%ZZ", wantPair: `"_filters=%7B%7D%ZZ"`},
		{raw: "ok=1&search=50%", wantPair: `"search=50%"`},
		{raw: "search=50%%20off&z=1", wantPair: `"search=50%%20off"`},
		{raw: "%=1", wantPair: `"%=1"`},
		{raw: "a=%4", wantPair: `"a=%4"`},
		{raw: "a=%x1", wantPair: `"a=%x1"`},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			err := checkQueryEncoding(tc.raw)
			_, parseErr := url.ParseQuery(tc.raw)
			if tc.wantPair == "" {
				require.NoError(t, err)
				require.NoError(t, parseErr, "Go's parser keeps every pair")
				return
			}
			var qe *queryError
			require.ErrorAs(t, err, &qe)
			assert.Contains(t, err.Error(), "the query pair "+tc.wantPair+" is not valid percent-encoding")
			assert.Error(t, parseErr, "Go's parser would drop the pair")
		})
	}
}
