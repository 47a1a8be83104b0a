// Package reference is the reference legacy help-desk backend, a plain
// http.Handler that behaves like the backend the gateway fronts. The
// default Caddyfile and the tests run it.
//
// It serves five lists (see Lists) and single tickets at /tickets/{id}. It
// pages only with _page and _perPage, or the names of another paging
// dialect (Config.Paging), and ignores _cursor; it sorts with
// _sortField and _sortDir, and lists newest first by default, not by id,
// so a client that wants id order must ask for it. The ticket list applies
// _filters. Errors are JSON, {"message": "..."}.
//
// Its data set is made from a seed, with dates in the two years before a
// fixed epoch, so the same seed always gives the same bytes. Each record
// is encoded once, when it is made: a page is its records' bytes joined.
// An optional churn inserts and deletes records while the backend runs,
// so that the gateway's guarantees can be seen under change.
package reference

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/helpdesk-gateway/gateway/legacy"
)

// Config sets up a reference backend. The zero value is usable.
type Config struct {
	// Seed makes the data set: the same seed gives the same records, byte
	// for byte.
	Seed uint64

	// Records is the number of records each list starts with; default 1000.
	Records int

	// MaxPerPage caps _perPage: a larger value is clamped to it, not
	// refused, as lenient backends do. Default 1000.
	MaxPerPage int

	// Paging is the backend's paging dialect: the names of its page
	// number and page size, whether pages count from 0, or an offset and
	// a limit instead of pages. The zero value is LiveAgent's _page and
	// _perPage from 1. Parameters of another dialect are ignored, as any
	// backend ignores what it does not know.
	Paging legacy.Dialect

	// KeysetInclusive makes the keyset condition (Paging.Keyset) keep the
	// record with the id itself, as json-server's id_gte does; by default
	// it keeps the records above it, as id_gt, PostgREST's gt. and
	// PocketBase's > do.
	KeysetInclusive bool

	// ListMaxPerPage clamps _perPage on the named lists (as Lists names
	// them, e.g. "calls") instead of MaxPerPage, silently: real backends
	// clamp differently per endpoint, and to odd numbers.
	ListMaxPerPage map[string]int

	// FixedPerPage makes the named lists ignore _perPage and always serve
	// pages of this many records, as some backends do.
	FixedPerPage map[string]int

	// BasePath is a prefix of every path, such as "/api/v3"; default none.
	BasePath string

	// Envelope, when set, wraps each page as
	// {"<Envelope>": [...], "total": N, "page": P, "per_page": S}, where N
	// counts the records the query matched; by default the body is the
	// bare array.
	Envelope string

	// ChurnPerSecond is how many records are inserted or deleted per
	// second in each list between Start and Close; default 0, no churn.
	ChurnPerSecond float64

	// DataEpoch ends the two years the data set's dates fall in; default
	// 2026-01-01 00:00:00 UTC. It is fixed, not the current time, so the
	// data set depends on the seed alone.
	DataEpoch time.Time

	// Now is the clock that date periods in _filters (operator DP) are
	// relative to. Default: the last second before DataEpoch, a fixed
	// time, so that the same filter always selects the same records and
	// every period (T today, LY last year, ...) holds some: the data set
	// ends there, and a wall clock past it would find most periods empty.
	Now func() time.Time

	// RecordDeletions keeps the id of every deleted record, for tests that
	// check which records existed throughout a walk. It grows with churn.
	RecordDeletions bool

	// Only, when set, names the only lists the backend makes and serves
	// (as Lists names them); the others answer 404. A list of a million
	// records costs about a second and most of a gigabyte to make, so a
	// test of one list at that size makes that list alone. Each list
	// made is the same as without Only, byte for byte.
	Only []string
}

// Backend is the reference legacy help-desk backend. It is safe for
// concurrent use: each answer is made under one read lock of its list, so
// it is a consistent snapshot of the list.
type Backend struct {
	cfg         Config
	envelopeKey []byte // cfg.Envelope as a JSON string, encoded once
	lists       map[string]*list
	keysetTmpl  *legacy.KeysetTemplate // Paging.Keyset taken apart; nil without

	mu  sync.Mutex // guards gen, whose random source Insert and Churn share
	gen *gen

	run  sync.Mutex // guards stop and done, the churn's lifecycle
	stop chan struct{}
	done chan struct{}
}

// Lists returns the names of the lists the backend serves: their paths
// without the base path and the leading slash.
func Lists() []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = k.name
	}
	return out
}

