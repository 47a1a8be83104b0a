// Package verify is the rollout check behind `caddy helpdesk verify`: an
// HTTP client that walks a cursor endpoint through a running gateway by
// _page and by cursor and compares the two walks record for record.
package verify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/helpdesk-gateway/gateway/internal/redact"
	"github.com/helpdesk-gateway/gateway/legacy"
)

// Config says what a verify run walks and how.
type Config struct {
	BaseURL     string      // the gateway, e.g. http://127.0.0.1:8080
	Endpoint    string      // a cursor endpoint, optionally with a query: /calls?status=open
	PerPage     int         // _perPage of every request
	Header      http.Header // sent with every request, e.g. the client's API key
	IDField     string      // gjson path of a record's id
	RecordsPath string      // gjson path of the records array; "" when the body is the array
	Order       cursor.Order
	MaxPages    int           // bound of each walk
	Client      *http.Client  // must have a timeout
	Progress    io.Writer     // progress lines; nil for none
	Every       time.Duration // between progress lines; a walk shorter than this prints none

	// BackendURL, when set, is the backend's own base URL: the list is
	// also walked there by _page, and what the gateway's cursor walk lacks
	// is lost. Without it nothing can see a gateway that ends walks early.
	BackendURL     string
	BackendSort    string // the gateway's backend_sort; "" for _sortField=id&_sortDir=ASC
	BackendPerPage int    // _perPage of the backend walk; 0 for 1000
	// BackendPaging is the backend's paging dialect, as the gateway's
	// backend_page_param, backend_per_page_param, backend_first_page and
	// backend_offset_param set it; the zero value is _page/_perPage.
	BackendPaging legacy.Dialect
	// (With BackendPaging.Keyset, the gateway's backend_keyset, the
	// backend is also asked for the records above a few ids of its own
	// walk: see checkKeyset.)
}

// maxBody bounds one answer read by verify.
const maxBody = 64 << 20

// maxShown bounds the lines printed per kind of problem; the summary
// counts them all.
const maxShown = 20

// verify walks cfg.Endpoint through the gateway three ways and compares
// them, writing a report to out; it returns the number of problems found.
// The error is only for a config it cannot start with.
//
//  1. A _page walk (_page=1, 2, ... until a short page) reads the list by
//     offset, the way clients did before cursors.
//  2. A cursor walk follows next_page_cursor from the first page to the
//     last. It must serve no id twice, in strictly increasing id order,
//     each next_page_cursor must carry its page's last id, and a page
//     with a next_page_cursor must be full. Any breach is a problem.
//  3. Ids of the _page walk that the cursor walk lacks are candidates for
//     gaps. They are not all gaps: a record deleted during the walk is
//     rightly missing. So, only when there are candidates, a second _page
//     walk runs after the cursor walk: a candidate still there existed
//     before and after the cursor walk, so throughout it (ids are never
//     reused), and the cursor walk should have served it: a gap. A
//     candidate gone by then was deleted: noted, not a problem.
//
// A _page walk under churn may itself repeat or skip records when offsets
// shift between its pages; that is noted, not counted, since it is why
// clients use cursors. Out-of-order ids within one _page page are a
// problem: each page is in id order.
func Run(ctx context.Context, cfg Config, out io.Writer) (int, error) {
	v, err := newVerifier(cfg, out)
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(out, "verify %s, %d per page\n", redact.URL(v.target), cfg.PerPage)
	var direct *backendWalk
	if v.backend != nil {
		direct = v.walkBackend(ctx, "backend "+cfg.BackendPaging.Params()[0]+" walk")
		v.fromZero = direct.firstKnown && direct.firstPage == 0 && !cfg.BackendPaging.FromZero && !cfg.BackendPaging.Offsets()
	}
	byPage := v.pageWalk(ctx, "_page walk")
	byCursor := v.cursorWalk(ctx)
	v.compare(ctx, byPage, byCursor)
	if direct != nil {
		v.compareBackend(ctx, direct, byCursor)
		v.checkKeyset(ctx, direct)
		v.describe(direct)
	}
	return v.finish(), nil
}

