package pbbench

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// settle is how long a walk's end waits before PocketBase's CPU is read
// again: PocketBase writes its request log in batches, at the latest 3 s
// after the last request, and that write is the walk's cost.
const settle = 4 * time.Second

// ints reads a comma-separated list of positive numbers from the
// environment variable name, or def.
func ints(b *testing.B, name string, def []int) []int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			b.Fatalf("%s: %q is not a positive number", name, f)
		}
		out = append(out, n)
	}
	return out
}

// gatewaySite is the gateway in front of PocketBase as docs/backends.md
// has it, serving the list at /items, its calls sent through the counter
// to the collection's records endpoint. The path is rewritten by
// reverse_proxy's own rewrite, not by a rewrite directive after the
// gateway: Caddy puts that directive in a route group, and a client's
// request marks the group as done at its first sub-request, so the
// gateway's later calls of the same request would reach /items
// unrewritten (a 404 from PocketBase). The first %s is backend_sort, the
// second the keyset line or nothing.
const gatewaySite = `{
	admin off
	persist_config off
	auto_https off
}

http://127.0.0.1:%d {
	bind 127.0.0.1
	route {
		respond /ready 200
		helpdesk_gateway {
			cursor_endpoints       /items
			records_path           items
			id_order               lexical
			backend_sort           %s
			backend_page_param     page
			backend_per_page_param perPage
			%s
		}
		reverse_proxy %s {
			rewrite /api/collections/items/records
		}
	}
}
`

// config is one way the gateway is set up in front of PocketBase.
type config struct {
	name      string
	keyset    string // the backend_keyset template, or none
	skipTotal bool   // skipTotal=1 in backend_sort: on every call
}

// The keyset templates: docs/backends.md's, and the same asking
// PocketBase for no totalItems on keyset calls alone (first pages and
// the gateway's offset reads keep it).
const (
	keysetFilter          = `filter=(id>'{id}')`
	keysetFilterSkipTotal = `filter=(id>'{id}')&skipTotal=1`
)

// result is one whole walk's cost.
type result struct {
	name       string
	t          tally
	pbCPU      time.Duration
	gwCPU      time.Duration
	wall       time.Duration
	ownCPU     time.Duration // the own walk's, with the same totals setting
	ownWall    time.Duration
	gatewayRun bool
}

type bench struct {
	b       *testing.B
	gw      string
	pb      *proc
	pbURL   string
	count   *counter
	backend string // the counter's address
	client  *http.Client
}

// walkGateway starts the gateway in cfg, walks /items by
// next_page_cursor at size a page, and stops it: each walk starts cold.
func (w *bench) walkGateway(n, size int, cfg config) result {
	b := w.b
	sort, keyset := "sort=id", ""
	if cfg.skipTotal {
		sort = `"sort=id&skipTotal=1"`
	}
	if cfg.keyset != "" {
		keyset = `backend_keyset "` + cfg.keyset + `"`
	}
	port := freePort(b)
	file := filepath.Join(dir(), "Caddyfile."+strings.NewReplacer(" ", "-", ",", "", "&", "").Replace(cfg.name))
	backend := w.backend
	if os.Getenv("PBBENCH_DIRECT") == "1" {
		// Straight to PocketBase: no counts, and no proxy's time in the
		// walk's wall time.
		backend = strings.TrimPrefix(w.pbURL, "http://")
	}
	if err := os.WriteFile(file, fmt.Appendf(nil, gatewaySite, port, sort, keyset, backend), 0o644); err != nil {
		b.Fatal(err)
	}
	home := filepath.Join(dir(), "caddy-home")
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	gw := start(b, base+"/ready", []string{"HOME=" + home, "XDG_CONFIG_HOME=" + home, "XDG_DATA_HOME=" + home},
		w.gw, "run", "--config", file, "--adapter", "caddyfile")
	defer gw.stop()
	return w.measure(cfg.name, gw, func() (int, error) {
		records, cursor, last := 0, "", ""
		for {
			q := url.Values{"_perPage": {strconv.Itoa(size)}}
			if cursor != "" {
				q.Set("_cursor", cursor)
			}
			resp, ids, err := w.get(base + "/items?" + q.Encode())
			if err != nil {
				return records, err
			}
			if err := ascending(last, ids); err != nil {
				return records, err
			}
			records += len(ids)
			if len(ids) > 0 {
				last = ids[len(ids)-1]
			}
			if cursor = resp.Header.Get("next_page_cursor"); cursor == "" {
				return records, nil
			}
		}
	}, n)
}

