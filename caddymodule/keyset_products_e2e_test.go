package caddymodule_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/cursor"
)

// The keyset tests in keyset_e2e_test.go run the reference backend, which
// reads a condition with the gateway's own template parser. The products
// here read theirs as the products themselves do, by their documented
// grammar, paging and body, with nothing of the gateway's: a template the
// gateway wrote wrongly (an escape, an operator, a quote) shows as a wrong
// page or a 400, never as a match of two copies of one mistake.

// keysetProduct is one product's list API.
type keysetProduct struct {
	name     string
	options  string // the gateway's options for the product
	order    cursor.Order
	param    string // the parameter that carries the keyset condition
	paging   []string
	envelope string // records_path; "" for a bare array
	// dropped are envelope members that describe the backend's window,
	// and kept those that describe the list: a composed page has none of
	// the first and all of the second.
	dropped, kept []string
	// maxLimit is the product's own silent clamp on a page (0: none).
	maxLimit int
	// condition reads the keyset condition out of q as the product does:
	// the id and whether a record equal to it is kept. ok is false when q
	// sets none; a condition the product cannot read is an error (400).
	condition func(q url.Values) (id string, inclusive, ok bool, err error)
	// window reads the product's paging: the offset and count of the
	// filtered list to answer, and whether q sorts it by ascending id.
	window func(q url.Values) (offset, limit int, ascending bool)
	// body writes an answer of recs, the list holding total records after
	// the condition.
	body func(recs []string, total, offset, limit int, order cursor.Order) any
}

