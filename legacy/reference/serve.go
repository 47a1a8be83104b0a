package reference

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/helpdesk-gateway/gateway/cursor"
)

// ServeHTTP answers as the legacy backend. The lists are served at their
// names under the base path, /tickets/{id} answers one ticket, and every
// other path is 404. Only GET and HEAD are allowed.
func (b *Backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l, ticketID, ok := b.route(r.URL.Path)
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no endpoint at %s; the lists are at %s/%s",
			r.URL.Path, b.cfg.BasePath, strings.Join(Lists(), ", "+b.cfg.BasePath+"/")))
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, r.Method+" is not allowed here; this backend only reads, use GET")
		return
	}
	if ticketID != "" {
		b.serveTicket(w, l, ticketID)
		return
	}
	l.requests.Add(1)
	q, err := b.parseListQuery(r.URL.Query(), l)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	body, err := b.page(l, q)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, body)
}

// route finds the list a path names and, for /tickets/{id}, the id.
func (b *Backend) route(path string) (l *list, ticketID string, ok bool) {
	rest, ok := strings.CutPrefix(path, b.cfg.BasePath+"/")
	if !ok {
		return nil, "", false
	}
	if l := b.lists[rest]; l != nil {
		return l, "", true
	}
	if id, ok := strings.CutPrefix(rest, "tickets/"); ok && id != "" && !strings.Contains(id, "/") && b.lists["tickets"] != nil {
		return b.lists["tickets"], id, true
	}
	return nil, "", false
}

func (b *Backend) serveTicket(w http.ResponseWriter, l *list, rawID string) {
	id, err := strconv.ParseInt(rawID, 10, 64)
	if err != nil {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no ticket with id %q; ticket ids are whole numbers", rawID))
		return
	}
	l.mu.RLock()
	i, found := l.find(id)
	var body []byte
	if found {
		body = l.recs[i].json // never changed once made, so safe to use unlocked
	}
	l.mu.RUnlock()
	if !found {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no ticket with id %d", id))
		return
	}
	writeJSON(w, http.StatusOK, body)
}

// defaultPerPage is the page size when a request sets no _perPage.
const defaultPerPage = 10

// perPage is the page size the backend serves for a request of asked
// records: clamped, without saying so, to the list's limit, or the list's
// fixed page size whatever was asked.
func (b *Backend) perPage(l *list, asked int) int {
	if n := b.cfg.FixedPerPage[l.kind.name]; n > 0 {
		return n
	}
	if n := b.cfg.ListMaxPerPage[l.kind.name]; n > 0 {
		return min(asked, n)
	}
	return min(asked, b.cfg.MaxPerPage)
}

// listQuery is what a list request asks for.
type listQuery struct {
	start, perPage int // offset of the first record, records per page
	page           int // the page number as sent, for the envelope; -1 with offsets
	sortKey        int // index into the kind's sortable fields; -1 for id
	keyset         keysetCond
	desc           bool   // descending order
	filters        string // _filters
}

// parseListQuery reads paging, sorting and filtering from q. Parameters it
// does not know, _cursor among them, are ignored, as a lenient backend
// does; _filters never is, on any list (see filter).
func (b *Backend) parseListQuery(q url.Values, l *list) (listQuery, error) {
	lq := listQuery{sortKey: 0, desc: true} // newest first by the list's date field
	var err error
	if lq.start, lq.perPage, lq.page, err = b.window(l, q); err != nil {
		return lq, err
	}

	if field := q.Get("_sortField"); field != "" {
		lq.desc = false
		if field == "id" {
			lq.sortKey = -1
		} else if lq.sortKey = slices.IndexFunc(l.kind.sortable, func(f string) bool { return sameField(f, field) }); lq.sortKey < 0 {
			return lq, fmt.Errorf("_sortField %q: %s cannot be sorted by it; use one of id, %s",
				field, l.kind.name, strings.Join(l.kind.sortable, ", "))
		}
	}
	switch dir := q.Get("_sortDir"); {
	case strings.EqualFold(dir, "ASC"):
		lq.desc = false
	case strings.EqualFold(dir, "DESC"):
		lq.desc = true
	case dir != "":
		return lq, fmt.Errorf("_sortDir %q: use ASC or DESC", dir)
	}

	if lq.keyset, err = b.keyset(q); err != nil {
		return lq, err
	}
	lq.filters = q.Get("_filters")
	return lq, nil
}

