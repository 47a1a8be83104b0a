package caddymodule

import (
	"net/url"
	"slices"
	"testing"

	"github.com/helpdesk-gateway/gateway/legacy"
	"github.com/helpdesk-gateway/gateway/translate"
)

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
		g      *Gateway
		writes url.Values // what the gateway writes into every window call
		owned  []string   // as backendName reads them
	}
	sort := url.Values{"_sortField": {"id"}, "_sortDir": {"ASC"}}
	var subjects []subject
	for _, d := range []legacy.Dialect{{}, {Page: "page[number]", PerPage: "page[size]"}, {Offset: "offset", PerPage: "limit"}} {
		g := testGateway()
		g.BackendSort, g.sortParams = sort.Encode(), sort
		g.dialect, g.backendOnly = d, backendOnlyParams(d)
		g.shadowNames = shadowNames(sort, d)
		writes := url.Values{}
		for k, v := range sort {
			writes[k] = v
		}
		for _, name := range d.Params() {
			writes[name] = nil // any value: the window's
		}
		var owned []string
		for _, name := range slices.Concat(g.shadowNames, []string{"_cursor"}) {
			owned = append(owned, backendName(name))
		}
		subjects = append(subjects, subject{g, writes, owned})
	}
	f.Fuzz(func(t *testing.T, raw string) {
		for _, s := range subjects {
			q, err := s.g.parsePageQuery(raw)
			if err != nil {
				continue
			}
			sent, err := url.ParseQuery(raw)
			if err != nil {
				t.Fatalf("accepted %q, which a backend's parser cuts short: %v", raw, err)
			}
			call := string(s.g.dialect.AppendQuery(nil, q.forward, s.g.BackendSort, translate.Window{Start: 0, Size: 11}))
			read, err := url.ParseQuery(call)
			if err != nil {
				t.Fatalf("%+v: the backend drops part of %q (from %q): %v", s.g.dialect, call, raw, err)
			}
			for name, values := range read {
				if want, ours := s.writes[name]; ours {
					if len(values) != 1 || want != nil && values[0] != want[0] {
						t.Fatalf("%+v: %s=%q in %q, from %q: the gateway's own, once", s.g.dialect, name, values, call, raw)
					}
					continue
				}
				if slices.Contains(s.owned, backendName(name)) {
					t.Fatalf("%+v: %q in %q, which a backend may read as %q, from %q", s.g.dialect, name, call, backendName(name), raw)
				}
				left := slices.Clone(sent[name])
				for _, v := range values {
					i := slices.Index(left, v)
					if i < 0 {
						t.Fatalf("%+v: %s=%q in %q was not sent so (%q)", s.g.dialect, name, v, call, raw)
					}
					left = slices.Delete(left, i, i+1)
				}
			}
		}
	})
}