var keysetProducts = []keysetProduct{{
	// PostgREST: horizontal filters "column=op.value", order=id.asc,
	// limit and offset, a bare array; db-max-rows clamps in silence.
	name:     "PostgREST",
	options:  "backend_keyset \"id=gt.{id}\"\n\t\tbackend_sort order=id.asc\n\t\tbackend_offset_param offset\n\t\tbackend_per_page_param limit",
	order:    cursor.Numeric,
	param:    "id",
	paging:   []string{"offset"},
	maxLimit: 250,
	condition: func(q url.Values) (string, bool, bool, error) {
		v, ok := q["id"]
		if !ok {
			return "", false, false, nil
		}
		op, val, _ := strings.Cut(v[0], ".")
		if op != "gt" && op != "gte" {
			return "", false, false, fmt.Errorf(`"failed to parse filter (%s)"`, v[0])
		}
		if _, err := strconv.ParseInt(val, 10, 64); err != nil {
			return "", false, false, fmt.Errorf(`"invalid input syntax for type bigint: %q"`, val)
		}
		return val, op == "gte", true, nil
	},
	window: func(q url.Values) (int, int, bool) {
		off, _ := strconv.Atoi(q.Get("offset"))
		limit, err := strconv.Atoi(q.Get("limit"))
		if err != nil {
			limit = 1 << 30
		}
		return off, limit, q.Get("order") == "id.asc"
	},
	body: func(recs []string, _, _, _ int, o cursor.Order) any { return productRecords(recs, o) },
}, {
	// PocketBase: a filter expression with quoted strings, sort=id,
	// page and perPage, an envelope with the window's numbers; record ids
	// are 15 lower-case letters and digits, compared as text.
	name:     "PocketBase",
	options:  "backend_keyset \"filter=(id>'{id}')\"\n\t\tbackend_sort sort=id\n\t\tbackend_page_param page\n\t\tbackend_per_page_param perPage\n\t\trecords_path items\n\t\tid_order lexical",
	order:    cursor.Lexical,
	param:    "filter",
	paging:   []string{"page"},
	envelope: "items",
	dropped:  []string{"page", "perPage", "totalPages"},
	kept:     []string{"totalItems"},
	maxLimit: 500,
	condition: func(q url.Values) (string, bool, bool, error) {
		v, ok := q["filter"]
		if !ok {
			return "", false, false, nil
		}
		return parsePocketBaseFilter(v[0])
	},
	window: func(q url.Values) (int, int, bool) {
		page, err := strconv.Atoi(q.Get("page"))
		if err != nil || page < 1 {
			page = 1
		}
		per, err := strconv.Atoi(q.Get("perPage"))
		if err != nil || per < 1 {
			per = 30
		}
		return (page - 1) * per, per, q.Get("sort") == "id"
	},
	body: func(recs []string, total, offset, limit int, o cursor.Order) any {
		return map[string]any{"page": offset/max(limit, 1) + 1, "perPage": limit, "totalItems": total,
			"totalPages": (total + limit - 1) / max(limit, 1), "items": productRecords(recs, o)}
	},
}, {
	// json-server 0.17: "field_gte=value" (at or above: the gateway drops
	// the cursor's own record), _sort and _order, _page and _limit, a
	// bare array. A value that is not a number compares as NaN: nothing.
	name:    "json-server",
	options: "backend_keyset \"id_gte={id}\"\n\t\tbackend_sort \"_sort=id&_order=asc\"\n\t\tbackend_per_page_param _limit",
	order:   cursor.Numeric,
	param:   "id_gte",
	paging:  []string{"_page"},
	condition: func(q url.Values) (string, bool, bool, error) {
		v, ok := q["id_gte"]
		if !ok {
			return "", false, false, nil
		}
		if _, err := strconv.ParseFloat(v[0], 64); err != nil {
			return "1e300", true, true, nil // NaN >= anything is false
		}
		return v[0], true, true, nil
	},
	window: func(q url.Values) (int, int, bool) {
		page, err := strconv.Atoi(q.Get("_page"))
		if err != nil || page < 1 {
			page = 1
		}
		limit, err := strconv.Atoi(q.Get("_limit"))
		if err != nil {
			limit = 10
		}
		return (page - 1) * limit, limit, q.Get("_sort") == "id" && q.Get("_order") == "asc"
	},
	body: func(recs []string, _, _, _ int, o cursor.Order) any { return productRecords(recs, o) },
}, {
	// Django REST framework with django-filter: "id_gt", ordering=id,
	// LimitOffsetPagination (limit, offset, max_limit clamps in silence),
	// an envelope with a count and links to the next and previous windows.
	name:     "Django REST framework",
	options:  "backend_keyset \"id_gt={id}\"\n\t\tbackend_sort ordering=id\n\t\tbackend_offset_param offset\n\t\tbackend_per_page_param limit\n\t\trecords_path results",
	order:    cursor.Numeric,
	param:    "id_gt",
	paging:   []string{"offset"},
	envelope: "results",
	dropped:  []string{"next", "previous"},
	kept:     []string{"count"},
	maxLimit: 100,
	condition: func(q url.Values) (string, bool, bool, error) {
		v, ok := q["id_gt"]
		if !ok {
			return "", false, false, nil
		}
		if _, err := strconv.ParseInt(v[0], 10, 64); err != nil {
			return "", false, false, fmt.Errorf(`{"id_gt":["Enter a number."]}`)
		}
		return v[0], false, true, nil
	},
	window: func(q url.Values) (int, int, bool) {
		off, _ := strconv.Atoi(q.Get("offset"))
		limit, err := strconv.Atoi(q.Get("limit"))
		if err != nil {
			limit = 100
		}
		return off, limit, q.Get("ordering") == "id"
	},
	body: func(recs []string, total, offset, limit int, o cursor.Order) any {
		next := any(nil)
		if offset+limit < total {
			next = fmt.Sprintf("http://backend/calls/?limit=%d&offset=%d", limit, offset+limit)
		}
		return map[string]any{"count": total, "next": next, "previous": nil, "results": productRecords(recs, o)}
	},
}}

// parsePocketBaseFilter reads the filters "(id>'x')", "id>='x'" and the
// like, with strings in single or double quotes and backslash escapes,
// as PocketBase's fexpr does; anything else is refused.
func parsePocketBaseFilter(f string) (id string, inclusive, ok bool, err error) {
	bad := errors.New(`{"code":400,"message":"Invalid filter parameters.","data":{}}`)
	s := strings.TrimSpace(f)
	if strings.HasPrefix(s, "(") && strings.HasSuffix(s, ")") {
		s = strings.TrimSpace(s[1 : len(s)-1])
	}
	rest, found := strings.CutPrefix(s, "id")
	if !found {
		return "", false, false, bad
	}
	rest = strings.TrimSpace(rest)
	switch {
	case strings.HasPrefix(rest, ">="):
		inclusive, rest = true, rest[2:]
	case strings.HasPrefix(rest, ">"):
		rest = rest[1:]
	default:
		return "", false, false, bad
	}
	rest = strings.TrimSpace(rest)
	if rest == "" || (rest[0] != '\'' && rest[0] != '"') {
		return "", false, false, bad
	}
	quote := rest[0]
	var b strings.Builder
	for i := 1; i < len(rest); i++ {
		switch c := rest[i]; {
		case c == '\\' && i+1 < len(rest):
			i++
			b.WriteByte(rest[i])
		case c == quote:
			if strings.TrimSpace(rest[i+1:]) != "" {
				return "", false, false, bad // more expression after the string
			}
			return b.String(), inclusive, true, nil
		default:
			b.WriteByte(c)
		}
	}
	return "", false, false, bad
}

