package verify

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/helpdesk-gateway/gateway/translate"
)

// defaultBackendSort is the gateway's default backend_sort.
const defaultBackendSort = "_sortField=id&_sortDir=ASC"

// defaultBackendPerPage is the _perPage of the backend walk: the gateway's
// default backend_max_per_page, so that a clamp below it shows.
const defaultBackendPerPage = 1000

// setBackend checks --backend and the backend walk's settings.
func (v *verifier) setBackend(ep *url.URL) error {
	base, err := url.Parse(v.cfg.BackendURL)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return fmt.Errorf("--backend %q: want the backend's base URL, e.g. http://127.0.0.1:9080", v.cfg.BackendURL)
	}
	if v.cfg.BackendSort == "" {
		v.cfg.BackendSort = defaultBackendSort
	}
	if _, err := url.ParseQuery(v.cfg.BackendSort); err != nil {
		return fmt.Errorf("--backend-sort %q: not a query string: %v", v.cfg.BackendSort, err)
	}
	if v.cfg.BackendPerPage == 0 {
		v.cfg.BackendPerPage = defaultBackendPerPage
	}
	if v.cfg.BackendPerPage < 1 {
		return fmt.Errorf("--backend-per-page %d: want at least 1", v.cfg.BackendPerPage)
	}
	target := *base
	target.Path = strings.TrimSuffix(base.Path, "/") + ep.Path
	target.RawPath = ""
	target.RawQuery = ep.RawQuery
	v.backend = &target
	return nil
}

// backendWalk is the list as the backend itself pages it, and what the
// walk showed of how it pages.
type backendWalk struct {
	*walk
	firstPage int  // 0 or 1: the number of the backend's first page
	largest   int  // the largest page it sent
	fixed     bool // it sent more than asked: it ignores _perPage
	orderOK   bool // the ids ascend under the configured id order
	lexical   bool // they ascend as strings, not as numbers
}

// walkBackend reads the list from the backend by _page with backend_sort,
// page after page until an empty one. It does not stop at a short page: a
// backend that clamps _perPage sends short pages that are not the end, and
// numbers its pages by the size it sends, so reading on until nothing
// comes gets every record whatever the clamp.
func (v *verifier) walkBackend(ctx context.Context, name string) *backendWalk {
	bw := &backendWalk{walk: newWalk(name), firstPage: 1, orderOK: true, lexical: true}
	w := bw.walk
	sort, _ := url.ParseQuery(v.cfg.BackendSort)
	query := func(page, perPage int) url.Values {
		q := url.Values{}
		for k, vals := range sort {
			q[k] = vals
		}
		q.Set("_page", strconv.Itoa(page))
		q.Set("_perPage", strconv.Itoa(perPage))
		return q
	}
	// Does page 0 exist apart from page 1? A backend numbering pages from
	// 0 loses its first page to a gateway that starts at 1.
	one, _, err := v.fetchFrom(ctx, v.backend, query(1, v.cfg.BackendPerPage))
	if err != nil {
		v.problem("request", "%s, _page 1: %v", name, err)
		return bw
	}
	if zero, _, err := v.fetchFrom(ctx, v.backend, query(0, v.cfg.BackendPerPage)); err == nil && len(zero) > 0 && !slices.Equal(zero, one) {
		bw.firstPage = 0
	}
	if small, _, err := v.fetchFrom(ctx, v.backend, query(bw.firstPage, 1)); err == nil && len(small) > 1 {
		bw.fixed = true
	}
	order := v.cfg.Order
	prev := ""
	for page := bw.firstPage; w.pages < v.cfg.MaxPages; page++ {
		ids, _, err := v.fetchFrom(ctx, v.backend, query(page, v.cfg.BackendPerPage))
		if err != nil {
			v.problem("request", "%s, _page %d: %v", name, page, err)
			v.report(w)
			return bw
		}
		if len(ids) == 0 {
			w.complete = true
			v.report(w)
			return bw
		}
		w.pages++
		bw.largest = max(bw.largest, len(ids))
		for _, id := range ids {
			if prev != "" {
				bw.orderOK = bw.orderOK && order.Check(id) == nil && order.Compare(prev, id) < 0
				bw.lexical = bw.lexical && translate.Lexical.Compare(prev, id) < 0
			}
			prev = id
			if _, seen := w.page[id]; !seen {
				w.page[id] = w.pages
				w.ids = append(w.ids, id)
			}
		}
		v.progressLine(w)
	}
	v.problem("incomplete", "%s did not end within --max-pages %d pages", name, v.cfg.MaxPages)
	v.report(w)
	return bw
}

