package caddymodule

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

// pageQuery is what a client asked of a cursor endpoint.
type pageQuery struct {
	cursor  string // raw _cursor value, "" when absent
	perPage int
	page    int    // _page, 0 when absent
	forward string // the client's other parameters, byte for byte
}

// queryError is a client mistake in the query; its text is for the client.
type queryError struct{ msg string }

func (e *queryError) Error() string { return e.msg }

func badQuery(format string, args ...any) error {
	return &queryError{fmt.Sprintf(format, args...)}
}

// parsePageQuery splits a cursor endpoint's raw query into the gateway's
// parameters and the ones it forwards. Keys are compared decoded, so
// %5Fpage is _page: a client cannot slip paging or sort parameters past
// the gateway into its own backend query. Forwarded pairs keep their
// original bytes.
func (g *Gateway) parsePageQuery(raw string) (pageQuery, error) {
	q := pageQuery{perPage: g.DefaultPerPage}
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
			dst = &q.cursor
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
			if slices.Contains(g.backendOnly, key) {
				return q, badQuery("%.40s is the backend's own paging parameter, which the gateway sets; send _page and _perPage for a numbered page, or _cursor to continue a walk", key)
			}
			if want, ok := g.sortParams[key]; ok && key != "_filters" {
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
			if err := shadowError(rawKey, key, g.shadowNames); err != nil {
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
	if seen["_cursor"] && q.cursor == "" {
		return q, badQuery(`_cursor is empty; omit it for the first page, or send the next_page_cursor header of the previous page`)
	}
	if seen["_perPage"] {
		n, ok := wholeNumber(perPage)
		if !ok || n < 1 || n > g.MaxPerPage {
			return q, badQuery("_perPage must be a whole number from 1 to %d, got %.20q", g.MaxPerPage, perPage)
		}
		q.perPage = n
	}
	if seen["_page"] {
		n, ok := wholeNumber(page)
		if !ok || n < 1 || n > maxPage/q.perPage {
			return q, badQuery("_page must be a whole number from 1 to %d, got %.20q", maxPage/q.perPage, page)
		}
		q.page = n
	}
	if seen["_sortField"] && sortField != g.IDField || seen["_sortDir"] && !strings.EqualFold(sortDir, "asc") {
		return q, badQuery("this endpoint pages in ascending %s order: omit _sortField and _sortDir, or send _sortField=%s&_sortDir=ASC", g.IDField, g.IDField)
	}
	q.forward = strings.Join(kept, "&")
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

// checkQueryEncoding is checkPairEncoding for each pair of a raw query.
func checkQueryEncoding(raw string) error {
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

// maxPage bounds _page * _perPage so offsets never overflow.
const maxPage = min(1<<40, math.MaxInt) // 2^40, or less where int is 32 bits

// wholeNumber parses digits only: no sign, no spaces, and no more than an
// int holds (maxPage, 2^40, has 13 digits; leading zeros count). The
// callers hold the number to their own bounds.
func wholeNumber(s string) (int, bool) {
	if s == "" || len(s) > 19 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// pagingParams are the parameters the gateway reads on a cursor endpoint
// and, but for _cursor, writes into its own backend queries.
var pagingParams = []string{"_cursor", "_page", "_perPage", "_sortField", "_sortDir"}

// windowParams are LiveAgent's result-set bounds, _from (start, which it
// honours over _page) and _to (end). Either would move the window the
// gateway asks the backend for, so a cursor endpoint refuses them.
var windowParams = []string{"_from", "_to"}

// shadowNames lists the gateway's own parameters on a cursor endpoint,
// each once: the names a client must not smuggle past it in another
// spelling. They are pagingParams, windowParams, backend_sort's, and the
// names the backend's paging dialect writes (backend_page_param and the
// like), since each of them selects the window the backend answers.
func shadowNames(sortParams url.Values, d legacy.Dialect) []string {
	names := slices.Concat(pagingParams, windowParams)
	for _, name := range slices.Concat(slices.Collect(maps.Keys(sortParams)), d.Params()) {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}

// shadowError refuses key, as sent in the query (rawKey), when a backend
// could read it as one of names without it being exactly that name; a
// client could otherwise slip a second _page past the gateway into its own
// backend query, or an unchecked _filters past the validator.
func shadowError(rawKey, key string, names []string) error {
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
