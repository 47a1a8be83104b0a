package reference

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// answer is a backend answer as a test sees it.
type answer struct {
	code int
	body []byte
	recs []map[string]any // the records, when the body is an array
}

func get(t *testing.T, h http.Handler, target string) answer {
	t.Helper()
	return do(t, h, http.MethodGet, target)
}

func do(t *testing.T, h http.Handler, method, target string) answer {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
	require.Equal(t, "application/json", rec.Header().Get("Content-Type"), target)
	a := answer{code: rec.Code, body: rec.Body.Bytes()}
	if a.code == http.StatusOK && strings.HasPrefix(rec.Body.String(), "[") {
		require.NoError(t, json.Unmarshal(a.body, &a.recs), target)
	}
	return a
}

func (a answer) ids() []int64 {
	out := make([]int64, len(a.recs))
	for i, r := range a.recs {
		out[i] = int64(r["id"].(float64))
	}
	return out
}

func (a answer) message(t *testing.T) string {
	t.Helper()
	var e struct{ Message string }
	require.NoError(t, json.Unmarshal(a.body, &e), string(a.body))
	require.NotEmpty(t, e.Message)
	return e.Message
}

// reversed returns a reversed copy of s.
func reversed(s []int64) []int64 {
	out := slices.Clone(s)
	slices.Reverse(out)
	return out
}

func TestPaging(t *testing.T) {
	b := New(Config{Seed: 1, Records: 95, MaxPerPage: 40})
	all := b.IDs("calls")
	const byID = "&_sortField=id&_sortDir=ASC"
	for _, tc := range []struct {
		name, query string
		want        []int64
	}{
		{"first page", "_page=1&_perPage=10" + byID, all[:10]},
		{"middle page", "_page=3&_perPage=10" + byID, all[20:30]},
		{"default page is 1", "_perPage=10" + byID, all[:10]},
		{"default perPage is 10", "_page=2" + byID, all[10:20]},
		{"short last page", "_page=10&_perPage=10" + byID, all[90:]},
		{"past the end", "_page=11&_perPage=10" + byID, []int64{}},
		{"far past the end", "_page=99999999999&_perPage=40" + byID, []int64{}},
		{"page beyond int", "_page=999999999999999999999999" + byID, []int64{}},
		{"perPage clamped to MaxPerPage", "_perPage=100" + byID, all[:40]},
		{"perPage beyond int clamped", "_page=2&_perPage=999999999999999999999999" + byID, all[40:80]},
		{"empty values mean the defaults", "_page=&_perPage=" + byID, all[:10]},
		{"_cursor is ignored", "_perPage=3&_cursor=eyJpZCI6IjUwIn0=" + byID, all[:3]},
		{"unknown parameters are ignored", "_perPage=3&foo=bar" + byID, all[:3]},
		{"empty filters mean none", "_perPage=3&_filters=%5B%5D" + byID, all[:3]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := get(t, b, "/calls?"+tc.query)
			require.Equal(t, http.StatusOK, a.code, string(a.body))
			assert.Equal(t, tc.want, a.ids())
		})
	}
}

// TestPageSizeQuirks: per-list clamps and fixed pages, silently, with the
// page number counting pages of the size served, as real backends do.
func TestPageSizeQuirks(t *testing.T) {
	b := New(Config{Seed: 1, Records: 95, MaxPerPage: 40,
		ListMaxPerPage: map[string]int{"calls": 17}, FixedPerPage: map[string]int{"phone_numbers": 25}})
	calls, phones, history := b.IDs("calls"), b.IDs("phone_numbers"), b.IDs("tickets/history")
	const byID = "&_sortField=id&_sortDir=ASC"
	for _, tc := range []struct {
		name, path string
		want       []int64
	}{
		{"clamped per list", "/calls?_page=2&_perPage=30" + byID, calls[17:34]},
		{"below the clamp", "/calls?_page=2&_perPage=10" + byID, calls[10:20]},
		{"fixed, asked fewer", "/phone_numbers?_page=2&_perPage=10" + byID, phones[25:50]},
		{"fixed, asked more", "/phone_numbers?_page=1&_perPage=100" + byID, phones[:25]},
		{"other lists keep MaxPerPage", "/tickets/history?_page=2&_perPage=100" + byID, history[40:80]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := get(t, b, tc.path)
			require.Equal(t, http.StatusOK, a.code, string(a.body))
			assert.Equal(t, tc.want, a.ids())
		})
	}
}