// productRecords is a records array with ids as numbers or strings.
func productRecords(ids []string, o cursor.Order) []map[string]any {
	out := make([]map[string]any, len(ids))
	for i, id := range ids {
		var v any = id
		if o == cursor.Numeric {
			v = json.Number(id)
		}
		out[i] = map[string]any{"id": v, "type": "I", "note": "record " + id}
	}
	return out
}

func (p keysetProduct) pageIDs(t testing.TB) func(answer) []string {
	return func(a answer) []string {
		if p.envelope != "" {
			return a.ids(t, p.envelope)
		}
		return a.ids(t)
	}
}

// TestKeysetProducts runs the gateway in front of each product, read-ahead
// off so that every page is a call: walks are exact and cost one call a
// page, the first included, besides the offset reads that check the
// list's first keyset page and its last; every cursor page is asked by
// the product's condition with no page number or offset; a cold cursor
// anywhere costs one keyset call, and the check's offset read; composed pages drop the envelope's window
// members, and its counts where a keyset answer gave them (of the records
// above the cursor), and the first page keeps the list's count; a client sending the condition's parameter gets 400.
func TestKeysetProducts(t *testing.T) {
	for _, p := range keysetProducts {
		t.Run(p.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(23, uint64(len(p.name))))
			b := newProductBackend(p, r, 1500)
			c := gatewaytest.StartBehind(t, fmt.Sprintf(gatewaySite, p.options+"\n\t\treadahead_ttl 0"), b)
			all, pageIDs := b.list(), p.pageIDs(t)

			for _, size := range []int{7, 60} { // below every clamp: TestKeysetProductsUnderChurn walks past them
				b.reset()
				require.Equal(t, all, walkDialect(t, c.URL, size, pageIDs), "%d per page", size)
				calls, seen := b.count()
				pages := (len(all) + size - 1) / size
				checks := 0 // offset reads that check keyset pages (issue 31)
				for _, q := range seen[1:] {
					if !q.Has(p.param) {
						checks++
						continue
					}
					for _, name := range p.paging {
						assert.NotContains(t, q, name, "a keyset call has no page number or offset: %s", q.Encode())
					}
				}
				assert.Equal(t, pages, calls-checks, "%d per page: a call a page", size)
				assert.LessOrEqual(t, checks, 2, "%d per page: the checks of the list's first keyset page and of its last", size)
			}

			for range 10 { // cold cursors: a list identity the gateway has not seen
				at := r.IntN(len(all))
				b.reset()
				a := get(t, fmt.Sprintf("%s/calls?_perPage=5&cold=%d&_cursor=%s", c.URL, at, url.QueryEscape(cursorFor(all[at]))))
				require.Equal(t, http.StatusOK, a.status, string(a.body))
				assert.Equal(t, all[at+1:min(at+6, len(all))], pageIDs(a), "after %s", all[at])
				calls, seen := b.count()
				require.NotEmpty(t, seen)
				assert.True(t, seen[0].Has(p.param), "a cold cursor is asked by keyset first: %s", seen[0].Encode())
				// and in a list identity never seen, the check's offset read:
				// a search for the cursor (lexical ids on a page-numbered
				// backend cost the most: up to 11 calls, docs/performance.md)
				t.Logf("a cold cursor at %d: %d calls", at, calls)
				assert.LessOrEqual(t, calls, 1+12, "a cold cursor costs one keyset call, and the check's search")
			}

			a := get(t, fmt.Sprintf("%s/calls?_perPage=5&_cursor=%s", c.URL, url.QueryEscape(cursorFor(all[100]))))
			require.Equal(t, http.StatusOK, a.status, string(a.body))
			if p.envelope != "" {
				var env map[string]json.RawMessage
				require.NoError(t, json.Unmarshal(a.body, &env))
				for _, m := range p.dropped {
					assert.NotContains(t, env, m, "the backend's window is not the page's")
				}
				for _, m := range p.kept {
					// A keyset answer's count is of the records above
					// the cursor: such a page drops it; a page from an
					// offset read keeps the list's.
					if v, ok := env[m]; ok {
						assert.Equal(t, strconv.Itoa(len(all)), string(v), "a count a page shows is the list's")
					}
				}
				first := get(t, fmt.Sprintf("%s/calls?_perPage=5", c.URL))
				require.Equal(t, http.StatusOK, first.status, string(first.body))
				env = nil
				require.NoError(t, json.Unmarshal(first.body, &env))
				for _, m := range p.kept {
					assert.Equal(t, strconv.Itoa(len(all)), string(env[m]), "the first page keeps the list's count")
				}
			}
			a = get(t, fmt.Sprintf("%s/calls?%s=5", c.URL, p.param))
			require.Equal(t, http.StatusBadRequest, a.status, string(a.body))
			assert.Contains(t, a.message(t), p.param)
		})
	}
}

