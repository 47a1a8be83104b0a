package verify

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/helpdesk-gateway/gateway/cursor"
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
	fixed     bool // it sent more than asked: it ignores its page size
	ignored   bool // the second window came back as the first: it ignores the page number or offset
	orderOK   bool // the ids ascend under the configured id order
	lexical   bool // they ascend as strings
	numeric   bool // they are all whole numbers, ascending as numbers
	// What was observed: each field above is a default until the
	// request that shows it answers, and describe reports only these.
	answered   bool // the first window answered
	firstKnown bool // page 0 was asked and answered, or refused (page dialects)
	pagedKnown bool // the second window was asked and answered
}

// walkBackend reads the list from the backend in its paging dialect with
// backend_sort, window after window until an empty one: by page number,
// or by offset, each window starting after the records received. It does
// not stop at a short window: a backend that clamps its page size sends
// short pages that are not the end, and numbers its pages by the size it
// sends, so reading on until nothing comes gets every record whatever
// the clamp.
func (v *verifier) walkBackend(ctx context.Context, name string) *backendWalk {
	bw := &backendWalk{walk: newWalk(name), firstPage: 1, orderOK: true, lexical: true, numeric: true}
	w := bw.walk
	d := v.cfg.BackendPaging
	sort, _ := url.ParseQuery(v.cfg.BackendSort)
	// query asks for the window at (a page number, or an offset).
	query := func(at, perPage int) url.Values {
		q := url.Values{}
		for k, vals := range sort {
			q[k] = vals
		}
		q.Set(d.Params()[0], strconv.Itoa(at))
		q.Set(d.PerPageParam(), strconv.Itoa(perPage))
		return q
	}
	at := func(n int) string { return fmt.Sprintf("%s %d", d.Params()[0], n) }
	first := 0 // the first window: page 1 (or 0), offset 0
	if !d.Offsets() {
		first = 1
	}
	one, _, err := v.fetchFrom(ctx, v.backend, query(first, v.cfg.BackendPerPage))
	if err != nil {
		v.problem("request", "%s, %s: %v", name, at(first), err)
		v.report(w)
		return bw
	}
	bw.answered = true
	if !d.Offsets() {
		// Does page 0 exist apart from page 1? A backend numbering pages
		// from 0 loses its first page to a gateway that starts at 1.
		zero, _, err := v.fetchFrom(ctx, v.backend, query(0, v.cfg.BackendPerPage))
		if err == nil && len(zero) > 0 && !slices.Equal(zero, one) {
			bw.firstPage = 0
		}
		bw.firstKnown = err == nil || refused(err)
		first = bw.firstPage
	}
	small, _, err := v.fetchFrom(ctx, v.backend, query(first, 1))
	bw.fixed = err == nil && len(small) > 1
	if err == nil && len(small) > 0 && len(one) > 1 {
		// Is the second window of one record past the first? If it is
		// the first again, the backend does not read the page or offset
		// parameter as its own.
		second, _, err := v.fetchFrom(ctx, v.backend, query(first+1, 1))
		bw.ignored = err == nil && slices.Equal(second, small)
		bw.pagedKnown = err == nil
	}
	if bw.ignored {
		v.problem("paging", "%s: asking for %s gave the first window again: the backend does not page by %s; set backend_page_param, or backend_offset_param, to the parameter it pages by",
			name, at(first+1), d.Params()[0])
		v.report(w)
		return bw
	}
	order := v.cfg.Order
	prev := ""
	next := first
	for w.pages < v.cfg.MaxPages {
		page := next
		ids, _, err := v.fetchFrom(ctx, v.backend, query(page, v.cfg.BackendPerPage))
		if err != nil {
			v.problem("request", "%s, %s: %v", name, at(page), err)
			v.report(w)
			return bw
		}
		if next++; d.Offsets() {
			next = page + len(ids)
		}
		if len(ids) == 0 {
			w.complete = true
			v.report(w)
			return bw
		}
		w.pages++
		bw.largest = max(bw.largest, len(ids))
		for _, id := range ids {
			bw.numeric = bw.numeric && cursor.Numeric.Check(id) == nil
			if prev != "" {
				bw.orderOK = bw.orderOK && order.Check(id) == nil && order.Compare(prev, id) < 0
				bw.lexical = bw.lexical && cursor.Lexical.Compare(prev, id) < 0
				bw.numeric = bw.numeric && cursor.Numeric.Check(prev) == nil && cursor.Numeric.Compare(prev, id) < 0
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
	recheck := v.walkBackend(ctx, "backend "+v.cfg.BackendPaging.Params()[0]+" recheck")
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
// and the Caddyfile lines that match it: only what the backend's answers
// showed. What a failed request or a walk stopped early left unseen is
// said to be unobserved, with no Caddyfile line for it.
func (v *verifier) describe(d *backendWalk) {
	fmt.Fprintln(v.out, "backend, as observed:")
	if !d.answered {
		fmt.Fprintln(v.out, "  nothing: the backend's first window did not come (see the request problem above), so its page size, first page and id order could not be observed")
		return
	}
	var lines []string
	switch {
	case d.fixed:
		fmt.Fprintf(v.out, "  page size: ignores %s, sends pages of %d\n", v.cfg.BackendPaging.PerPageParam(), d.largest)
		lines = append(lines, fmt.Sprintf("backend_max_per_page %d", d.largest))
	case !d.complete:
		fmt.Fprintln(v.out, "  page size: not observed: the backend walk stopped before the end")
	case d.largest == 0:
		fmt.Fprintln(v.out, "  page size: not observed: the list is empty")
	case d.largest < v.cfg.BackendPerPage && d.pages > 1:
		fmt.Fprintf(v.out, "  page size: clamps %s to %d (asked for %d)\n", v.cfg.BackendPaging.PerPageParam(), d.largest, v.cfg.BackendPerPage)
		lines = append(lines, fmt.Sprintf("backend_max_per_page %d", d.largest))
	case d.largest < v.cfg.BackendPerPage:
		fmt.Fprintf(v.out, "  page size: the whole list (%d records) came in one page of %d asked\n", d.largest, v.cfg.BackendPerPage)
	default:
		fmt.Fprintf(v.out, "  page size: serves %d per page as asked\n", d.largest)
	}
	if d.largest > 0 && d.largest < translate.MinBackendPageSize && (d.fixed || d.complete && d.pages > 1) {
		fmt.Fprintf(v.out, "  warning: a page limit of %d is below the %d the gateway needs to page this backend\n", d.largest, translate.MinBackendPageSize)
	}
	dialect := v.cfg.BackendPaging
	switch {
	case d.ignored:
		fmt.Fprintf(v.out, "  paging: %s is not read as the window: the second window was the first again\n", dialect.Params()[0])
	case dialect.Offsets() && !d.pagedKnown && !d.complete:
		fmt.Fprintf(v.out, "  paging: not observed: no second window came by %s\n", dialect.Params()[0])
	case dialect.Offsets():
		fmt.Fprintf(v.out, "  paging: by offset %s and limit %s\n", dialect.Offset, dialect.PerPageParam())
		lines = append(lines, "backend_offset_param "+dialect.Offset)
	case !d.firstKnown:
		fmt.Fprintf(v.out, "  first page: not observed: asking for %s=0 got no answer\n", dialect.PageParam())
	case d.firstPage == 0 && !dialect.FromZero:
		fmt.Fprintf(v.out, "  first page: %s=0 (the gateway numbers pages from 1 unless told, and would skip the first)\n", dialect.PageParam())
		lines = append(lines, "backend_first_page 0")
	case d.firstPage == 0:
		fmt.Fprintf(v.out, "  first page: %s=0\n", dialect.PageParam())
		lines = append(lines, "backend_first_page 0")
	case dialect.FromZero:
		fmt.Fprintf(v.out, "  first page: %s=1 (%s=0 is empty or the same page): remove backend_first_page 0\n", dialect.PageParam(), dialect.PageParam())
	default:
		fmt.Fprintf(v.out, "  first page: %s=1\n", dialect.PageParam())
	}
	v.describeCost(d)
	if len(lines) > 0 || d.complete {
		// The dialect's names, once the backend answered by them.
		if dialect.Page != "" && !dialect.Offsets() {
			lines = append(lines, "backend_page_param "+dialect.Page)
		}
		if dialect.PerPage != "" {
			lines = append(lines, "backend_per_page_param "+dialect.PerPage)
		}
	}
	if v.keysetOK {
		lines = append(lines, "backend_keyset "+strconv.Quote(dialect.Keyset))
	}
	read := "" // the records the order was seen in, when not the whole list
	if !d.complete {
		read = fmt.Sprintf(", in the %s read before the walk stopped", count(len(d.ids), "record"))
	}
	switch {
	case len(d.ids) < 2:
		fmt.Fprintln(v.out, "  id order: not observed: fewer than two records came")
	case d.orderOK && d.numeric && v.cfg.Order == cursor.Lexical:
		// As strings only while the ids keep one width: at the first id
		// a digit longer (10000 after 9999) the backend's numeric order
		// is no longer lexical, and the gateway refuses every walk.
		fmt.Fprintf(v.out, "  id order: ascending as numbers with %s%s; every id is a whole number\n", v.cfg.BackendSort, read)
		fmt.Fprintln(v.out, "  warning: id_order lexical on ids that are all numbers holds only while they have one width: at the first id a digit longer (10000 after 9999) every walk fails (502, \"set id_order numeric\"); set id_order numeric")
		if d.complete {
			lines = append(lines, "id_order numeric", "backend_sort "+v.cfg.BackendSort)
		}
	case d.orderOK:
		fmt.Fprintf(v.out, "  id order: ascending %s with %s%s\n", v.cfg.Order, v.cfg.BackendSort, read)
		if d.complete {
			lines = append(lines, "id_order "+v.cfg.Order.String(), "backend_sort "+v.cfg.BackendSort)
		}
	case d.lexical:
		fmt.Fprintf(v.out, "  id order: ascending as strings, not as numbers, with %s%s\n", v.cfg.BackendSort, read)
		if d.complete {
			lines = append(lines, "id_order lexical", "backend_sort "+v.cfg.BackendSort)
		}
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