func TestBadQueries(t *testing.T) {
	b := New(Config{Seed: 1, Records: 20})
	for _, tc := range []struct{ query, want string }{
		{"_page=0", `_page "0": use a whole number of at least 1`},
		{"_page=-1", `_page "-1"`},
		{"_page=-99999999999999999999999", `_page "-99999999999999999999999"`},
		{"_page=two", `_page "two"`},
		{"_perPage=x", `_perPage "x"`},
		{"_perPage=1.5", `_perPage "1.5"`},
		{"_perPage=0", `_perPage "0"`},
		{"_sortField=nope", `_sortField "nope": calls cannot be sorted by it; use one of id, dateCreated, callDuration`},
		{"_filters=nonsense", `_filters: not JSON`},
		{"_sortField=from", `_sortField "from"`},
		{"_sortField=id&_sortDir=up", `_sortDir "up": use ASC or DESC`},
	} {
		t.Run(tc.query, func(t *testing.T) {
			a := get(t, b, "/calls?"+tc.query)
			assert.Equal(t, http.StatusBadRequest, a.code)
			assert.Contains(t, a.message(t), tc.want)
		})
	}
}

func TestSorting(t *testing.T) {
	b := New(Config{Seed: 2, Records: 300})
	ids := b.IDs("calls")

	t.Run("by id", func(t *testing.T) {
		for _, tc := range []struct {
			query string
			want  []int64
		}{
			{"_sortField=id", ids},
			{"_sortField=id&_sortDir=ASC", ids},
			{"_sortField=id&_sortDir=asc", ids},
			{"_sortField=id&_sortDir=DESC", reversed(ids)},
			{"_sortField=id&_sortDir=Desc", reversed(ids)},
		} {
			assert.Equal(t, tc.want, get(t, b, "/calls?_perPage=1000&"+tc.query).ids(), tc.query)
		}
	})

	t.Run("default is newest first, not by id", func(t *testing.T) {
		for _, l := range Lists() {
			a := get(t, b, "/"+l+"?_perPage=1000")
			require.Len(t, a.recs, 300)
			date := kindNamed(l).sortable[0]
			assertOrder(t, a.recs, date, true)
			assert.False(t, slices.IsSorted(a.ids()), l)
			assert.False(t, slices.IsSorted(reversed(a.ids())), l)
			// _sortDir alone turns the default order around.
			assertOrder(t, get(t, b, "/"+l+"?_perPage=1000&_sortDir=ASC").recs, date, false)
		}
	})

	t.Run("other fields", func(t *testing.T) {
		for _, tc := range []struct {
			list, field string
			desc        bool
			key         string // the record's key for field, when it is spelled otherwise
		}{
			{"calls", "callDuration", false, ""},
			{"calls", "call_duration", true, "callDuration"}, // the snake_case spelling sorts too
			{"grid/reports/time", "reportedtime", false, ""},
			{"phone_numbers", "number", true, ""},
			{"tickets/history", "conversation_id", false, ""},
			{"tickets", "date_resolved", true, ""},
			{"tickets", "last_activity", false, ""},
		} {
			dir := "ASC"
			if tc.desc {
				dir = "DESC"
			}
			a := get(t, b, fmt.Sprintf("/%s?_perPage=1000&_sortField=%s&_sortDir=%s", tc.list, tc.field, dir))
			require.Equal(t, http.StatusOK, a.code, string(a.body))
			assertOrder(t, a.recs, cmp.Or(tc.key, tc.field), tc.desc)
		}
	})

	t.Run("pages of a sorted list neither overlap nor skip", func(t *testing.T) {
		var walked []int64
		for page := 1; page <= 30; page++ {
			walked = append(walked, get(t, b, fmt.Sprintf("/calls?_page=%d&_perPage=10&_sortField=callDuration", page)).ids()...)
		}
		assert.ElementsMatch(t, ids, walked, "ties (every unanswered call lasts 0 s) break by id")
	})
}

