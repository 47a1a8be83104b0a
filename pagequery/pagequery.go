// Package pagequery reads what a client asks of a cursor endpoint (its
// _cursor, _perPage and _page, the sort it may name, and the parameters
// it forwards to the backend) and writes the Link to its next page. The
// gateway owns the paging parameters: a client may not slip them, or
// the backend dialect's own names, past it in any spelling a backend
// could fold them to, and what it forwards keeps its bytes. Every error
// is an *Error, whose text is for the client.
package pagequery

import (
	"fmt"
	"maps"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/helpdesk-gateway/gateway/legacy"
)

// Query is what a client asked of a cursor endpoint.
type Query struct {
	Cursor  string // raw _cursor value, "" when absent
	PerPage int
	Page    int    // _page, 0 when absent
	Forward string // the client's other parameters, byte for byte
}

// Error is a client mistake in the query; its text is for the client.
type Error struct{ msg string }

func (e *Error) Error() string { return e.msg }

func badQuery(format string, args ...any) error {
	return &Error{fmt.Sprintf(format, args...)}
}

// Settings are what Parse reads of the gateway's configuration.
type Settings struct {
	IDField        string     // id_field: the one sort order a client may ask for
	DefaultPerPage int        // default_per_page
	MaxPerPage     int        // max_per_page
	MaxQueryLength int        // max_query_length, in bytes
	SortParams     url.Values // backend_sort, parsed
	BackendOnly    []string   // the dialect's names that are not the clients' as well
	ShadowNames    []string   // the names parameters must not pass for (ShadowNames)
}

// Parse splits a cursor endpoint's raw query into the gateway's
// parameters and the ones it forwards. Keys are compared decoded, so
// %5Fpage is _page: a client cannot slip paging or sort parameters past
// the gateway into its own backend query. Forwarded pairs keep their
// original bytes.
func Parse(raw string, g *Settings) (Query, error) {
	q := Query{PerPage: g.DefaultPerPage}
	if len(raw) > g.MaxQueryLength {
		return q, badQuery("the query is longer than %d bytes", g.MaxQueryLength)
	}
	var kept []string
	seen := map[string]bool{}
	var perPage, page, sortField, sortDir string
	for pair := range strings.SplitSeq(raw, "&") {
		if pair == "" {
			continue
		}
		if strings.Contains(pair, ";") {
			return q, badQuery("the query contains ';': separate parameters with '&' and encode ';' in values as %%3B")
		}
		if err := checkPairEncoding(pair); err != nil {
			return q, err
		}
		rawKey, rawValue, _ := strings.Cut(pair, "=")
		key, err := url.QueryUnescape(rawKey)
		if err != nil {
			return q, badQuery("the query parameter name %.40q is not valid percent-encoding", rawKey)
		}
		var dst *string
		switch key {
		case "_cursor":
			dst = &q.Cursor
		case "_perPage":
			dst = &perPage
		case "_page":
			dst = &page
		case "_sortField":
			dst = &sortField
		case "_sortDir":
			dst = &sortDir
		case "_from", "_to":
			return q, badQuery("%s is not served on this endpoint: a backend reads it as its own result window, over _page. Send _page and _perPage for a numbered page, or _cursor to continue a walk", key)
		case "_filters":
			if seen[key] {
				return q, badQuery("_filters is repeated: send it once")
			}
			seen[key] = true
		}
		if dst == nil {
			if slices.Contains(g.BackendOnly, key) {
				return q, badQuery("%.40s is the backend's own paging parameter, which the gateway sets; send _page and _perPage for a numbered page, or _cursor to continue a walk", key)
			}
			if want, ok := g.SortParams[key]; ok && key != "_filters" {
				// One of backend_sort's own parameters: the backend gets
				// the gateway's value, once.
				if seen[key] {
					return q, badQuery("%s is repeated: send it once", key)
				}
				seen[key] = true
				value, err := url.QueryUnescape(rawValue)
				if err != nil || !strings.EqualFold(value, want[0]) {
					return q, badQuery("this endpoint pages in ascending %s order: omit %s, or send %s=%s", g.IDField, key, key, want[0])
				}
				continue
			}
			if err := ShadowError(rawKey, key, g.ShadowNames); err != nil {
				return q, err
			}
			kept = append(kept, pair)
			continue
		}
		if seen[key] {
			return q, badQuery("%s is repeated: send it once", key)
		}
		seen[key] = true
		if *dst, err = url.QueryUnescape(rawValue); err != nil {
			return q, badQuery("the value of %s is not valid percent-encoding", key)
		}
	}
	if seen["_cursor"] && seen["_page"] {
		return q, badQuery("_page and _cursor cannot be used together: send _cursor to continue a walk, or _page for a numbered page")
	}
	if seen["_cursor"] && q.Cursor == "" {
		return q, badQuery(`_cursor is empty; omit it for the first page, or send the next_page_cursor header of the previous page`)
	}
	if seen["_perPage"] {
		n, ok := wholeNumber(perPage)
		if !ok || n < 1 || n > g.MaxPerPage {
			return q, badQuery("_perPage must be a whole number from 1 to %d, got %.20q", g.MaxPerPage, perPage)
		}
		q.PerPage = n
	}
	if seen["_page"] {
		n, ok := wholeNumber(page)
		if !ok || n < 1 || n > MaxPage/q.PerPage {
			return q, badQuery("_page must be a whole number from 1 to %d, got %.20q", MaxPage/q.PerPage, page)
		}
		q.Page = n
	}
	if seen["_sortField"] && sortField != g.IDField || seen["_sortDir"] && !strings.EqualFold(sortDir, "asc") {
		return q, badQuery("this endpoint pages in ascending %s order: omit _sortField and _sortDir, or send _sortField=%s&_sortDir=ASC", g.IDField, g.IDField)
	}
	q.Forward = strings.Join(kept, "&")
	return q, nil
}