// window reads the window a query of list l asks for in the backend's
// paging dialect: the offset of its first record, its size as served
// (see perPage), and the page number (-1 with offsets). A page number
// counts pages of the size served, as a clamping backend counts them.
func (b *Backend) window(l *list, q url.Values) (start, size, page int, err error) {
	d := b.cfg.Paging
	if size, err = wholeParam(q, d.PerPageParam(), 1, defaultPerPage); err != nil {
		return 0, 0, 0, err
	}
	size = b.perPage(l, size)
	if d.Offsets() {
		start, err = wholeParam(q, d.Offset, 0, 0)
		return start, size, -1, err
	}
	first := 1
	if d.FromZero {
		first = 0
	}
	if page, err = wholeParam(q, d.PageParam(), first, first); err != nil {
		return 0, 0, 0, err
	}
	start = math.MaxInt // past any end
	if n := page - first; n <= math.MaxInt/size {
		start = n * size
	}
	return start, size, page, nil
}

// Window returns the offset and size of the window a query of the list
// called name asks for, as the backend serves it, so that a test can act
// where a call looks; ok is false for a query the backend would refuse.
// With a keyset condition the offset is where the records it keeps
// start in the list, now, plus the query's own offset.
func (b *Backend) Window(name string, q url.Values) (start, size int, ok bool) {
	l, err := b.list(name)
	if err != nil {
		return 0, 0, false
	}
	start, size, _, err = b.window(l, q)
	if err != nil {
		return 0, 0, false
	}
	c, err := b.keyset(q)
	if err != nil {
		return 0, 0, false
	}
	if c.set {
		l.mu.RLock()
		at := c.from(l.recs)
		l.mu.RUnlock()
		start = at + min(start, math.MaxInt-at)
	}
	return start, size, true
}

// wholeParam reads the whole number of at least least in parameter name,
// or def when it is absent or empty. A number too large for an int counts
// as the largest int: it is large, not malformed.
func wholeParam(q url.Values, name string, least, def int) (int, error) {
	s := q.Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if errors.Is(err, strconv.ErrRange) && s[0] != '-' {
		return math.MaxInt, nil
	}
	if err != nil || n < least {
		return 0, fmt.Errorf("%s %q: use a whole number of at least %d", name, s, least)
	}
	return n, nil
}

// page renders the page q asks for. It holds the list's read lock
// throughout, so the page is a consistent snapshot of the list.
func (b *Backend) page(l *list, q listQuery) ([]byte, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	recs := l.recs
	if q.filters != "" {
		var err error
		if recs, err = b.filter(l, q.filters); err != nil {
			return nil, fmt.Errorf("_filters: %w", err)
		}
	}
	recs = recs[q.keyset.from(recs):] // in id order, filtered or not
	recs = ordered(recs, q.sortKey, q.desc)

	total := len(recs)
	from := min(q.start, total)
	recs = recs[from:min(from+q.perPage, total)]
	l.served.Add(int64(len(recs)))
	l.stepped.Add(int64(from + len(recs)))
	l.skipped.Add(int64(from))

	size := len(`{:[],"total":,"page":,"per_page":}`) + len(b.envelopeKey) + 3*20 + len(recs)
	for _, r := range recs {
		size += len(r.json)
	}
	body := make([]byte, 0, size)
	if b.cfg.Envelope != "" {
		body = append(append(append(body, '{'), b.envelopeKey...), ':')
	}
	body = append(body, '[')
	for i, r := range recs {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, r.json...)
	}
	body = append(body, ']')
	switch {
	case b.cfg.Envelope == "":
	case q.page < 0:
		body = fmt.Appendf(body, `,"total":%d,"offset":%d,"limit":%d}`, total, q.start, q.perPage)
	default:
		body = fmt.Appendf(body, `,"total":%d,"page":%d,"per_page":%d}`, total, q.page, q.perPage)
	}
	return body, nil
}

// filter returns the records of l that match the _filters value raw, in
// id order, as l holds them: tickets by the spec's grammar, the other
// lists by their records' fields (listfilter.go). Callers hold the read
// lock.
func (b *Backend) filter(l *list, raw string) ([]*record, error) {
	var match func(*record) bool
	if l.kind.fields == nil {
		tickets, err := compileTicketFilters(raw, b.cfg.Now())
		if err != nil {
			return nil, err
		}
		match = func(r *record) bool { return tickets(r.ticket) }
	} else {
		var err error
		if match, err = compileListFilters(l.kind, raw, b.cfg.Now()); err != nil {
			return nil, err
		}
	}
	out := make([]*record, 0, len(l.recs))
	for _, r := range l.recs {
		if match(r) {
			out = append(out, r)
		}
	}
	return out, nil
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// writeError answers with status and a JSON body {"message": message}.
func writeError(w http.ResponseWriter, status int, message string) {
	writeJSON(w, status, cursor.AppendJSONMessage(nil, message))
}
