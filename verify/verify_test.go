package verify

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/cursor"
)

// fakeGateway serves a cursor endpoint from lists of ids, with faults a
// real gateway must never have, so that verify has something to find.
type fakeGateway struct {
	mu    sync.Mutex
	walks int // _page walks begun (requests for _page=1)

	pageList func(walk int) []int // what the walk-th _page walk reads
	cursor   []int                // what cursor pages are cut from
	// mangle changes the cursor page after id (0: the first page).
	mangle func(after int, ids []int) []int
	// nextID, when set, is the id next_page_cursor carries for a page.
	nextID func(ids []int) string
	status int // when set, every answer has this status
}

func (f *fakeGateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.status != 0 {
		jsonError(w, f.status, "no such list")
		return
	}
	q := r.URL.Query()
	n, _ := strconv.Atoi(q.Get("_perPage"))
	var ids []int
	more := false
	if p := q.Get("_page"); p != "" {
		page, _ := strconv.Atoi(p)
		f.mu.Lock()
		if page == 1 {
			f.walks++
		}
		list := f.pageList(f.walks)
		f.mu.Unlock()
		start := min((page-1)*n, len(list))
		end := min(start+n, len(list))
		ids, more = list[start:end], end < len(list)
	} else {
		after := 0
		if c := q.Get("_cursor"); c != "" {
			id, err := cursor.Decode(c)
			if err != nil {
				jsonError(w, http.StatusBadRequest, err.Error())
				return
			}
			after, _ = strconv.Atoi(id)
		}
		i, _ := slices.BinarySearch(f.cursor, after+1)
		end := min(i+n, len(f.cursor))
		ids, more = slices.Clone(f.cursor[i:end]), end < len(f.cursor)
		if f.mangle != nil {
			ids = f.mangle(after, ids)
		}
	}
	if more && len(ids) > 0 {
		last := strconv.Itoa(ids[len(ids)-1])
		if f.nextID != nil {
			last = f.nextID(ids)
		}
		w.Header().Set("next_page_cursor", cursor.Encode(last))
	}
	records := make([]map[string]any, len(ids))
	for i, id := range ids {
		records[i] = map[string]any{"id": id, "subject": "call " + strconv.Itoa(id)}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(records)
}

// ids1to is 1, 2, ... n.
func ids1to(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

func without(ids []int, drop ...int) []int {
	return slices.DeleteFunc(slices.Clone(ids), func(id int) bool { return slices.Contains(drop, id) })
}

func testVerifyConfig(url string) Config {
	return Config{
		BaseURL: url, Endpoint: "/calls", PerPage: 10, IDField: "id",
		Order: cursor.Numeric, MaxPages: 1000,
		Client: &http.Client{Timeout: 10 * time.Second},
	}
}

func runFake(t *testing.T, f *fakeGateway, edit func(*Config)) (int, string) {
	t.Helper()
	srv := httptest.NewServer(f) // 127.0.0.1
	t.Cleanup(srv.Close)
	cfg := testVerifyConfig(srv.URL)
	if edit != nil {
		edit(&cfg)
	}
	var out bytes.Buffer
	problems, err := Run(t.Context(), cfg, &out)
	require.NoError(t, err)
	return problems, out.String()
}

func TestVerifyFindsWhatIsWrong(t *testing.T) {
	all := ids1to(95)
	same := func(int) []int { return all }
	for _, tc := range []struct {
		name     string
		f        *fakeGateway
		edit     func(*Config)
		problems int
		want     []string // in the report
	}{
		{"a correct gateway", &fakeGateway{pageList: same, cursor: all}, nil, 0,
			[]string{"_page walk: 95 records in 10 pages\ncursor walk: 95 records in 10 pages\nOK", "OK: no duplicates, gaps or order errors"}},
		{"a duplicate across pages", &fakeGateway{pageList: same, cursor: all, mangle: func(after int, ids []int) []int {
			if after == 30 {
				return append([]int{30}, ids[:len(ids)-1]...) // the cursor's own record again
			}
			return ids
		}}, nil, 1, []string{`duplicate: id "30" served twice by the cursor walk, on pages 3 and 4`, "FAIL: 1 problem (1 duplicate)"}},
		{"ids out of order", &fakeGateway{pageList: same, cursor: all, mangle: func(after int, ids []int) []int {
			if after == 50 {
				ids[2], ids[3] = ids[3], ids[2]
			}
			return ids
		}}, nil, 1, []string{`order: cursor page 6: id "53" follows "54"; ids must strictly increase`}},
		{"a record the cursor walk skips", &fakeGateway{pageList: same, cursor: without(all, 42)}, nil, 1,
			[]string{"1 record of the _page walk missing from the cursor walk; rechecking", `gap: id "42" is missing from the cursor walk; the _page walks before and after it both have it (_page 5 and 5)`}},
		{"a record deleted during the walk is no gap", &fakeGateway{pageList: func(walk int) []int {
			if walk == 1 {
				return all
			}
			return without(all, 42)
		}, cursor: without(all, 42)}, nil, 0, []string{"_page recheck: 94 records in 10 pages\nnote: 1 of them gone by the recheck: deleted while the walks ran, not gaps", "OK"}},
		{"a record inserted during the walk", &fakeGateway{pageList: same, cursor: append(slices.Clone(all), 96)}, nil, 0,
			[]string{"note: 1 record of the cursor walk not in the _page walk", "OK"}},
		{"a _page walk that repeats records across pages", &fakeGateway{pageList: func(int) []int {
			return append(append(slices.Clone(all[:10]), all[9]), all[10:]...) // as when a record is inserted before the offset
		}, cursor: all}, nil, 0, []string{"note: the _page walk met 1 record again or out of place", "OK"}},
		{"a _page page out of order", &fakeGateway{pageList: func(int) []int {
			l := slices.Clone(all)
			l[3], l[4] = l[4], l[3]
			return l
		}, cursor: all}, nil, 1, []string{`order: _page walk, _page 1: id "4" follows "5"; a page must be in increasing id order`}},
		{"a cursor that does not carry the last id", &fakeGateway{pageList: same, cursor: all, nextID: func(ids []int) string {
			if ids[0] == 1 {
				return "9"
			}
			return strconv.Itoa(ids[len(ids)-1])
		}}, nil, 2, []string{`cursor: page 1: next_page_cursor carries id "9", not the page's last id "10"`, `duplicate: id "10"`}},
		{"a cursor that does not move", &fakeGateway{pageList: same, cursor: all, nextID: func(ids []int) string { return strconv.Itoa(min(ids[len(ids)-1], 10)) }}, nil, 2,
			[]string{`cursor: page 2: next_page_cursor carries id "10", not the page's last id "20"`,
				`cursor: page 2: next_page_cursor (id "10") does not move past the previous one (id "10"); stopping`}},
		{"a short page before the last", &fakeGateway{pageList: same, cursor: all, mangle: func(after int, ids []int) []int {
			if after == 20 {
				return ids[:5]
			}
			return ids
		}}, nil, 1, []string{"cursor: page 3 has 5 records and a next_page_cursor; a page before the last must have 10"}},
		{"an error answer", &fakeGateway{status: http.StatusNotFound}, nil, 2,
			[]string{"request: _page walk, _page 1: GET http://", "404 Not Found: no such list", "note: the cursor walk served nothing to compare"}},
		{"a body without records", &fakeGateway{pageList: same, cursor: all}, func(c *Config) { c.RecordsPath = "data" }, 2,
			[]string{"request: cursor walk, page 1:", `records_path "data"`, "check --records-path and --id-field"}},
		{"a walk longer than max pages", &fakeGateway{pageList: same, cursor: without(all, 7, 80)}, func(c *Config) { c.MaxPages = 3 }, 4,
			[]string{"incomplete: _page walk did not end within --max-pages 3 pages", "incomplete: the cursor walk did not end within --max-pages 3 pages",
				"incomplete: _page recheck did not end", `gap: id "7"`}},
		{"a key in the endpoint's query is not printed", &fakeGateway{status: http.StatusUnauthorized}, func(c *Config) { c.Endpoint = "/calls?apikey=s3cret" }, 2,
			[]string{"/calls?apikey=REDACTED"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			problems, out := runFake(t, tc.f, tc.edit)
			assert.Equal(t, tc.problems, problems, out)
			for _, w := range tc.want {
				assert.Contains(t, out, w)
			}
			assert.NotContains(t, out, "s3cret")
		})
	}
}

func TestVerifyBoundsItsReport(t *testing.T) {
	all := ids1to(200)
	f := &fakeGateway{pageList: func(int) []int { return all }, cursor: all, mangle: func(after int, ids []int) []int {
		slices.Reverse(ids) // 9 order errors a page
		return ids
	}, nextID: func(ids []int) string { return strconv.Itoa(slices.Max(ids)) }}
	problems, out := runFake(t, f, nil)
	assert.Greater(t, problems, maxShown)
	assert.Equal(t, maxShown, bytes.Count([]byte(out), []byte("\norder: cursor page")))
	assert.Contains(t, out, "order: more of these follow; only the first 20 are shown")
	assert.Contains(t, out, "FAIL: "+strconv.Itoa(problems)+" problems (")
}

func TestVerifyProgress(t *testing.T) {
	all := ids1to(35)
	var progress bytes.Buffer
	_, out := runFake(t, &fakeGateway{pageList: func(int) []int { return all }, cursor: all}, func(c *Config) {
		c.Progress = &progress
		c.Every = 0 // a line after every page
	})
	assert.Contains(t, out, "OK")
	assert.Equal(t, "verify: _page walk: 1 pages, 10 records, at id \"10\"\n"+
		"verify: _page walk: 2 pages, 20 records, at id \"20\"\n"+
		"verify: _page walk: 3 pages, 30 records, at id \"30\"\n"+
		"verify: _page walk: 4 pages, 35 records, at id \"35\"\n"+
		"verify: cursor walk: 1 pages, 10 records, at id \"10\"\n"+
		"verify: cursor walk: 2 pages, 20 records, at id \"20\"\n"+
		"verify: cursor walk: 3 pages, 30 records, at id \"30\"\n"+
		"verify: cursor walk: 4 pages, 35 records, at id \"35\"\n", progress.String())

	progress.Reset()
	_, _ = runFake(t, &fakeGateway{pageList: func(int) []int { return all }, cursor: all}, func(c *Config) {
		c.Progress = &progress
		c.Every = time.Hour
	})
	assert.Empty(t, progress.String(), "a short walk prints no progress")
}

func TestVerifyRefusesABadConfig(t *testing.T) {
	for _, tc := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.BaseURL = "127.0.0.1:8080" }, "--url"},
		{func(c *Config) { c.BaseURL = "ftp://x" }, "--url"},
		{func(c *Config) { c.Endpoint = "calls" }, "--endpoint"},
		{func(c *Config) { c.Endpoint = "http://x/calls" }, "--endpoint"},
		{func(c *Config) { c.PerPage = 0 }, "--per-page"},
		{func(c *Config) { c.MaxPages = 0 }, "--max-pages"},
		{func(c *Config) { c.Client = http.DefaultClient }, "timeout"},
		{func(c *Config) { c.BackendURL = "127.0.0.1:9080" }, "--backend"},
		{func(c *Config) { c.BackendURL = "http://127.0.0.1:9"; c.BackendSort = "%zz" }, "--backend-sort"},
		{func(c *Config) { c.BackendURL = "http://127.0.0.1:9"; c.BackendPerPage = -1 }, "--backend-per-page"},
	} {
		cfg := testVerifyConfig("http://127.0.0.1:1")
		tc.edit(&cfg)
		_, err := Run(t.Context(), cfg, new(bytes.Buffer))
		assert.ErrorContains(t, err, tc.want)
	}
}