// TestKeysetProductsUnderChurn: while each product's list changes where
// each keyset call looks, concurrent walks, with read-ahead on (the
// default) and off, serve no record twice, in ascending order, and skip
// none that existed throughout.
func TestKeysetProductsUnderChurn(t *testing.T) {
	for _, tc := range []struct{ name, options string }{{"read-ahead", ""}, {"every page a call", "readahead_ttl 0"}} {
		for _, p := range keysetProducts {
			t.Run(tc.name+"/"+p.name, func(t *testing.T) {
				churnWalks(t, p, p.options+"\n\t\t"+tc.options)
			})
		}
	}
}

// churnWalks walks p's list with three concurrent walkers through a
// gateway with options while the list changes at every keyset call.
func churnWalks(t *testing.T, p keysetProduct, options string) {
	b := newProductBackend(p, rand.New(rand.NewPCG(24, uint64(len(p.name)))), 1200)
	b.churn = rand.New(rand.NewPCG(5, uint64(len(p.name))))
	initial := b.list()
	c := gatewaytest.StartBehind(t, fmt.Sprintf(gatewaySite, options), b)
	var wg sync.WaitGroup
	walks := make([][]string, 3)
	for i, size := range []int{9, 100, 130} {
		wg.Go(func() { walks[i] = walkDialectRetrying(t, c.URL, size, p.pageIDs(t)) })
	}
	wg.Wait()
	b.mu.Lock()
	gone, calls := b.gone, b.calls
	b.mu.Unlock()
	t.Logf("%d backend calls, %d records deleted", calls, len(gone))
	require.NotEmpty(t, gone, "the list changed under the walks")
	for i, ids := range walks {
		assert.True(t, slices.IsSortedFunc(ids, p.order.Compare) && !hasRepeats(ids), "walk %d ascends without repeats", i)
		served := map[string]bool{}
		for _, id := range ids {
			served[id] = true
		}
		for _, id := range initial {
			if !gone[id] && !served[id] {
				t.Errorf("walk %d lost %s, which existed throughout", i, id)
			}
		}
	}
}

func hasRepeats(ids []string) bool {
	for i := 1; i < len(ids); i++ {
		if ids[i] == ids[i-1] {
			return true
		}
	}
	return false
}

// TestKeysetProductHostileIDs sends PocketBase cursor ids that would
// change its filter if written into it (a quote that ends the string and
// an expression after it, a backslash, a double quote): each page is the
// right one, read by offset: no call carries a filter.
func TestKeysetProductHostileIDs(t *testing.T) {
	p := keysetProducts[1]
	require.Equal(t, "PocketBase", p.name)
	b := newProductBackend(p, rand.New(rand.NewPCG(25, 25)), 400)
	c := gatewaytest.StartBehind(t, fmt.Sprintf(gatewaySite, p.options+"\n\t\treadahead_ttl 0"), b)
	all := b.list()
	for _, id := range []string{"m') || (id!='", `m\') || id>'`, `m" || id>"`, "m'", `m\`} {
		b.reset()
		a := get(t, fmt.Sprintf("%s/calls?_perPage=3&_cursor=%s", c.URL, url.QueryEscape(cursorFor(id))))
		require.Equal(t, http.StatusOK, a.status, "%q: %s", id, a.body)
		from, _ := slices.BinarySearchFunc(all, id, p.order.Compare)
		assert.Equal(t, all[from:from+3], p.pageIDs(t)(a), "after %q", id)
		_, seen := b.count()
		for _, q := range seen {
			assert.NotContains(t, q, "filter", "an unsafe id is read by offset, never written into the filter: %s", q.Encode())
		}
	}
}