// verifier holds one verify run.
type verifier struct {
	cfg     Config
	target  *url.URL // baseURL + endpoint
	backend *url.URL // BackendURL + endpoint; nil without --backend
	out     io.Writer
	counts  map[string]int // problems by kind
	kinds   []string       // the kinds in the order first met
	tick    time.Time      // of the last progress line
	// keysetOK: the backend kept backend_keyset when probed
	keysetOK bool
	// fromZero: the backend walk saw a page 0 of its own, and the
	// gateway is not told (backend_first_page 0)
	fromZero bool
}

func newVerifier(cfg Config, out io.Writer) (*verifier, error) {
	base, err := url.Parse(cfg.BaseURL)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("--url %q: want the gateway's base URL, e.g. http://127.0.0.1:8080", cfg.BaseURL)
	}
	ep, err := url.Parse(cfg.Endpoint)
	if err != nil || !strings.HasPrefix(ep.Path, "/") || ep.Host != "" {
		return nil, fmt.Errorf("--endpoint %q: want a path such as /calls", cfg.Endpoint)
	}
	if cfg.PerPage < 1 {
		return nil, fmt.Errorf("--per-page %d: want at least 1", cfg.PerPage)
	}
	if cfg.MaxPages < 1 {
		return nil, fmt.Errorf("--max-pages %d: want at least 1", cfg.MaxPages)
	}
	if cfg.Client == nil || cfg.Client.Timeout <= 0 {
		return nil, errors.New("verify needs an HTTP client with a timeout")
	}
	target := *base
	target.Path = strings.TrimSuffix(base.Path, "/") + ep.Path
	target.RawPath = ""
	target.RawQuery = ep.RawQuery
	v := &verifier{cfg: cfg, target: &target, out: out, counts: map[string]int{}, tick: time.Now()}
	if cfg.BackendURL != "" {
		if err := v.setBackend(ep); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// problem reports one problem of kind: duplicate, order, cursor, gap,
// lost, paging, keyset, request or incomplete.
func (v *verifier) problem(kind, format string, args ...any) {
	if v.counts[kind] == 0 {
		v.kinds = append(v.kinds, kind)
	}
	v.counts[kind]++
	if n := v.counts[kind]; n <= maxShown {
		fmt.Fprintf(v.out, "%s: "+format+"\n", append([]any{kind}, args...)...)
	} else if n == maxShown+1 {
		fmt.Fprintf(v.out, "%s: more of these follow; only the first %d are shown\n", kind, maxShown)
	}
}

// finish writes the verdict and returns the number of problems.
func (v *verifier) finish() int {
	total := 0
	var parts []string
	for _, k := range v.kinds {
		total += v.counts[k]
		parts = append(parts, fmt.Sprintf("%d %s", v.counts[k], k))
	}
	if total == 0 {
		fmt.Fprintln(v.out, "OK: no duplicates, gaps or order errors")
	} else {
		fmt.Fprintf(v.out, "FAIL: %s (%s)\n", count(total, "problem"), strings.Join(parts, ", "))
	}
	return total
}

// walk is what one walk served.
type walk struct {
	name     string
	ids      []string       // each id once, in the order first served
	page     map[string]int // page each id was first served on
	pages    int
	complete bool // it reached the last page
	churn    int  // _page walks: ids served again or out of place across pages
}

func newWalk(name string) *walk { return &walk{name: name, page: map[string]int{}} }

// report writes what w served.
func (v *verifier) report(w *walk) {
	s := ""
	if !w.complete {
		s = ", stopped before the end"
	}
	fmt.Fprintf(v.out, "%s: %s in %s%s\n", w.name, count(len(w.ids), "record"), count(w.pages, "page"), s)
}

// count is n and noun, plural unless n is 1.
func count(n int, noun string) string {
	if n != 1 {
		noun += "s"
	}
	return strconv.Itoa(n) + " " + noun
}

// progressLine writes where w is when cfg.Every has passed since the last line.
func (v *verifier) progressLine(w *walk) {
	if v.cfg.Progress == nil || time.Since(v.tick) < v.cfg.Every {
		return
	}
	v.tick = time.Now()
	last := ""
	if n := len(w.ids); n > 0 {
		last = ", at id " + strconv.Quote(w.ids[n-1])
	}
	fmt.Fprintf(v.cfg.Progress, "verify: %s: %d pages, %d records%s\n", w.name, w.pages, len(w.ids), last)
}

// pageWalk reads the list with _page=1, 2, ... until a short page.
func (v *verifier) pageWalk(ctx context.Context, name string) *walk {
	w := newWalk(name)
	v.walkPages(ctx, w)
	v.report(w)
	return w
}

// walkPages is pageWalk's loop; it stops at the first failed request.
func (v *verifier) walkPages(ctx context.Context, w *walk) {
	name := w.name
	prev := ""
	for w.pages < v.cfg.MaxPages {
		q := url.Values{"_perPage": {strconv.Itoa(v.cfg.PerPage)}, "_page": {strconv.Itoa(w.pages + 1)}}
		ids, _, err := v.fetch(ctx, q)
		if err != nil {
			v.problem("request", "%s, _page %d: %v", name, w.pages+1, err)
			return
		}
		w.pages++
		for i, id := range ids {
			if err := v.cfg.Order.Check(id); err != nil {
				v.problem("order", "%s, _page %d, record %d: %v", name, w.pages, i+1, err)
				continue
			}
			if i > 0 && v.cfg.Order.Check(ids[i-1]) == nil && v.cfg.Order.Compare(id, ids[i-1]) <= 0 {
				v.problem("order", "%s, _page %d: id %q follows %q; a page must be in increasing id order", name, w.pages, id, ids[i-1])
			}
			_, seen := w.page[id]
			if seen || i == 0 && prev != "" && v.cfg.Order.Compare(id, prev) < 0 {
				w.churn++ // offsets shifted between two pages
			}
			if !seen {
				w.page[id] = w.pages
				w.ids = append(w.ids, id)
			}
			prev = id
		}
		v.progressLine(w)
		if len(ids) < v.cfg.PerPage {
			w.complete = true
			return
		}
	}
	v.problem("incomplete", "%s did not end within --max-pages %d pages", name, v.cfg.MaxPages)
}

// cursorWalk follows next_page_cursor from the first page to the last.
func (v *verifier) cursorWalk(ctx context.Context) *walk {
	w := newWalk("cursor walk")
	v.walkCursors(ctx, w)
	v.report(w)
	return w
}

// walkCursors is cursorWalk's loop; it stops at the first failed request
// or a next_page_cursor that cannot be followed.
func (v *verifier) walkCursors(ctx context.Context, w *walk) {
	order := v.cfg.Order
	sent, cursorID, prev := "", "", ""
	for w.pages < v.cfg.MaxPages {
		q := url.Values{"_perPage": {strconv.Itoa(v.cfg.PerPage)}}
		if sent != "" {
			q.Set("_cursor", sent)
		}
		ids, next, err := v.fetch(ctx, q)
		if err != nil {
			v.problem("request", "cursor walk, page %d: %v", w.pages+1, err)
			return
		}
		w.pages++
		for i, id := range ids {
			if err := order.Check(id); err != nil {
				v.problem("order", "cursor page %d, record %d: %v", w.pages, i+1, err)
				continue
			}
			if p, seen := w.page[id]; seen {
				v.problem("duplicate", "id %q served twice by the cursor walk, on pages %d and %d", id, p, w.pages)
				continue
			}
			if prev != "" && order.Compare(id, prev) < 0 {
				v.problem("order", "cursor page %d: id %q follows %q; ids must strictly increase", w.pages, id, prev)
			}
			w.page[id] = w.pages
			w.ids = append(w.ids, id)
			prev = id
		}
		v.progressLine(w)
		if next == "" {
			w.complete = true
			return
		}
		nextID, err := cursor.Decode(next)
		if err == nil {
			err = order.Check(nextID)
		}
		switch {
		case err != nil:
			v.problem("cursor", "page %d: next_page_cursor %q: %v", w.pages, next, err)
			return
		case len(ids) == 0:
			v.problem("cursor", "page %d is empty yet has a next_page_cursor", w.pages)
			return
		case nextID != ids[len(ids)-1]:
			v.problem("cursor", "page %d: next_page_cursor carries id %q, not the page's last id %q", w.pages, nextID, ids[len(ids)-1])
		}
		if len(ids) < v.cfg.PerPage {
			v.problem("cursor", "page %d has %d records and a next_page_cursor; a page before the last must have %d", w.pages, len(ids), v.cfg.PerPage)
		}
		if cursorID != "" && order.Compare(nextID, cursorID) <= 0 {
			v.problem("cursor", "page %d: next_page_cursor (id %q) does not move past the previous one (id %q); stopping", w.pages, nextID, cursorID)
			return
		}
		sent, cursorID = next, nextID
	}
	v.problem("incomplete", "the cursor walk did not end within --max-pages %d pages", v.cfg.MaxPages)
}

// compare looks for ids of the _page walk that the cursor walk lacks, and
// rechecks them with a second _page walk (see verify).
func (v *verifier) compare(ctx context.Context, byPage, byCursor *walk) {
	switch {
	case v.fromZero:
		// Not churn: the gateway reads every window a backend page late.
		fmt.Fprintf(v.out, "note: the backend pages from 0 (its %s=0 is a page of its own, before %s=1) and the gateway asks it from 1, so the gateway's walks start a backend page late: "+
			"records it skipped or served again are that, not churn; set backend_first_page 0 (see below)\n", v.cfg.BackendPaging.PageParam(), v.cfg.BackendPaging.PageParam())
	case byPage.churn > 0:
		fmt.Fprintf(v.out, "note: the _page walk met %s again or out of place across pages: offsets shifted while it ran, as they do when records change\n", count(byPage.churn, "record"))
	}
	// An unfinished cursor walk is compared only as far as it got.
	limit, ok := "", byCursor.complete
	if !ok && len(byCursor.ids) > 0 {
		limit, ok = byCursor.ids[len(byCursor.ids)-1], true
	}
	if !ok {
		fmt.Fprintln(v.out, "note: the cursor walk served nothing to compare")
		return
	}
	within := func(id string) bool {
		return limit == "" || v.cfg.Order.Check(id) == nil && v.cfg.Order.Compare(id, limit) <= 0
	}
	var candidates []string
	for _, id := range byPage.ids {
		if _, ok := byCursor.page[id]; !ok && within(id) {
			candidates = append(candidates, id)
		}
	}
	// Likewise an unfinished _page walk, for what only the cursor walk has.
	pageLimit := ""
	if !byPage.complete && len(byPage.ids) > 0 {
		pageLimit = byPage.ids[len(byPage.ids)-1]
	}
	inserted := 0
	for _, id := range byCursor.ids {
		if _, ok := byPage.page[id]; !ok && (byPage.complete || pageLimit != "" && v.cfg.Order.Compare(id, pageLimit) <= 0) {
			inserted++
		}
	}
	if inserted > 0 && !v.fromZero {
		fmt.Fprintf(v.out, "note: %s of the cursor walk not in the _page walk: inserted while it ran, or skipped by it\n", count(inserted, "record"))
	}
	if len(candidates) == 0 {
		return
	}
	fmt.Fprintf(v.out, "%s of the _page walk missing from the cursor walk; rechecking with a second _page walk\n", count(len(candidates), "record"))
	recheck := v.pageWalk(ctx, "_page recheck")
	// An unfinished recheck confirms nothing past its last id.
	var reach string
	if !recheck.complete && len(recheck.ids) > 0 {
		reach = recheck.ids[len(recheck.ids)-1]
	}
	gone, unconfirmed := 0, 0
	for _, id := range candidates {
		switch p, there := recheck.page[id]; {
		case there:
			v.problem("gap", "id %q is missing from the cursor walk; the _page walks before and after it both have it (_page %d and %d)",
				id, byPage.page[id], p)
		case recheck.complete || reach != "" && v.cfg.Order.Check(id) == nil && v.cfg.Order.Compare(id, reach) <= 0:
			gone++
		default:
			unconfirmed++
		}
	}
	if gone > 0 {
		fmt.Fprintf(v.out, "note: %d of them gone by the recheck: deleted while the walks ran, not gaps\n", gone)
	}
	if unconfirmed > 0 {
		v.problem("incomplete", "%s missing from the cursor walk could not be rechecked, since the recheck stopped early", count(unconfirmed, "record"))
	}
}

// fetch gets one page with query q added to the endpoint's own query and
// returns its ids and next_page_cursor.
func (v *verifier) fetch(ctx context.Context, q url.Values) (ids []string, next string, err error) {
	return v.fetchFrom(ctx, v.target, q)
}

// fetchFrom is fetch from target: the gateway's endpoint or the backend's.
func (v *verifier) fetchFrom(ctx context.Context, target *url.URL, q url.Values) (ids []string, next string, err error) {
	u := *target
	if u.RawQuery != "" {
		u.RawQuery += "&" + q.Encode()
	} else {
		u.RawQuery = q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, "", err
	}
	for k, vals := range v.cfg.Header {
		req.Header[k] = vals
	}
	if host := v.cfg.Header.Get("Host"); host != "" {
		req.Host = host
	}
	resp, err := v.cfg.Client.Do(req)
	if err != nil {
		// The client's error repeats the URL, which may hold a key.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, "", fmt.Errorf("GET %s: %w", redact.URL(&u), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, "", fmt.Errorf("GET %s: reading the answer: %w", redact.URL(&u), err)
	}
	if len(body) > maxBody {
		return nil, "", fmt.Errorf("GET %s: the answer is larger than %d MiB", redact.URL(&u), maxBody>>20)
	}
	if resp.StatusCode != http.StatusOK {
		msg := ""
		if m := gjson.GetBytes(body, "message"); m.Type == gjson.String {
			msg = ": " + m.Str
		}
		return nil, "", &statusError{fmt.Sprintf("GET %s: %s%s", redact.URL(&u), resp.Status, msg), resp.StatusCode}
	}
	parsed, err := legacy.ParseBody(body, v.cfg.RecordsPath, v.cfg.IDField)
	if err != nil {
		return nil, "", fmt.Errorf("GET %s: %w (check --records-path and --id-field)", redact.URL(&u), err)
	}
	// The ids point into the body; copies keep a walk's memory to its ids
	// rather than every page it read.
	ids = make([]string, len(parsed.IDs))
	for i, id := range parsed.IDs {
		ids[i] = strings.Clone(id)
	}
	return ids, resp.Header.Get("next_page_cursor"), nil
}

// statusError is an answer other than 200: it was an answer, and a 4xx
// one says something of the backend (page 0 refused is no page 0), where
// a 5xx or no answer says nothing.
type statusError struct {
	msg    string
	status int
}

func (e *statusError) Error() string { return e.msg }

// refused reports whether err is a 4xx answer.
func refused(err error) bool {
	var se *statusError
	return errors.As(err, &se) && se.status >= 400 && se.status < 500
}