// jsonError answers as the gateway does when it refuses a request.
func jsonError(w http.ResponseWriter, status int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(cursor.AppendJSONMessage(nil, message))
}

// fakeBackend pages ids as a backend whose quirks are set: pages numbered
// from first, a clamp, a fixed page size, ids sent as given.
type fakeBackend struct {
	ids          []string
	first        int
	clamp, fixed int
}

func (f *fakeBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	page, _ := strconv.Atoi(q.Get("_page"))
	n, _ := strconv.Atoi(q.Get("_perPage"))
	if page < f.first {
		jsonError(w, http.StatusBadRequest, "no such page")
		return
	}
	switch {
	case f.fixed > 0:
		n = f.fixed
	case f.clamp > 0:
		n = min(n, f.clamp)
	}
	start := min((page-f.first)*n, len(f.ids))
	records := []map[string]string{}
	for _, id := range f.ids[start:min(start+n, len(f.ids))] {
		records = append(records, map[string]string{"id": id})
	}
	_ = json.NewEncoder(w).Encode(records)
}

// TestVerifyDescribesTheBackend: what the backend walk reports of the
// backend's paging, and the Caddyfile lines it prints.
func TestVerifyDescribesTheBackend(t *testing.T) {
	numbers := make([]string, 95)
	for i := range numbers {
		numbers[i] = strconv.Itoa(i + 1)
	}
	asStrings := slices.Clone(numbers)
	slices.Sort(asStrings)
	for _, tc := range []struct {
		name string
		b    fakeBackend
		want []string
	}{
		{"clamp", fakeBackend{ids: numbers, first: 1, clamp: 30},
			[]string{"backend _page walk: 95 records in 4 pages", "clamps _perPage to 30", "first page: _page=1", "\tbackend_max_per_page 30\n\tid_order numeric\n"}},
		{"pages from 0", fakeBackend{ids: numbers, first: 0, clamp: 30},
			[]string{"first page: _page=0", "\tbackend_first_page 0\n"}},
		{"ignores _perPage", fakeBackend{ids: numbers, first: 1, fixed: 40},
			[]string{"ignores _perPage, sends pages of 40", "\tbackend_max_per_page 40\n"}},
		{"numbers sorted as strings", fakeBackend{ids: asStrings, first: 1},
			[]string{"ascending as strings", "\tid_order lexical\n"}},
		{"one page", fakeBackend{ids: numbers, first: 1},
			[]string{"the whole list (95 records) came in one page"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			backend := httptest.NewServer(&tc.b)
			t.Cleanup(backend.Close)
			_, out := runFake(t, &fakeGateway{pageList: func(int) []int { return ids1to(95) }, cursor: ids1to(95)},
				func(c *Config) { c.BackendURL = backend.URL })
			for _, w := range tc.want {
				assert.Contains(t, out, w)
			}
		})
	}
}

