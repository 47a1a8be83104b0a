package pagequery

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/legacy"
	"github.com/helpdesk-gateway/gateway/translate"
)

// testSettings are the settings of a gateway with LiveAgent's paging names
// and no backend_sort of its own.
func testSettings() *Settings {
	return &Settings{IDField: "id", DefaultPerPage: 10, MaxPerPage: 100, MaxQueryLength: 512, ShadowNames: ShadowNames(nil, legacy.Dialect{})}
}

// bigPages are _page values past 32 bits, as variables: the cases that
// use them run on 64-bit ints, and the package must still build (go vet)
// for 32-bit ones.
var bigPages = [...]int64{1000000000000, 1 << 40, 109951162777}

func TestParsePageQuery(t *testing.T) {
	g := testSettings()
	for _, tc := range []struct {
		raw     string
		want    Query
		wantErr string
	}{
		{raw: "", want: Query{PerPage: 10}},
		{raw: "_perPage=5&a=1", want: Query{PerPage: 5, Forward: "a=1"}},
		{raw: "a=%20x&_cursor=abc%2B&b&&c=", want: Query{PerPage: 10, Cursor: "abc+", Forward: "a=%20x&b&c="}},
		{raw: "_page=3&_perPage=20", want: Query{PerPage: 20, Page: 3}},
		{raw: "_sortField=id&_sortDir=ASC&z=9", want: Query{PerPage: 10, Forward: "z=9"}},
		{raw: "_filters=%5B%5D&x=1", want: Query{PerPage: 10, Forward: "_filters=%5B%5D&x=1"}},
		// smuggling: encoded names are the same parameters, never forwarded
		{raw: "%5Fpage=2", want: Query{PerPage: 10, Page: 2}},
		{raw: "%5fperPage=7&%5FsortField=id", want: Query{PerPage: 7}},
		{raw: "_page=1&%5Fpage=2", wantErr: "_page is repeated"},
		{raw: "_sortField=date", wantErr: "ascending id order"},
		{raw: "%5FsortDir=desc", wantErr: "ascending id order"},
		{raw: "_perPage=+5", wantErr: "_perPage must be"},
		{raw: "_perPage=5.0", wantErr: "_perPage must be"},
		{raw: "_perPage=99999999999999999999", wantErr: "_perPage must be"},
		{raw: "_page=999999999999", wantErr: "_page must be a whole number from 1 to 109951162777,"},
		// _page's bound and its message agree: _page × _perPage ≤ 2^40
		{raw: "_page=1000000000000&_perPage=1", want: Query{PerPage: 1, Page: int(bigPages[0])}},
		{raw: "_page=1099511627776&_perPage=1", want: Query{PerPage: 1, Page: int(bigPages[1])}},
		{raw: "_page=01099511627776&_perPage=1", want: Query{PerPage: 1, Page: int(bigPages[1])}},
		{raw: "_page=1099511627777&_perPage=1", wantErr: "_page must be a whole number from 1 to 1099511627776,"},
		{raw: "_page=109951162777&_perPage=10", want: Query{PerPage: 10, Page: int(bigPages[2])}},
		{raw: "_page=109951162778&_perPage=10", wantErr: "from 1 to 109951162777,"},
		{raw: "_page=99999999999999999999&_perPage=1", wantErr: "from 1 to 1099511627776,"},
		{raw: "_perPage=0000000000000000001", want: Query{PerPage: 1}},
		{raw: "a%zz=1", wantErr: "percent-encoding"},
		{raw: "_cursor=%zz", wantErr: "percent-encoding"},
		// a pair a backend's parser would drop in silence: refused, named
		{raw: "_perPage=5&_filters=%7B%22type%22%3A%22I%22%7D%ZZ", wantErr: `pair "_filters=%7B%22type%22%3A%22I%22%7D%ZZ" is not valid percent-encoding`},
		{raw: "search=50%%20off", wantErr: `pair "search=50%%20off"`},
		{raw: "search=50%", wantErr: `pair "search=50%"`},
		{raw: "search=50%2", wantErr: `pair "search=50%2"`},
		{raw: "a=1&b=%G1", wantErr: `pair "b=%G1"`},
		{raw: "a%2=1", wantErr: "percent-encoding"},
		{raw: "search=50%25%20off&x=%e2%82%ac", want: Query{PerPage: 10, Forward: "search=50%25%20off&x=%e2%82%ac"}},
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
		{raw: "page=2&per_page=3&_pages=1&x_page=1&_page_size=5&+page=1&_sort.field=x", want: Query{PerPage: 10, Forward: "page=2&per_page=3&_pages=1&x_page=1&_page_size=5&+page=1&_sort.field=x"}},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			got, err := Parse(tc.raw, g)
			if tc.wantErr != "" {
				var qe *Error
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
	g := testSettings()
	g.SortParams = url.Values{"sort": {"id"}, "order": {"asc"}}
	g.ShadowNames = ShadowNames(g.SortParams, legacy.Dialect{})
	for _, tc := range []struct{ raw, forward, wantErr string }{
		{raw: "sort=id&order=ASC&x=1", forward: "x=1"},
		{raw: "sort=date", wantErr: "omit sort, or send sort=id"},
		{raw: "order=desc", wantErr: "omit order, or send order=asc"},
		{raw: "sort=id&sort=id", wantErr: "sort is repeated"},
		{raw: "Sort=date", wantErr: "could be read as sort"},
		{raw: "order[]=desc", wantErr: "could be read as order"},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			q, err := Parse(tc.raw, g)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.forward, q.Forward)
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
	g := testSettings()
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := Parse(raw, g)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		if q.PerPage < 1 || q.PerPage > g.MaxPerPage || q.Page < 0 {
			t.Fatalf("bad numbers %+v", q)
		}
		if q.Page > 0 && q.Cursor != "" {
			t.Fatalf("page and cursor both set from %q", raw)
		}
		for pair := range strings.SplitSeq(q.Forward, "&") {
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
			err := CheckEncoding(tc.raw)
			_, parseErr := url.ParseQuery(tc.raw)
			if tc.wantPair == "" {
				require.NoError(t, err)
				require.NoError(t, parseErr, "Go's parser keeps every pair")
				return
			}
			var qe *Error
			require.ErrorAs(t, err, &qe)
			assert.Contains(t, err.Error(), "the query pair "+tc.wantPair+" is not valid percent-encoding")
			assert.Error(t, parseErr, "Go's parser would drop the pair")
		})
	}
}