// assertOrder checks that recs are ordered by field, ties by ascending id.
func assertOrder(t *testing.T, recs []map[string]any, field string, desc bool) {
	t.Helper()
	for i := 1; i < len(recs); i++ {
		a, b := recs[i-1], recs[i]
		c := compareValues(t, a[field], b[field])
		if desc {
			c = -c
		}
		if c == 0 {
			require.Less(t, a["id"].(float64), b["id"].(float64), "tie on %s at %d", field, i)
			continue
		}
		require.Negative(t, c, "%s out of order at %d: %v then %v", field, i, a[field], b[field])
	}
}

// compareValues compares two values of a field: numbers, strings of
// digits (LiveAgent writes many numbers so) as numbers, other strings as
// text.
func compareValues(t *testing.T, a, b any) int {
	switch a := a.(type) {
	case string:
		x, errA := strconv.ParseInt(a, 10, 64)
		y, errB := strconv.ParseInt(b.(string), 10, 64)
		if errA == nil && errB == nil {
			return cmp.Compare(x, y)
		}
		return strings.Compare(a, b.(string))
	case float64:
		switch {
		case a < b.(float64):
			return -1
		case a > b.(float64):
			return 1
		}
		return 0
	}
	t.Fatalf("cannot compare %T", a)
	return 0
}

func TestEnvelope(t *testing.T) {
	b := New(Config{Seed: 1, Records: 30, Envelope: "data"})
	a := get(t, b, "/calls?_page=2&_perPage=5&_sortField=id")
	require.Equal(t, http.StatusOK, a.code)
	var env map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(a.body, &env))
	assert.Len(t, env, 4)
	var recs []struct{ ID int64 }
	require.NoError(t, json.Unmarshal(env["data"], &recs))
	require.Len(t, recs, 5)
	assert.Equal(t, b.IDs("calls")[5], recs[0].ID)
	assert.JSONEq(t, "30", string(env["total"]))
	assert.JSONEq(t, "2", string(env["page"]))
	assert.JSONEq(t, "5", string(env["per_page"]))

	a = get(t, b, "/calls?_page=9")
	assert.True(t, strings.HasPrefix(string(a.body), `{"data":[],"total":30`), string(a.body))

	odd := New(Config{Seed: 1, Records: 3, Envelope: `re"cords`})
	assert.True(t, strings.HasPrefix(string(get(t, odd, "/calls").body), `{"re\"cords":[{`), "the name is JSON-escaped")
}

func TestRouting(t *testing.T) {
	plain := New(Config{Seed: 1, Records: 10})
	based := New(Config{Seed: 1, Records: 10, BasePath: "/api/v3/"})
	ticket := plain.IDs("tickets")[3]
	for _, tc := range []struct {
		name    string
		b       *Backend
		method  string
		target  string
		code    int
		message string
	}{
		{"a list", plain, "GET", "/calls", 200, ""},
		{"a nested list", plain, "GET", "/grid/reports/time", 200, ""},
		{"history is a list, not a ticket", plain, "GET", "/tickets/history", 200, ""},
		{"HEAD", plain, "HEAD", "/phone_numbers", 200, ""},
		{"one ticket", plain, "GET", fmt.Sprint("/tickets/", ticket), 200, ""},
		{"no such ticket", plain, "GET", fmt.Sprint("/tickets/", ticket+1), 404, fmt.Sprint("no ticket with id ", ticket+1)},
		{"ticket id not a number", plain, "GET", "/tickets/abc", 404, `no ticket with id "abc"; ticket ids are whole numbers`},
		{"below a ticket", plain, "GET", fmt.Sprint("/tickets/", ticket, "/messages"), 404, "no endpoint at"},
		{"unknown path", plain, "GET", "/nope", 404, "no endpoint at /nope; the lists are at /calls, /grid/reports/time"},
		{"trailing slash", plain, "GET", "/calls/", 404, "no endpoint"},
		{"root", plain, "GET", "/", 404, "no endpoint"},
		{"POST", plain, "POST", "/calls", 405, "POST is not allowed here"},
		{"DELETE a ticket", plain, "DELETE", fmt.Sprint("/tickets/", ticket), 405, "use GET"},
		{"unknown path before method", plain, "POST", "/nope", 404, "no endpoint"},
		{"under the base path", based, "GET", "/api/v3/calls", 200, ""},
		{"a ticket under the base path", based, "GET", fmt.Sprint("/api/v3/tickets/", ticket), 200, ""},
		{"outside the base path", based, "GET", "/calls", 404, "the lists are at /api/v3/calls, /api/v3/grid"},
		{"base path glued to the name", based, "GET", "/api/v3calls", 404, "no endpoint"},
		{"base path alone", based, "GET", "/api/v3", 404, "no endpoint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := do(t, tc.b, tc.method, tc.target)
			assert.Equal(t, tc.code, a.code, string(a.body))
			if tc.message != "" {
				assert.Contains(t, a.message(t), tc.message)
			}
		})
	}

	a := get(t, plain, fmt.Sprint("/tickets/", ticket))
	var one map[string]any
	require.NoError(t, json.Unmarshal(a.body, &one))
	assert.EqualValues(t, ticket, one["id"])
	assert.Equal(t, "GET, HEAD", func() string {
		rec := httptest.NewRecorder()
		plain.ServeHTTP(rec, httptest.NewRequest(http.MethodPut, "/calls", nil))
		return rec.Header().Get("Allow")
	}())
}