// checkPairEncoding refuses a query pair (name=value, as sent) whose name
// or value is not valid percent-encoding: a '%' not followed by two hex
// digits. Go's, PHP's and many frameworks' query parsers drop such a pair
// in silence, so a _filters or a search the client sent would vanish on
// its way to the backend and the client would walk a list it did not ask
// for. The message quotes the pair, cut to a readable length, so the
// client can find it; a '%' meant literally is sent as %25.
func checkPairEncoding(pair string) error {
	for i := 0; ; i += 3 {
		j := strings.IndexByte(pair[i:], '%')
		if j < 0 {
			return nil
		}
		if i += j; i+2 >= len(pair) || !isHex(pair[i+1]) || !isHex(pair[i+2]) {
			return badQuery("the query pair %.60q is not valid percent-encoding: a %% must start %%XX with two hex digits; send a literal %% as %%25", pair)
		}
	}
}

// CheckEncoding is checkPairEncoding for each pair of a raw query: the
// filter-only endpoints forward the query whole, and hold it to this.
func CheckEncoding(raw string) error {
	if strings.IndexByte(raw, '%') < 0 {
		return nil
	}
	for pair := range strings.SplitSeq(raw, "&") {
		if err := checkPairEncoding(pair); err != nil {
			return err
		}
	}
	return nil
}

// MaxPage bounds _page * _perPage so offsets never overflow.
const MaxPage = min(1<<40, math.MaxInt) // 2^40, or less where int is 32 bits

// wholeNumber parses digits only: no sign, no spaces, and no more than an
// int holds (MaxPage, 2^40, has 13 digits; leading zeros count). The
// callers hold the number to their own bounds.
func wholeNumber(s string) (int, bool) {
	if s == "" || len(s) > 19 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// PagingParams are the parameters the gateway reads on a cursor endpoint
// and, but for _cursor, writes into its own backend queries.
var PagingParams = []string{"_cursor", "_page", "_perPage", "_sortField", "_sortDir"}

// windowParams are LiveAgent's result-set bounds, _from (start, which it
// honours over _page) and _to (end). Either would move the window the
// gateway asks the backend for, so a cursor endpoint refuses them.
var windowParams = []string{"_from", "_to"}

// ShadowNames lists the gateway's own parameters on a cursor endpoint,
// each once: the names a client must not smuggle past it in another
// spelling. They are PagingParams, windowParams, backend_sort's, and the
// names the backend's paging dialect writes (backend_page_param and the
// like), since each of them selects the window the backend answers.
func ShadowNames(sortParams url.Values, d legacy.Dialect) []string {
	names := slices.Concat(PagingParams, windowParams)
	for _, name := range slices.Concat(slices.Collect(maps.Keys(sortParams)), d.Params()) {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}

// ShadowError refuses key, as sent in the query (rawKey), when a backend
// could read it as one of names without it being exactly that name; a
// client could otherwise slip a second _page past the gateway into its own
// backend query, or an unchecked _filters past the validator.
func ShadowError(rawKey, key string, names []string) error {
	read := legacy.ParamReading(key)
	for _, name := range names {
		// A bracketed name, page[size], is read under its root: a client
		// may send nothing a backend would merge into it.
		if key != name && strings.EqualFold(read, legacy.ParamReading(name)) {
			return badQuery("the parameter name %.40q could be read as %s by the backend: send %s spelt exactly so, once", rawKey, name, name)
		}
	}
	return nil
}

// NextLink is the RFC 8288 link to the next page: the path the client
// asked for (u, before any rewrite in Caddy), the client's other parameters
// in their order, then _perPage and _cursor. The reference is relative (no
// scheme or host: behind proxies the gateway cannot know the client's),
// so a client resolves it against the URL it requested.
func NextLink(u *url.URL, q Query, cursor string) string {
	b := make([]byte, 0, 64+len(u.Path)+len(q.Forward)+len(cursor))
	b = append(b, '<')
	b = append(b, u.EscapedPath()...)
	b = append(b, '?')
	if q.Forward != "" {
		b = appendQueryEscaped(b, q.Forward)
		b = append(b, '&')
	}
	b = append(b, "_perPage="...)
	b = strconv.AppendInt(b, int64(q.PerPage), 10)
	b = append(b, "&_cursor="...)
	b = append(b, url.QueryEscape(cursor)...)
	b = append(b, `>; rel="next"`...)
	return string(b)
}

// appendQueryEscaped appends the client's query s as it came, but for the
// bytes a URI query cannot hold (a server may accept '<', '>', '"' or a
// stray '%' in a request line; in a Link they would end the reference or
// change its meaning), which are percent-encoded. The parameters keep
// their meaning: a valid %XX stays as it is.
func appendQueryEscaped(b []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			b = append(b, c)
		case c != '%' && queryByte(c):
			b = append(b, c)
		default:
			b = append(b, '%', hex[c>>4], hex[c&15])
		}
	}
	return b
}

// queryByte reports a byte RFC 3986 allows as it is in a query: unreserved,
// sub-delims, ':', '@', '/' and '?'.
func queryByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("-._~!$&'()*+,;=:@/?", c) >= 0
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// BackendOnly returns the names the dialect writes that clients do not
// use themselves: with LiveAgent's names none, since a client's _page and
// _perPage are the gateway's to read; with page/per_page both.
func BackendOnly(d legacy.Dialect) []string {
	var out []string
	for _, name := range d.Params() {
		if !slices.Contains(PagingParams, name) {
			out = append(out, name)
		}
	}
	return out
}