// TestParsePageQueryDialect: the backend's own paging names are the
// gateway's, in any spelling; where they differ from the clients', the
// clients' names keep working and are never forwarded.
func TestParsePageQueryDialect(t *testing.T) {
	for _, tc := range []struct {
		name    string
		d       legacy.Dialect
		raw     string
		want    Query
		wantErr string
	}{
		{name: "zendesk: client names still served", d: legacy.Dialect{Page: "page", PerPage: "per_page"},
			raw: "_page=2&_perPage=5&x=1", want: Query{Page: 2, PerPage: 5, Forward: "x=1"}},
		{name: "zendesk: page refused", d: legacy.Dialect{Page: "page", PerPage: "per_page"},
			raw: "page=2", wantErr: "page is the backend's own paging parameter, which the gateway sets; send _page and _perPage"},
		{name: "zendesk: per_page refused", d: legacy.Dialect{Page: "page", PerPage: "per_page"},
			raw: "per_page=100", wantErr: "per_page is the backend's own paging parameter"},
		{name: "zendesk: encoded name", d: legacy.Dialect{Page: "page", PerPage: "per_page"},
			raw: "%70age=2", wantErr: "page is the backend's own paging parameter"},
		{name: "zendesk: another case", d: legacy.Dialect{Page: "page", PerPage: "per_page"},
			raw: "Page=2", wantErr: `"Page" could be read as page`},
		{name: "zendesk: PHP's reading", d: legacy.Dialect{Page: "page", PerPage: "per_page"},
			raw: "per.page=2", wantErr: `could be read as per_page`},
		{name: "zendesk: array", d: legacy.Dialect{Page: "page", PerPage: "per_page"},
			raw: "page[]=2", wantErr: `could be read as page`},
		{name: "zendesk: _page spellings still refused", d: legacy.Dialect{Page: "page", PerPage: "per_page"},
			raw: "_PAGE=2", wantErr: `could be read as _page`},
		{name: "zendesk: unrelated names pass", d: legacy.Dialect{Page: "page", PerPage: "per_page"},
			raw: "pages=2&page_size=3", want: Query{PerPage: 10, Forward: "pages=2&page_size=3"}},
		{name: "offset: offset refused", d: legacy.Dialect{Offset: "startAt", PerPage: "maxResults"},
			raw: "startAt=0", wantErr: "startAt is the backend's own paging parameter"},
		{name: "offset: limit in another case", d: legacy.Dialect{Offset: "startAt", PerPage: "maxResults"},
			raw: "maxresults=1000", wantErr: `"maxresults" could be read as maxResults`},
		{name: "json:api: nested name refused", d: legacy.Dialect{Page: "page[number]", PerPage: "page[size]"},
			raw: "page[size]=3", wantErr: "page[size] is the backend's own paging parameter"},
		{name: "json:api: any key under the root", d: legacy.Dialect{Page: "page[number]", PerPage: "page[size]"},
			raw: "page%5Bother%5D=3", wantErr: `could be read as page[number]`},
		{name: "json:api: the bare root", d: legacy.Dialect{Page: "page[number]", PerPage: "page[size]"},
			raw: "page=3", wantErr: `could be read as page[number]`},
		{name: "liveagent: offset _from refused as ever", d: legacy.Dialect{Offset: "_from"},
			raw: "_from=3", wantErr: "_from is not served"},
		{name: "keyset: the template's name refused", d: legacy.Dialect{Keyset: "id_gt={id}"},
			raw: "id_gt=5", wantErr: "id_gt is the backend's own paging parameter"},
		{name: "keyset: in another spelling", d: legacy.Dialect{Keyset: "id_gt={id}"},
			raw: "Id.gt=5", wantErr: `"Id.gt" could be read as id_gt`},
		{name: "keyset: json-server's id_gte", d: legacy.Dialect{Keyset: "id_gte={id}"},
			raw: "id_gte=5", wantErr: "id_gte is the backend's own paging parameter"},
		{name: "keyset: PostgREST's id", d: legacy.Dialect{Keyset: "id=gt.{id}"},
			raw: "id=lt.5", wantErr: "id is the backend's own paging parameter"},
		{name: "keyset: PocketBase's filter", d: legacy.Dialect{Keyset: "filter=(id>'{id}')", Page: "page", PerPage: "perPage"},
			raw: "filter%5B%5D=x", wantErr: `could be read as filter`},
		{name: "keyset: other names pass", d: legacy.Dialect{Keyset: "id_gt={id}"},
			raw: "id_lt=5&ids=1", want: Query{PerPage: 10, Forward: "id_lt=5&ids=1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := testSettings()
			g.BackendOnly = BackendOnly(tc.d)
			g.ShadowNames = ShadowNames(url.Values{"_sortField": {"id"}, "_sortDir": {"ASC"}}, tc.d)
			got, err := Parse(tc.raw, g)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// FuzzParsePageQueryDialect checks, for backends paged by other names
// (page[number]/page[size] and offset/limit), that whatever a client
// sends, no forwarded parameter is one a backend may read as its own
// paging names or under their root, however encoded, nor one of the
// gateway's client-facing names.
func FuzzParsePageQueryDialect(f *testing.F) {
	common := []string{"_cursor", "_page", "_perpage", "_sortfield", "_sortdir", "_from", "_to"}
	type subject struct {
		g     *Settings
		d     legacy.Dialect
		owned []string // as backendName reads them
	}
	var subjects []subject
	for _, d := range []legacy.Dialect{{Page: "page[number]", PerPage: "page[size]"}, {Offset: "offset", PerPage: "limit"},
		{Page: "page", PerPage: "perPage", Keyset: "filter=(id>'{id}')"}} {
		g := testSettings()
		g.BackendOnly = BackendOnly(d)
		g.ShadowNames = ShadowNames(url.Values{"_sortField": {"id"}, "_sortDir": {"ASC"}}, d)
		owned := slices.Clone(common)
		for _, name := range d.Params() {
			owned = append(owned, backendName(name))
		}
		subjects = append(subjects, subject{g, d, owned})
	}
	f.Fuzz(func(t *testing.T, raw string) {
		for _, s := range subjects {
			q, err := Parse(raw, s.g)
			if err != nil {
				if _, ok := err.(*Error); !ok {
					t.Fatalf("error of type %T: %v", err, err)
				}
				continue
			}
			for pair := range strings.SplitSeq(q.Forward, "&") {
				k, _, _ := strings.Cut(pair, "=")
				if name := backendName(k); slices.Contains(s.owned, name) {
					t.Fatalf("%+v: forwarded %q, which a backend may read as %q, from %q", s.d, k, name, raw)
				}
				if _, err := url.ParseQuery(pair); err != nil {
					t.Fatalf("%+v: forwarded %q, which a backend's parser would drop (%v), from %q", s.d, pair, err, raw)
				}
			}
		}
	})
}

// FuzzBackendQuery holds what a client sends on a cursor endpoint to what
// the backend reads of the gateway's window call: for a raw client query
// the gateway accepts, the backend's query parser (Go's url.ParseQuery,
// which drops a malformed pair in silence, as many do) reads every pair
// of the call; each pair is either one the gateway writes (the sort and
// the window, once, with its value) or one the client sent, unchanged, and
// no pair of the client's bears a name the gateway owns in any spelling a
// backend may fold it to. The dialects: LiveAgent's pages, JSON:API-style
// bracketed pages, offsets and limits.
func FuzzBackendQuery(f *testing.F) {
	for _, seed := range []string{
		"", "_perPage=5&a=1", "a=%20x&_cursor=eyJpZCI6IjEifQ&b&&c=", "_filters=%7B%22type%22%3A%22I%22%7D%ZZ",
		"search=50%25+off", "_PerPage=5", "_page%5B%5D=2", "page[number]=3", "Offset=9", "a=1&a=2&a=1",
		"_sortField=id&_sortDir=ASC", "_from=1&_to=9", "x=%E2%9C%93&y=%00", "limit.=3", "a+b=c+d",
	} {
		f.Add(seed)
	}
	type subject struct {
		g      *Settings
		d      legacy.Dialect
		writes url.Values // what the gateway writes into every window call
		owned  []string   // as backendName reads them
	}
	sort := url.Values{"_sortField": {"id"}, "_sortDir": {"ASC"}}
	var subjects []subject
	for _, d := range []legacy.Dialect{{}, {Page: "page[number]", PerPage: "page[size]"}, {Offset: "offset", PerPage: "limit"}} {
		g := testSettings()
		g.SortParams = sort
		g.BackendOnly = BackendOnly(d)
		g.ShadowNames = ShadowNames(sort, d)
		writes := url.Values{}
		for k, v := range sort {
			writes[k] = v
		}
		for _, name := range d.Params() {
			writes[name] = nil // any value: the window's
		}
		var owned []string
		for _, name := range slices.Concat(g.ShadowNames, []string{"_cursor"}) {
			owned = append(owned, backendName(name))
		}
		subjects = append(subjects, subject{g, d, writes, owned})
	}
	f.Fuzz(func(t *testing.T, raw string) {
		for _, s := range subjects {
			q, err := Parse(raw, s.g)
			if err != nil {
				continue
			}
			sent, err := url.ParseQuery(raw)
			if err != nil {
				t.Fatalf("accepted %q, which a backend's parser cuts short: %v", raw, err)
			}
			call := string(s.d.AppendQuery(nil, q.Forward, sort.Encode(), translate.Window{Start: 0, Size: 11}))
			read, err := url.ParseQuery(call)
			if err != nil {
				t.Fatalf("%+v: the backend drops part of %q (from %q): %v", s.d, call, raw, err)
			}
			for name, values := range read {
				if want, ours := s.writes[name]; ours {
					if len(values) != 1 || want != nil && values[0] != want[0] {
						t.Fatalf("%+v: %s=%q in %q, from %q: the gateway's own, once", s.d, name, values, call, raw)
					}
					continue
				}
				if slices.Contains(s.owned, backendName(name)) {
					t.Fatalf("%+v: %q in %q, which a backend may read as %q, from %q", s.d, name, call, backendName(name), raw)
				}
				left := slices.Clone(sent[name])
				for _, v := range values {
					i := slices.Index(left, v)
					if i < 0 {
						t.Fatalf("%+v: %s=%q in %q was not sent so (%q)", s.d, name, v, call, raw)
					}
					left = slices.Delete(left, i, i+1)
				}
			}
		}
	})
}

func TestAppendQueryEscaped(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"a=b&c", "a=b&c"},
		{"q=a+b%2Bc&x=%E2%9C%93", "q=a+b%2Bc&x=%E2%9C%93"},
		{`q="<x>"`, "q=%22%3Cx%3E%22"},
		{"pct=100%&p=%4", "pct=100%25&p=%254"},
		{"p=%zz", "p=%25zz"},
		{"s=a b\t\x00\xff", "s=a%20b%09%00%FF"},
		{"path=/a/b?c:d@e!$'()*,;~", "path=/a/b?c:d@e!$'()*,;~"},
		{"u={x}|^`\\[]#", "u=%7Bx%7D%7C%5E%60%5C%5B%5D%23"},
	} {
		assert.Equal(t, tc.want, string(appendQueryEscaped(nil, tc.in)), tc.in)
	}
}

func TestNextLink(t *testing.T) {
	q := Query{PerPage: 25, Forward: `status=open&q="x"`}
	u := &url.URL{Path: "/calls"}
	assert.Equal(t, `</calls?status=open&q=%22x%22&_perPage=25&_cursor=eyJpZCI6IjEyIn0%3D>; rel="next"`,
		NextLink(u, q, "eyJpZCI6IjEyIn0="))
	assert.Equal(t, `</v3/my%20calls?_perPage=25&_cursor=abc>; rel="next"`, NextLink(&url.URL{Path: "/v3/my calls"}, Query{PerPage: 25}, "abc"))
}

var linkRE = regexp.MustCompile(`^<([!#-;=?-~]*)>; rel="next"$`) // URI characters only, no '<' or '>'

// FuzzNextLink: whatever query a client sends, the Link is one well-formed
// RFC 8288 link of URI characters, and each of the client's parameters
// means there what it meant in the client's query.
func FuzzNextLink(f *testing.F) {
	g := testSettings()
	r := httptest.NewRequest(http.MethodGet, "/calls", nil)
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := Parse(raw, g)
		if err != nil {
			return
		}
		link := NextLink(r.URL, q, "eyJpZCI6IjEifQ==")
		m := linkRE.FindStringSubmatch(link)
		require.NotNil(t, m, "%q gave %q", raw, link)
		u, err := url.Parse(m[1])
		require.NoError(t, err)
		require.Equal(t, "/calls", u.Path)
		got := strings.Split(u.RawQuery, "&")
		require.Equal(t, "_cursor=eyJpZCI6IjEifQ%3D%3D", got[len(got)-1])
		if q.Forward == "" {
			require.Len(t, got, 2)
			return
		}
		in := strings.Split(q.Forward, "&")
		require.Len(t, got, len(in)+2)
		for i, pair := range in {
			out, err := url.QueryUnescape(got[i])
			require.NoError(t, err, got[i])
			if want, err := url.QueryUnescape(pair); err == nil {
				require.Equal(t, want, out, "pair %d of %q", i, raw)
			}
		}
	})
}