// New makes a backend and its data set. Ids ascend from 1 with random gaps
// of 1 to 20, so that records can be inserted between them.
func New(cfg Config) *Backend {
	if cfg.Records <= 0 {
		cfg.Records = 1000
	}
	if cfg.MaxPerPage <= 0 {
		cfg.MaxPerPage = 1000
	}
	if cfg.BasePath = strings.TrimRight(cfg.BasePath, "/"); cfg.BasePath != "" && !strings.HasPrefix(cfg.BasePath, "/") {
		cfg.BasePath = "/" + cfg.BasePath
	}
	if cfg.DataEpoch.IsZero() {
		cfg.DataEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if cfg.Now == nil {
		last := cfg.DataEpoch.Add(-time.Second)
		cfg.Now = func() time.Time { return last }
	}
	maxID := int64(cfg.Records) * (1 + maxGap) / 2 // about where the ids end
	newGen := func(stream uint64) *gen {
		own := rand.NewPCG(0, 0)
		return &gen{r: rand.New(rand.NewPCG(cfg.Seed, stream)), epoch: cfg.DataEpoch, maxID: maxID,
			seed: cfg.Seed, ownSeed: own, own: rand.New(own)}
	}
	b := &Backend{cfg: cfg, envelopeKey: encode(cfg.Envelope), lists: make(map[string]*list, len(kinds)), gen: newGen(0)}

	if cfg.Paging.Keyset != "" {
		t := parseKeysetTemplate(cfg.Paging.Keyset)
		b.keysetTmpl = &t
	}

	// Each list draws from a stream of its own, so the lists are made in
	// parallel and still depend on the seed alone.
	made := make([]*list, len(kinds))
	var wg sync.WaitGroup
	for i := range kinds {
		if cfg.Only != nil && !slices.Contains(cfg.Only, kinds[i].name) {
			continue
		}
		wg.Go(func() {
			k := &kinds[i]
			h := fnv.New64a()
			h.Write([]byte(k.name))
			g := newGen(h.Sum64())
			l := &list{kind: k, recs: make([]*record, cfg.Records)}
			if cfg.RecordDeletions {
				l.deleted = make(map[int64]struct{})
			}
			var id int64
			for j := range l.recs {
				id += 1 + g.r.Int64N(maxGap)
				l.recs[j] = k.make(g, id)
			}
			made[i] = l
		})
	}
	wg.Wait()
	for _, l := range made {
		if l != nil {
			b.lists[l.kind.name] = l
		}
	}
	return b
}

// list returns the list called name, or an error that names the lists.
func (b *Backend) list(name string) (*list, error) {
	if l := b.lists[name]; l != nil {
		return l, nil
	}
	return nil, fmt.Errorf("no list %q; the lists are %s", name, strings.Join(Lists(), ", "))
}

// Insert adds to the list called name a record made like the others, with
// id. It fails when id is below 1 or the list has a record with id already.
func (b *Backend) Insert(name string, id int64) error {
	l, err := b.list(name)
	if err != nil {
		return err
	}
	if id < 1 {
		return fmt.Errorf("id %d: ids are whole numbers of at least 1", id)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, found := l.find(id); found {
		return fmt.Errorf("%s has a record with id %d already", name, id)
	}
	l.insert(l.kind.make(b.gen, id))
	return nil
}

// Delete removes the record with id from the list called name and reports
// whether there was one.
func (b *Backend) Delete(name string, id int64) bool {
	l, err := b.list(name)
	if err != nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.remove(id)
}

// IDs returns the ids of the list called name, ascending; nil for an
// unknown list.
func (b *Backend) IDs(name string) []int64 {
	if l, err := b.list(name); err == nil {
		return l.ids()
	}
	return nil
}

// Len returns the number of records in the list called name.
func (b *Backend) Len(name string) int {
	l, err := b.list(name)
	if err != nil {
		return 0
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	return len(l.recs)
}

// Requests returns how many list requests the list called name has
// received, answered or refused. Requests for one ticket, /tickets/{id}, are not counted.
func (b *Backend) Requests(name string) int64 {
	if l, err := b.list(name); err == nil {
		return l.requests.Load()
	}
	return 0
}

// Served returns how many records the list called name has sent in its
// list answers: what a client in front of it fetched, counted where it is
// sent rather than derived from the queries.
func (b *Backend) Served(name string) int64 {
	if l, err := b.list(name); err == nil {
		return l.served.Load()
	}
	return 0
}

// Stepped returns how many records the list called name has stepped
// through to answer its list requests: for each, the records before the
// page in its order (SQL's OFFSET, which a database walks through) and
// the records sent, so Skipped plus Served. A keyset condition
// (Paging.Keyset) costs nothing to find, as a B-tree seek on the id's
// index finds it (counted as 0 records, not log2 of the list), so a
// keyset call steps through the records it sends and those of the offset
// it is given, if any. An offset past the end steps through the whole
// list (to find nothing there).
func (b *Backend) Stepped(name string) int64 {
	if l, err := b.list(name); err == nil {
		return l.stepped.Load()
	}
	return 0
}

// Skipped returns how many records the list called name has stepped over
// without sending them: the offsets of its list requests, as SQL's
// LIMIT/OFFSET walks past them (o records for an offset o, page p of
// size s counting as offset (p-1)*s). A keyset condition skips none: see
// Stepped. It is Stepped less Served, counted apart so that a cost
// model can say what a walk's offsets cost beside what it was sent.
func (b *Backend) Skipped(name string) int64 {
	if l, err := b.list(name); err == nil {
		return l.skipped.Load()
	}
	return 0
}

// Deleted reports whether a record with id was ever deleted from the list
// called name. It
// needs Config.RecordDeletions; without it, it is always false.
func (b *Backend) Deleted(name string, id int64) bool {
	l, err := b.list(name)
	if err != nil {
		return false
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	_, ok := l.deleted[id]
	return ok
}
