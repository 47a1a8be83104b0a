package legacy

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fetch asks b for path and returns the status and the decoded records.
func fetch(t *testing.T, b http.Handler, target string) (int, []map[string]any, []byte) {
	t.Helper()
	rec := httptest.NewRecorder()
	b.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	var records []map[string]any
	if rec.Code == http.StatusOK && rec.Body.Len() > 0 && rec.Body.Bytes()[0] == '[' {
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &records))
	}
	return rec.Code, records, rec.Body.Bytes()
}

func idsOf(records []map[string]any) []int64 {
	out := make([]int64, len(records))
	for i, r := range records {
		out[i] = int64(r["id"].(float64))
	}
	return out
}

func TestPaging(t *testing.T) {
	b := New(Config{Seed: 1, Records: 95, MaxPerPage: 40})
	all := b.IDs("calls")
	require.Len(t, all, 95)
	require.True(t, slices.IsSorted(all))
	byID := "&_sortField=id&_sortDir=ASC"
	for _, tc := range []struct {
		query string
		want  []int64
	}{
		{"_page=1&_perPage=10" + byID, all[:10]},
		{"_page=3&_perPage=10" + byID, all[20:30]},
		{"_perPage=10" + byID, all[:10]},
		{"_page=2" + byID, all[10:20]},
		{"_page=10&_perPage=10" + byID, all[90:]},
		{"_page=11&_perPage=10" + byID, []int64{}},
		{"_page=99999999999&_perPage=99999" + byID, []int64{}},
		{"_page=1&_perPage=100" + byID, all[:40]}, // clamped to MaxPerPage
		{"_page=1&_perPage=3&_cursor=abc" + byID, all[:3]},
		{"_page=1&_perPage=3&_sortField=id&_sortDir=desc", []int64{all[94], all[93], all[92]}},
	} {
		t.Run(tc.query, func(t *testing.T) {
			code, recs, body := fetch(t, b, "/calls?"+tc.query)
			require.Equal(t, http.StatusOK, code, string(body))
			assert.Equal(t, tc.want, idsOf(recs))
		})
	}
	for _, q := range []string{"_page=0", "_perPage=x", "_page=-1", "_sortField=nope", "_sortField=id&_sortDir=up"} {
		code, _, body := fetch(t, b, "/calls?"+q)
		assert.Equal(t, http.StatusBadRequest, code, q)
		assert.Contains(t, string(body), `"message"`)
	}
}

func TestDefaultOrderIsNewestFirst(t *testing.T) {
	b := New(Config{Seed: 2, Records: 200})
	for _, l := range Lists() {
		code, recs, _ := fetch(t, b, "/"+l+"?_perPage=200")
		require.Equal(t, http.StatusOK, code)
		field := kindOf(l).dateField
		var dates []string
		for _, r := range recs {
			dates = append(dates, r[field].(string))
		}
		assert.True(t, slices.IsSortedFunc(dates, func(a, b string) int { return -compare(a, b) }), l)
		assert.False(t, slices.IsSorted(idsOf(recs)), "%s: the default order is not by id", l)
	}
	// Other sort fields, ascending.
	code, recs, _ := fetch(t, b, "/calls?_perPage=200&_sortField=duration")
	require.Equal(t, http.StatusOK, code)
	var durations []float64
	for _, r := range recs {
		durations = append(durations, r["duration"].(float64))
	}
	assert.True(t, slices.IsSorted(durations))
}

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestRecordsHaveRealisticFields(t *testing.T) {
	b := New(Config{Seed: 3, Records: 20})
	want := map[string][]string{
		"calls":             {"id", "date", "direction", "from", "to", "duration", "agentid", "status"},
		"grid/reports/time": {"id", "agentid", "date", "ticketid", "seconds", "billable"},
		"phone_numbers":     {"id", "number", "name", "type", "departmentid", "active", "date_created"},
		"tickets/history":   {"id", "ticketid", "date", "userid", "type"},
		"tickets": {"id", "code", "status", "tags", "channel_type", "subject", "owner_contactid", "owner_email",
			"owner_name", "agentid", "departmentid", "date_created", "date_changed", "date_resolved", "last_activity",
			"last_activity_public", "public_access_url", "custom_fields"},
	}
	for l, fields := range want {
		_, recs, _ := fetch(t, b, "/"+l)
		require.NotEmpty(t, recs, l)
		for _, f := range fields {
			assert.Contains(t, recs[0], f, "%s.%s", l, f)
		}
	}
	_, recs, _ := fetch(t, b, "/tickets")
	for _, hidden := range []string{"Messages", "messages", "sla_levelid", "groups", "s_category", "f_category"} {
		assert.NotContains(t, recs[0], hidden, "filter-only fields are never returned")
	}
	assert.Len(t, recs[0]["custom_fields"], 4)
}

func TestDeterministicFromSeed(t *testing.T) {
	_, _, a := fetch(t, New(Config{Seed: 7, Records: 50}), "/tickets?_perPage=50")
	_, _, b := fetch(t, New(Config{Seed: 7, Records: 50}), "/tickets?_perPage=50")
	_, _, c := fetch(t, New(Config{Seed: 8, Records: 50}), "/tickets?_perPage=50")
	assert.Equal(t, a, b)
	assert.NotEqual(t, a, c)
}

