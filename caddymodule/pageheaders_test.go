package caddymodule

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMergeTokens(t *testing.T) {
	for _, tc := range []struct {
		name string
		have []string // the field's values before
		add  []string
		want []string
	}{
		{"absent", nil, []string{"next_page_cursor"}, []string{"next_page_cursor"}},
		{"appended", []string{"X-Request-Id"}, []string{"next_page_cursor"}, []string{"X-Request-Id, next_page_cursor"}},
		{"several lines become one", []string{"A, B", "C"}, []string{"next_page_cursor", "Link"}, []string{"A, B, C, next_page_cursor, Link"}},
		{"already there in another case: untouched", []string{"a,  NEXT_PAGE_CURSOR"}, []string{"next_page_cursor"}, []string{"a,  NEXT_PAGE_CURSOR"}},
		{"duplicates and empty items go when rewriting", []string{"A, a, , B"}, []string{"Link"}, []string{"A, B, Link"}},
		{"a wildcard is kept, the name still added (credentialed requests read * literally)", []string{"*"}, []string{"next_page_cursor"}, []string{"*, next_page_cursor"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for _, v := range tc.have {
				h.Add("Access-Control-Expose-Headers", v)
			}
			mergeTokens(h, "Access-Control-Expose-Headers", tc.add)
			assert.Equal(t, tc.want, h.Values("Access-Control-Expose-Headers"))
		})
	}
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

func TestValidHeaderName(t *testing.T) {
	for name, want := range map[string]bool{
		"Link": true, "X-Page": true, "x_total~count": true,
		"": false, "X Page": false, "X-Page:": false, "Ü": false, "a\r\nb": false,
	} {
		assert.Equal(t, want, validHeaderName(name), name)
	}
}

func TestNextLink(t *testing.T) {
	q := pageQuery{perPage: 25, forward: `status=open&q="x"`}
	r := httptest.NewRequest(http.MethodGet, "/calls?_perPage=25&status=open", nil)
	assert.Equal(t, `</calls?status=open&q=%22x%22&_perPage=25&_cursor=eyJpZCI6IjEyIn0%3D>; rel="next"`,
		nextLink(r, q, "eyJpZCI6IjEyIn0="))

	// Rewritten inside Caddy: the link names the path the client asked for.
	orig := httptest.NewRequest(http.MethodGet, "/v3/calls?_perPage=25", nil)
	r = r.WithContext(context.WithValue(r.Context(), caddyhttp.OriginalRequestCtxKey, *orig))
	assert.Equal(t, `</v3/calls?_perPage=25&_cursor=abc>; rel="next"`, nextLink(r, pageQuery{perPage: 25}, "abc"))
}

var linkRE = regexp.MustCompile(`^<([!#-;=?-~]*)>; rel="next"$`) // URI characters only, no '<' or '>'

// FuzzNextLink: whatever query a client sends, the Link is one well-formed
// RFC 8288 link of URI characters, and each of the client's parameters
// means there what it meant in the client's query.
func FuzzNextLink(f *testing.F) {
	g := testGateway()
	r := httptest.NewRequest(http.MethodGet, "/calls", nil)
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := g.parsePageQuery(raw)
		if err != nil {
			return
		}
		link := nextLink(r, q, "eyJpZCI6IjEifQ==")
		m := linkRE.FindStringSubmatch(link)
		require.NotNil(t, m, "%q gave %q", raw, link)
		u, err := url.Parse(m[1])
		require.NoError(t, err)
		require.Equal(t, "/calls", u.Path)
		got := strings.Split(u.RawQuery, "&")
		require.Equal(t, "_cursor=eyJpZCI6IjEifQ%3D%3D", got[len(got)-1])
		if q.forward == "" {
			require.Len(t, got, 2)
			return
		}
		in := strings.Split(q.forward, "&")
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