// failingBackend is fakeBackend answering 503 to the walk's windows (the
// _perPage it asks for, not the one-record probes) from page from on.
type failingBackend struct {
	fakeBackend
	from int
}

func (f *failingBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if page, _ := strconv.Atoi(q.Get("_page")); page >= f.from && q.Get("_perPage") != "1" {
		jsonError(w, http.StatusServiceUnavailable, "down")
		return
	}
	f.fakeBackend.ServeHTTP(w, r)
}

// TestVerifyReportsOnlyWhatItObserved: when requests fail, verify says
// what it could not observe, and prints no finding, nor any Caddyfile
// line, that no answer showed.
func TestVerifyReportsOnlyWhatItObserved(t *testing.T) {
	numbers := make([]string, 95)
	for i := range numbers {
		numbers[i] = strconv.Itoa(i + 1)
	}
	for _, tc := range []struct {
		name      string
		gateway   *fakeGateway
		backend   http.Handler
		want, not []string
	}{
		{"every request fails", &fakeGateway{status: http.StatusServiceUnavailable},
			&fakeGateway{status: http.StatusServiceUnavailable},
			[]string{"backend _page walk: 0 records in 0 pages, stopped before the end", "so its page size, first page and id order could not be observed", "FAIL:"},
			[]string{"page size:", "first page:", "id order:", "matching Caddyfile lines", "the list is empty", "OK:"}},
		{"the backend fails after its first page", &fakeGateway{pageList: func(int) []int { return ids1to(95) }, cursor: ids1to(95)},
			&failingBackend{fakeBackend{ids: numbers, first: 1, clamp: 30}, 2},
			[]string{"page size: not observed: the backend walk stopped before the end", "first page: _page=1",
				"id order: ascending numeric with _sortField=id&_sortDir=ASC, in the 30 records read before the walk stopped",
				"FAIL:"},
			[]string{"backend_max_per_page", "id_order", "clamps", "matching Caddyfile lines"}},
		{"the backend's list is empty", &fakeGateway{pageList: func(int) []int { return nil }, cursor: nil},
			&fakeBackend{first: 1},
			[]string{"page size: not observed: the list is empty", "id order: not observed: fewer than two records came"},
			[]string{"id_order", "backend_max_per_page"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			backend := httptest.NewServer(tc.backend)
			t.Cleanup(backend.Close)
			_, out := runFake(t, tc.gateway, func(c *Config) { c.BackendURL = backend.URL })
			for _, w := range tc.want {
				assert.Contains(t, out, w)
			}
			for _, n := range tc.not {
				assert.NotContains(t, out, n)
			}
		})
	}
}