func TestEnvelopeAndBasePath(t *testing.T) {
	b := New(Config{Seed: 1, Records: 30, Envelope: "data", BasePath: "/api/v3"})
	rec := httptest.NewRecorder()
	b.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v3/calls?_page=2&_perPage=5&_sortField=id", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	var env struct {
		Data    []map[string]any `json:"data"`
		Total   int              `json:"total"`
		Page    int              `json:"page"`
		PerPage int              `json:"per_page"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &env))
	assert.Equal(t, b.IDs("calls")[5:10], idsOf(env.Data))
	assert.Equal(t, 30, env.Total)
	assert.Equal(t, 2, env.Page)
	assert.Equal(t, 5, env.PerPage)
	code, _, _ := fetch(t, b, "/calls")
	assert.Equal(t, http.StatusNotFound, code, "outside the base path")
}

func TestOneTicketAndErrors(t *testing.T) {
	b := New(Config{Seed: 1, Records: 10})
	id := b.IDs("tickets")[3]
	rec := httptest.NewRecorder()
	b.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, fmt.Sprintf("/tickets/%d", id), nil))
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Contains(t, rec.Body.String(), fmt.Sprintf(`"id":%d`, id))
	for _, tc := range []struct {
		method, target string
		code           int
	}{
		{http.MethodGet, "/tickets/1", http.StatusNotFound},
		{http.MethodGet, "/tickets/abc", http.StatusNotFound},
		{http.MethodGet, "/nope", http.StatusNotFound},
		{http.MethodPost, "/calls", http.StatusMethodNotAllowed},
	} {
		rec := httptest.NewRecorder()
		b.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.target, nil))
		assert.Equal(t, tc.code, rec.Code, tc.target)
		assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	}
}

func TestTicketFiltersApply(t *testing.T) {
	b := New(Config{Seed: 1, Records: 300})
	_, all, _ := fetch(t, b, "/tickets?_perPage=1000")
	_, open, _ := fetch(t, b, `/tickets?_perPage=1000&_filters=%7B%22status%22%3A%22open%22%7D`)
	require.NotEmpty(t, open)
	assert.Less(t, len(open), len(all))
	for _, r := range open {
		assert.Equal(t, "open", r["status"])
	}
	code, _, body := fetch(t, b, `/tickets?_filters=%5B%5B%22status%22%2C%22L%22%2C%22x%22%5D%5D`)
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Contains(t, string(body), "_filters")
}

func TestMutations(t *testing.T) {
	b := New(Config{Seed: 1, Records: 10})
	ids := b.IDs("calls")
	require.NoError(t, b.Insert("calls", ids[0]+1))
	assert.Error(t, b.Insert("calls", ids[0]+1), "duplicate id")
	assert.Error(t, b.Insert("nope", 1))
	assert.Equal(t, 11, b.Len("calls"))
	assert.True(t, b.Delete("calls", ids[5]))
	assert.False(t, b.Delete("calls", ids[5]))
	after := b.IDs("calls")
	assert.Len(t, after, 10)
	assert.True(t, slices.IsSorted(after))
	assert.Contains(t, after, ids[0]+1)
	assert.NotContains(t, after, ids[5])
	b.Churn(50)
	churned := b.IDs("calls")
	assert.NotEqual(t, after, churned)
	assert.True(t, slices.IsSorted(churned))
	assert.Len(t, slices.Compact(slices.Clone(churned)), len(churned))
}

// TestConcurrentReadsUnderChurn reads pages while the churn runs; run
// under -race. Each answer is a consistent snapshot: ids strictly ascend.
func TestConcurrentReadsUnderChurn(t *testing.T) {
	before := runtime.NumGoroutine()
	b := New(Config{Seed: 5, Records: 2000, ChurnPerSecond: 2000})
	b.Start()
	b.Start() // idempotent
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for page := 1; page <= 40; page++ {
				rec := httptest.NewRecorder()
				b.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, fmt.Sprintf("/calls?_page=%d&_perPage=50&_sortField=id", page), nil))
				var recs []map[string]any
				if !assert.NoError(t, json.Unmarshal(rec.Body.Bytes(), &recs)) {
					return
				}
				ids := idsOf(recs)
				for i := 1; i < len(ids); i++ {
					assert.Less(t, ids[i-1], ids[i])
				}
			}
		}()
	}
	wg.Wait()
	assert.Positive(t, b.Requests("calls"))
	b.Close()
	b.Close() // idempotent
	// Poll by hand: assert.Eventually runs its condition in a goroutine of its own.
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), before, "no goroutine left behind")
}

func BenchmarkNew(b *testing.B) {
	for _, n := range []int{20000, 100000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				New(Config{Seed: 1, Records: n})
			}
		})
	}
}

func BenchmarkPageByID(b *testing.B) {
	be := New(Config{Seed: 1, Records: 100000})
	req := httptest.NewRequest(http.MethodGet, "/calls?_page=500&_perPage=100&_sortField=id&_sortDir=ASC", nil)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		be.ServeHTTP(rec, req)
	}
}