func TestTicketFilters(t *testing.T) {
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b := New(Config{Seed: 1, Records: 400, Now: func() time.Time { return epoch.Add(-time.Hour) }})
	all := get(t, b, "/tickets?_perPage=1000")
	require.Len(t, all.recs, 400)

	// The backend passes _filters to filterTickets and pages what it keeps.
	open := get(t, b, "/tickets?_perPage=1000&_sortField=id&_filters="+url.QueryEscape(`{"status":"C"}`))
	require.Equal(t, http.StatusOK, open.code, string(open.body))
	assert.True(t, slices.IsSorted(open.ids()))
	for _, r := range open.recs {
		assert.Equal(t, "C", r["status"], "C is LiveAgent's open")
	}
	assert.Positive(t, len(open.recs))
	assert.Less(t, len(open.recs), len(all.recs), "the filter narrows the list")
	recent := get(t, b, "/tickets?_perPage=1000&_filters="+url.QueryEscape(`[["date_created","DP","L30D"]]`))
	assert.Positive(t, len(recent.recs), "some tickets are recent relative to a Now near the epoch")
	assert.Less(t, len(recent.recs), 60)
	page2 := get(t, b, "/tickets?_perPage=10&_page=2&_sortField=id&_filters="+url.QueryEscape(`{"status":"C"}`))
	assert.Equal(t, open.ids()[10:20], page2.ids(), "pages are cut from the filtered list")

	// The other lists filter too (listfilter_test.go), and refuse what
	// they cannot apply rather than ignore it.
	assert.Equal(t, http.StatusBadRequest, get(t, b, "/calls?_filters=nonsense").code)
	assert.Equal(t, all.ids(), get(t, b, "/tickets?_perPage=1000&_filters=").ids(), "empty means no filter")
	// A malformed _filters is refused with a 400 naming _filters.
	bad := get(t, b, "/tickets?_filters=not%20json")
	assert.Equal(t, http.StatusBadRequest, bad.code)
	assert.Contains(t, bad.message(t), "_filters: ")
}

func TestRequestsAreCounted(t *testing.T) {
	b := New(Config{Seed: 1, Records: 10})
	get(t, b, "/calls")
	get(t, b, "/calls?_page=0")
	get(t, b, "/tickets/history")
	get(t, b, fmt.Sprint("/tickets/", b.IDs("tickets")[0]))
	assert.EqualValues(t, 2, b.Requests("calls"))
	assert.EqualValues(t, 1, b.Requests("tickets/history"))
	assert.EqualValues(t, 0, b.Requests("tickets"), "one ticket is not a list request")
	assert.EqualValues(t, 0, b.Requests("nope"))
}
