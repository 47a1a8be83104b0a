// Package sqlbench measures what a whole cursor walk costs a backend that
// serves its list from a real SQL engine: SQLite, through modernc.org's
// pure-Go driver, in a module of its own so that neither the driver nor
// this benchmark is in the plugin's dependency graph (xcaddy builds with
// the plugin's go.mod), nor in the main module's go test ./...
//
// The backend is an http.Handler over one table, items, whose id is the
// INTEGER PRIMARY KEY (SQLite's rowid B-tree). It pages two ways, as the
// backends the gateway fronts do:
//
//	?_page=P&_perPage=S   SELECT ... ORDER BY id LIMIT S OFFSET (P-1)*S
//	?id_gt=X&_perPage=S   SELECT ... WHERE id > X ORDER BY id LIMIT S
//
// and encodes each row as JSON, as such a backend does. It measures the
// CPU time its own thread spends on each request
// (CLOCK_THREAD_CPUTIME_ID), so that the figures hold on a busy machine.
package sqlbench

import (
	"database/sql"
	"fmt"
	"net/http"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
	_ "modernc.org/sqlite" // the pure-Go SQLite driver, "sqlite"
)

// Backend serves the items table of a SQLite database.
type Backend struct {
	db           *sql.DB
	page, keyset *sql.Stmt

	calls atomic.Int64
	cpu   atomic.Int64 // nanoseconds of thread CPU time in ServeHTTP
	rows  atomic.Int64 // rows sent
}

// MaxPerPage clamps _perPage, as backend_max_per_page's default assumes.
const MaxPerPage = 1000

// Open makes (or reuses) the database at path with n items and returns a
// backend over it.
func Open(path string, n int) (*Backend, error) {
	db, err := sql.Open("sqlite", path+"?_pragma=journal_mode(WAL)&_pragma=synchronous(OFF)")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(4)
	if err := fill(db, n); err != nil {
		db.Close()
		return nil, err
	}
	const cols = "SELECT id, created, name, amount, note FROM items "
	b := &Backend{db: db}
	if b.page, err = db.Prepare(cols + "ORDER BY id LIMIT ? OFFSET ?"); err != nil {
		db.Close()
		return nil, err
	}
	if b.keyset, err = db.Prepare(cols + "WHERE id > ? ORDER BY id LIMIT ?"); err != nil {
		db.Close()
		return nil, err
	}
	return b, nil
}

// Close closes the database.
func (b *Backend) Close() error { return b.db.Close() }

// fill makes the items table hold n rows, ids ascending with gaps of 1
// to 3 from a fixed seed, unless it holds them already.
func fill(db *sql.DB, n int) error {
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS items (id INTEGER PRIMARY KEY, created TEXT NOT NULL,
		name TEXT NOT NULL, amount INTEGER NOT NULL, note TEXT NOT NULL)`); err != nil {
		return err
	}
	var have int
	if err := db.QueryRow("SELECT count(*) FROM items").Scan(&have); err != nil {
		return err
	}
	if have == n {
		return nil
	}
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.Exec("DELETE FROM items"); err != nil {
		return err
	}
	ins, err := tx.Prepare("INSERT INTO items (id, created, name, amount, note) VALUES (?, ?, ?, ?, ?)")
	if err != nil {
		return err
	}
	epoch := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	id, x := int64(0), uint64(1)
	for i := range n {
		x = x*6364136223846793005 + 1442695040888963407 // a fixed LCG: the same table every time
		id += 1 + int64(x>>62)%3
		created := epoch.Add(time.Duration(i) * time.Minute).Format(time.RFC3339)
		if _, err := ins.Exec(id, created, "caller "+strconv.FormatUint(x>>40, 36), int64(x>>50), "a note of some forty characters, like one"); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// Stats is what the backend has done since it was opened.
type Stats struct {
	Calls, Rows int64
	CPU         time.Duration
}

// Stats returns the backend's counters.
func (b *Backend) Stats() Stats {
	return Stats{Calls: b.calls.Load(), Rows: b.rows.Load(), CPU: time.Duration(b.cpu.Load())}
}

// ServeHTTP answers a list call: the page or the keyset condition, with
// the records as a bare JSON array in id order.
func (b *Backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := threadCPU()
	defer func() { b.cpu.Add(int64(threadCPU() - start)) }()
	b.calls.Add(1)

	q := r.URL.Query()
	size, err := whole(q.Get("_perPage"), 10)
	if err != nil || size < 1 {
		http.Error(w, `{"message":"_perPage: a whole number of at least 1"}`, http.StatusBadRequest)
		return
	}
	size = min(size, MaxPerPage)
	var rows *sql.Rows
	if after := q.Get("id_gt"); after != "" {
		x, err := strconv.ParseInt(after, 10, 64)
		if err != nil {
			http.Error(w, `{"message":"id_gt: a whole number"}`, http.StatusBadRequest)
			return
		}
		rows, err = b.keyset.QueryContext(r.Context(), x, size)
	} else {
		page, err := whole(q.Get("_page"), 1)
		if err != nil || page < 1 {
			http.Error(w, `{"message":"_page: a whole number of at least 1"}`, http.StatusBadRequest)
			return
		}
		rows, err = b.page.QueryContext(r.Context(), size, (page-1)*size)
	}
	if err != nil {
		http.Error(w, fmt.Sprintf(`{"message":%q}`, err.Error()), http.StatusInternalServerError)
		return
	}
	defer rows.Close()
	body := make([]byte, 0, 256*size)
	body = append(body, '[')
	var (
		id, amount          int64
		created, name, note string
		n                   int64
	)
	for rows.Next() {
		if err := rows.Scan(&id, &created, &name, &amount, &note); err != nil {
			http.Error(w, fmt.Sprintf(`{"message":%q}`, err.Error()), http.StatusInternalServerError)
			return
		}
		if n > 0 {
			body = append(body, ',')
		}
		n++
		body = strconv.AppendInt(append(body, `{"id":`...), id, 10)
		body = strconv.AppendQuote(append(body, `,"created":`...), created)
		body = strconv.AppendQuote(append(body, `,"name":`...), name)
		body = strconv.AppendInt(append(body, `,"amount":`...), amount, 10)
		body = strconv.AppendQuote(append(body, `,"note":`...), note)
		body = append(body, '}')
	}
	if err := rows.Err(); err != nil {
		http.Error(w, fmt.Sprintf(`{"message":%q}`, err.Error()), http.StatusInternalServerError)
		return
	}
	body = append(body, ']')
	b.rows.Add(n)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

func whole(s string, def int) (int, error) {
	if s == "" {
		return def, nil
	}
	return strconv.Atoi(s)
}

// threadCPU is the CPU time of the calling OS thread so far.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}