// compareBackend reports, as lost, records the backend held before and
// after the gateway's cursor walk that the walk never served. A second
// backend walk runs only when there are candidates, as for gaps.
func (v *verifier) compareBackend(ctx context.Context, direct *backendWalk, byCursor *walk) {
	if !direct.complete || !byCursor.complete {
		fmt.Fprintln(v.out, "note: a walk stopped early; the gateway's walk is not compared with the backend's")
		return
	}
	var candidates []string
	for _, id := range direct.ids {
		if _, ok := byCursor.page[id]; !ok {
			candidates = append(candidates, id)
		}
	}
	if len(byCursor.ids) < len(direct.ids) || len(candidates) > 0 {
		fmt.Fprintf(v.out, "the gateway's cursor walk served %s, the backend's own walk %s; %s missing, rechecking with a second backend walk\n",
			count(len(byCursor.ids), "record"), count(len(direct.ids), "record"), count(len(candidates), "record"))
	}
	if len(candidates) == 0 {
		return
	}
	recheck := v.walkBackend(ctx, "backend _page recheck")
	gone := 0
	for _, id := range candidates {
		if _, there := recheck.page[id]; there {
			v.problem("lost", "id %q is in the backend's list before and after the gateway's cursor walk, which never served it", id)
		} else if recheck.complete {
			gone++
		}
	}
	if gone > 0 {
		fmt.Fprintf(v.out, "note: %d of them gone by the recheck: deleted while the walks ran\n", gone)
	}
}

// describe reports what the backend walk showed of the backend's paging,
// and the Caddyfile lines that match it.
func (v *verifier) describe(d *backendWalk) {
	fmt.Fprintln(v.out, "backend, as observed:")
	var lines []string
	switch {
	case d.largest == 0:
		fmt.Fprintln(v.out, "  page size: unknown, the list is empty")
	case d.fixed:
		fmt.Fprintf(v.out, "  page size: ignores _perPage, sends pages of %d\n", d.largest)
		lines = append(lines, fmt.Sprintf("backend_max_per_page %d", d.largest))
	case d.largest < v.cfg.BackendPerPage && d.pages > 1:
		fmt.Fprintf(v.out, "  page size: clamps _perPage to %d (asked for %d)\n", d.largest, v.cfg.BackendPerPage)
		lines = append(lines, fmt.Sprintf("backend_max_per_page %d", d.largest))
	case d.largest < v.cfg.BackendPerPage:
		fmt.Fprintf(v.out, "  page size: the whole list (%d records) came in one page of %d asked\n", d.largest, v.cfg.BackendPerPage)
	default:
		fmt.Fprintf(v.out, "  page size: serves %d per page as asked\n", d.largest)
	}
	if d.largest > 0 && d.largest < translate.MinBackendPageSize && (d.fixed || d.pages > 1) {
		fmt.Fprintf(v.out, "  warning: a page limit of %d is below the %d the gateway needs to page this backend\n", d.largest, translate.MinBackendPageSize)
	}
	if d.firstPage == 0 {
		fmt.Fprintln(v.out, "  first page: _page=0 (the gateway numbers pages from 1 and would skip the first)")
		lines = append(lines, "backend_first_page 0")
	} else {
		fmt.Fprintln(v.out, "  first page: _page=1")
	}
	switch {
	case d.orderOK:
		fmt.Fprintf(v.out, "  id order: ascending %s with %s\n", v.cfg.Order, v.cfg.BackendSort)
		lines = append(lines, "id_order "+v.cfg.Order.String(), "backend_sort "+v.cfg.BackendSort)
	case d.lexical:
		fmt.Fprintf(v.out, "  id order: ascending as strings, not as numbers, with %s\n", v.cfg.BackendSort)
		lines = append(lines, "id_order lexical", "backend_sort "+v.cfg.BackendSort)
	default:
		fmt.Fprintf(v.out, "  id order: not ascending with %s; the backend ignores it or sorts by another field: find the parameters that sort it by id\n", v.cfg.BackendSort)
	}
	if len(lines) > 0 {
		fmt.Fprintln(v.out, "matching Caddyfile lines (helpdesk_gateway block):")
		for _, l := range lines {
			fmt.Fprintln(v.out, "\t"+l)
		}
	}
}
