package legacy

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Config sets up a reference backend.
type Config struct {
	Seed           uint64           // the same seed gives the same data set
	Records        int              // per list; default 1000
	MaxPerPage     int              // larger _perPage is clamped to it; default 1000
	BasePath       string           // prefix of every path, e.g. /api/v3
	Envelope       string           // when set, bodies are {"<Envelope>": [...], "total": N, ...}
	ChurnPerSecond float64          // inserts and deletes per second per list, while started
	DataEpoch      time.Time        // dates fall in the two years before it; default 2026-01-01 UTC
	Now            func() time.Time // the clock of DP filters; default time.Now
	// RecordDeletions keeps the id of every deleted record, for tests that
	// check which records existed throughout a walk. It grows with churn.
	RecordDeletions bool
}

// Backend is the reference legacy help-desk backend. It is safe for
// concurrent use; each answer is read under one lock, so it is a
// consistent snapshot of its list.
type Backend struct {
	cfg   Config
	lists map[string]*list

	mu      sync.Mutex // guards rnd, gen and the churn state
	rnd     *rand.Rand
	gen     *gen
	stop    chan struct{}
	stopped chan struct{}
}

// Lists returns the names of the lists the backend serves.
func Lists() []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = k.name
	}
	return out
}

// New makes a backend and its data set.
func New(cfg Config) *Backend {
	if cfg.Records <= 0 {
		cfg.Records = 1000
	}
	if cfg.MaxPerPage <= 0 {
		cfg.MaxPerPage = 1000
	}
	if cfg.DataEpoch.IsZero() {
		cfg.DataEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	b := &Backend{cfg: cfg, lists: make(map[string]*list, len(kinds))}
	b.rnd = rand.New(rand.NewPCG(cfg.Seed, 0x5eed))
	b.gen = &gen{r: b.rnd, epoch: cfg.DataEpoch}
	// Each list has a random source of its own, so the lists can be made in
	// parallel and the data set still depends on the seed alone.
	var wg sync.WaitGroup
	made := make([]*list, len(kinds))
	for i, k := range kinds {
		wg.Go(func() {
			h := fnv.New64a()
			h.Write([]byte(k.name))
			g := &gen{r: rand.New(rand.NewPCG(cfg.Seed, h.Sum64())), epoch: cfg.DataEpoch}
			l := &list{name: k.name, dateField: k.dateField, recs: make([]*record, 0, cfg.Records)}
			if cfg.RecordDeletions {
				l.deleted = make(map[int64]struct{})
			}
			var id int64
			for range cfg.Records {
				id += 1 + g.r.Int64N(20) // gaps leave room for inserts
				l.recs = append(l.recs, k.make(g, id))
			}
			made[i] = l
		})
	}
	wg.Wait()
	for _, l := range made {
		b.lists[l.name] = l
	}
	return b
}

func kindOf(name string) *kind {
	for i := range kinds {
		if kinds[i].name == name {
			return &kinds[i]
		}
	}
	return nil
}

var errNoList = errors.New("no such list")

// Insert adds a record with id to list, made like the others.
func (b *Backend) Insert(name string, id int64) error {
	l, k := b.lists[name], kindOf(name)
	if l == nil {
		return errNoList
	}
	b.mu.Lock()
	r := k.make(b.gen, id)
	b.mu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.insert(r) {
		return fmt.Errorf("id %d exists in %s", id, name)
	}
	return nil
}

// Delete removes the record with id from list; it reports whether it was there.
func (b *Backend) Delete(name string, id int64) bool {
	l := b.lists[name]
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.remove(id)
}

// IDs returns the ids of list, ascending.
func (b *Backend) IDs(name string) []int64 {
	if l := b.lists[name]; l != nil {
		return l.ids()
	}
	return nil
}

// Deleted reports whether a record with id was ever deleted from list;
// it needs Config.RecordDeletions.
func (b *Backend) Deleted(name string, id int64) bool {
	l := b.lists[name]
	if l == nil {
		return false
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	_, ok := l.deleted[id]
	return ok
}

// Len returns the number of records in list.
func (b *Backend) Len(name string) int {
	l := b.lists[name]
	if l == nil {
		return 0
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	return len(l.recs)
}

// Requests returns how many requests list has answered.
func (b *Backend) Requests(name string) int64 {
	if l := b.lists[name]; l != nil {
		return l.requests.Load()
	}
	return 0
}

// ServeHTTP answers as the legacy backend.
func (b *Backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path, ok := strings.CutPrefix(r.URL.Path, b.cfg.BasePath)
	if !ok {
		writeJSONError(w, http.StatusNotFound, "no such endpoint: "+r.URL.Path)
		return
	}
	path = strings.TrimPrefix(path, "/")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeJSONError(w, http.StatusMethodNotAllowed, r.Method+" is not supported; use GET")
		return
	}
	if id, found := strings.CutPrefix(path, "tickets/"); found && id != "history" {
		b.serveTicket(w, id)
		return
	}
	l := b.lists[path]
	if l == nil {
		writeJSONError(w, http.StatusNotFound, "no such endpoint: "+r.URL.Path)
		return
	}
	l.requests.Add(1)
	b.serveList(w, r, l)
}

func (b *Backend) serveTicket(w http.ResponseWriter, rawID string) {
	id, err := strconv.ParseInt(rawID, 10, 64)
	l := b.lists["tickets"]
	if err == nil {
		l.mu.RLock()
		i, found := l.find(id)
		var body []byte
		if found {
			body = l.recs[i].bytes()
		}
		l.mu.RUnlock()
		if found {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(body)
			return
		}
	}
	writeJSONError(w, http.StatusNotFound, "no ticket with id "+rawID)
}

// serveList answers one page of a list.
func (b *Backend) serveList(w http.ResponseWriter, r *http.Request, l *list) {
	q := r.URL.Query()
	page, err := positiveParam(q.Get("_page"), 1)
	if err != nil {
		writeJSONError(w, http.StatusBadRequest, "_page: "+err.Error())
		return
	}
	perPage, err := positiveParam(q.Get("_perPage"), 10)
	if err != nil {
		writeJSONError(w, http.StatusBadRequest, "_perPage: "+err.Error())
		return
	}
	perPage = min(perPage, b.cfg.MaxPerPage)
	field, desc := l.dateField, true // newest first, as the real backend lists
	if f := q.Get("_sortField"); f != "" {
		if f != "id" && f != l.dateField && !hasString(kindOf(l.name).sortable, f) {
			writeJSONError(w, http.StatusBadRequest, fmt.Sprintf("_sortField: %q is not sortable on %s", f, l.name))
			return
		}
		field, desc = f, false
	}
	switch d := strings.ToUpper(q.Get("_sortDir")); d {
	case "", "ASC":
		desc = desc && d == ""
	case "DESC":
		desc = true
	default:
		writeJSONError(w, http.StatusBadRequest, "_sortDir: use ASC or DESC")
		return
	}

	l.mu.RLock()
	recs := l.sorted(field, desc)
	if l.name == "tickets" && q.Get("_filters") != "" {
		if recs, err = b.filterRecords(recs, q.Get("_filters")); err != nil {
			l.mu.RUnlock()
			writeJSONError(w, http.StatusBadRequest, "_filters: "+err.Error())
			return
		}
	}
	total := len(recs)
	from := min((page-1)*perPage, total)
	if page-1 > total/perPage { // also guards the product against overflow
		from = total
	}
	to := min(from+perPage, total)
	body := make([]byte, 0, 64+(to-from)*256)
	if b.cfg.Envelope != "" {
		body = fmt.Appendf(body, `{%q:`, b.cfg.Envelope)
	}
	body = append(body, '[')
	for i, rec := range recs[from:to] {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, rec.bytes()...)
	}
	body = append(body, ']')
	l.mu.RUnlock()
	if b.cfg.Envelope != "" {
		body = fmt.Appendf(body, `,"total":%d,"page":%d,"per_page":%d}`, total, page, perPage)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write(body)
}

func (b *Backend) filterRecords(recs []*record, raw string) ([]*record, error) {
	tickets := make([]*Ticket, len(recs))
	byTicket := make(map[*Ticket]*record, len(recs))
	for i, r := range recs {
		tickets[i] = r.ticket
		byTicket[r.ticket] = r
	}
	kept, err := filterTickets(tickets, raw, b.cfg.Now())
	if err != nil {
		return nil, err
	}
	out := make([]*record, len(kept))
	for i, t := range kept {
		out[i] = byTicket[t]
	}
	return out, nil
}

func positiveParam(s string, def int) (int, error) {
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%q is not a whole number of at least 1", s)
	}
	return n, nil
}

func hasString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func writeJSONError(w http.ResponseWriter, status int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(encode(map[string]string{"message": message}))
}