// walkOwn walks PocketBase's own keyset API directly, as a client that
// knows it: filter=(id>'LAST')&sort=id&perPage=size until a short page.
func (w *bench) walkOwn(n, size int, skipTotal bool) result {
	name := "own keyset"
	if skipTotal {
		name += ", skipTotal"
	}
	return w.measure(name, nil, func() (int, error) {
		records, last := 0, ""
		for {
			q := url.Values{"sort": {"id"}, "perPage": {strconv.Itoa(size)}}
			if skipTotal {
				q.Set("skipTotal", "1")
			}
			if last != "" {
				q.Set("filter", "(id>'"+last+"')")
			}
			_, ids, err := w.get(pocketBaseURL(w.pbURL, q))
			if err != nil {
				return records, err
			}
			if err := ascending(last, ids); err != nil {
				return records, err
			}
			w.count.mu.Lock() // the client's own count: these calls skip the counter
			w.count.t.calls++
			w.count.t.keysetCalls++
			w.count.t.windows[size]++
			w.count.t.returned += len(ids)
			w.count.mu.Unlock()
			records += len(ids)
			if len(ids) < size {
				return records, nil
			}
			last = ids[len(ids)-1]
		}
	}, n)
}

// measure runs walk and reads PocketBase's CPU (and the gateway's, if
// any) before it and a settle after it.
func (w *bench) measure(name string, gw *proc, walk func() (int, error), n int) result {
	b := w.b
	w.count.reset()
	var gw0 time.Duration
	if gw != nil {
		gw0 = gw.cpu(b)
	}
	pb0 := w.pb.cpu(b)
	t0 := time.Now()
	records, err := walk()
	wall := time.Since(t0)
	if err != nil {
		b.Fatalf("%s: after %d records: %v", name, records, err)
	}
	if records != n {
		b.Fatalf("%s served %d records of %d", name, records, n)
	}
	time.Sleep(settle)
	r := result{name: name, wall: wall, pbCPU: w.pb.cpu(b) - pb0, t: w.count.reset(), gatewayRun: gw != nil}
	if gw != nil {
		r.gwCPU = gw.cpu(b) - gw0
	}
	return r
}

// get reads a page and its records' ids.
func (w *bench) get(u string) (*http.Response, []string, error) {
	resp, err := w.client.Get(u)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Items []struct {
			ID string `json:"id"`
		} `json:"items"`
	}
	if resp.StatusCode != http.StatusOK {
		return resp, nil, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return resp, nil, fmt.Errorf("GET %s: %v", u, err)
	}
	ids := make([]string, len(body.Items))
	for i, it := range body.Items {
		ids[i] = it.ID
	}
	return resp, ids, nil
}

// ascending checks that a walk's ids go up, across pages too.
func ascending(last string, ids []string) error {
	for _, id := range ids {
		if id <= last {
			return fmt.Errorf("id %q after %q: the walk is out of order", id, last)
		}
		last = id
	}
	return nil
}

// totals is which own walks, and the gateway's beside them, run:
// PBBENCH_TOTALS=count only PocketBase's default (a COUNT for
// totalItems on every call), skip only skipTotal=1, both (the default)
// the one and then the other.
func totals(b *testing.B) []bool {
	switch t := os.Getenv("PBBENCH_TOTALS"); t {
	case "", "both":
		return []bool{false, true}
	case "count":
		return []bool{false}
	case "skip":
		return []bool{true}
	default:
		b.Fatalf("PBBENCH_TOTALS: %q is none of both, count and skip", t)
		return nil
	}
}

// BenchmarkWalk: see the package comment (doc.go).
func BenchmarkWalk(b *testing.B) {
	pbBin, gwBin := build(b)
	for _, n := range ints(b, "PBBENCH_RECORDS", []int{300_000}) {
		data := seeded(b, pbBin, n)
		// A fresh request log each run: it grows by a row a call.
		for _, f := range []string{"auxiliary.db", "auxiliary.db-wal", "auxiliary.db-shm"} {
			_ = os.Remove(filepath.Join(data, f))
		}
		port := freePort(b)
		w := &bench{b: b, gw: gwBin, pbURL: fmt.Sprintf("http://127.0.0.1:%d", port),
			client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4, DisableCompression: true}}}
		w.pb = start(b, w.pbURL+"/api/health", nil, pbBin, "--dir", data, "serve", "--http", fmt.Sprintf("127.0.0.1:%d", port))
		w.count, w.backend = newCounter(b, w.pbURL)
		// Warm PocketBase and the page cache: one walk by 1000, not counted.
		w.walkOwn(n, 1000, true)
		for _, size := range ints(b, "PBBENCH_SIZES", []int{10, 100}) {
			b.Run(fmt.Sprintf("records=%d/size=%d", n, size), func(b *testing.B) {
				w.b = b
				for b.Loop() {
					var rows []result
					for _, skip := range totals(b) {
						suffix := ""
						if skip {
							suffix = ", skipTotal"
						}
						own := w.walkOwn(n, size, skip)
						rows = append(rows, own)
						cfgs := []config{{"gateway backend_keyset" + suffix, keysetFilter, skip}, {"gateway page dialect" + suffix, "", skip}}
						if !skip {
							cfgs = append(cfgs, config{"gateway backend_keyset with &skipTotal=1", keysetFilterSkipTotal, false})
						}
						for _, cfg := range cfgs {
							r := w.walkGateway(n, size, cfg)
							r.ownCPU, r.ownWall = own.pbCPU, own.wall
							rows = append(rows, r)
						}
					}
					b.Logf("PocketBase v0.36.8, %d records, %d a page, read-ahead on (readahead_ttl 2s), one run:\n%s", n, size, table(rows))
					for _, r := range rows {
						if !r.gatewayRun {
							continue
						}
						metric := strings.TrimPrefix(strings.NewReplacer(", ", "-", " ", "-").Replace(r.name), "gateway-")
						b.ReportMetric(r.pbCPU.Seconds()/r.ownCPU.Seconds(), metric+"-cpu-x-own")
						b.ReportMetric(r.wall.Seconds()/r.ownWall.Seconds(), metric+"-wall-x-own")
					}
				}
			})
		}
	}
}

// table is the walks as a Markdown table.
func table(rows []result) string {
	var s strings.Builder
	s.WriteString("| walk | calls to PocketBase | records returned | rows stepped by offsets | PocketBase CPU | x own | wall | x own | gateway CPU | calls |\n")
	s.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		cpuX, wallX, gwCPU := "", "", ""
		if r.gatewayRun {
			cpuX = fmt.Sprintf("%.2fx", r.pbCPU.Seconds()/r.ownCPU.Seconds())
			wallX = fmt.Sprintf("%.2fx", r.wall.Seconds()/r.ownWall.Seconds())
			gwCPU = fmt.Sprintf("%.2f s", r.gwCPU.Seconds())
		}
		fmt.Fprintf(&s, "| %s | %d | %d | %d | %.2f s | %s | %.2f s | %s | %s | %s |\n", r.name, r.t.calls, r.t.returned,
			r.t.stepped, r.pbCPU.Seconds(), cpuX, r.wall.Seconds(), wallX, gwCPU, r.t.summary())
	}
	return s.String()
}
