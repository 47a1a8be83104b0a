package reference

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/legacy"
)

// TestCostCounters: each list call adds its offset to Skipped (what SQL's
// LIMIT/OFFSET steps over), the records it sends to Served, and both to
// Stepped; a keyset condition is a seek that skips nothing; an offset
// past the end skips the whole list.
func TestCostCounters(t *testing.T) {
	const byID = "&_sortField=id&_sortDir=ASC"
	for _, tc := range []struct {
		name    string
		d       legacy.Dialect
		query   func(b *Backend) string
		skipped int64
		served  int64
	}{
		{"first page", legacy.Dialect{}, func(*Backend) string { return "_page=1&_perPage=10" }, 0, 10},
		{"page 4 of 10", legacy.Dialect{}, func(*Backend) string { return "_page=4&_perPage=10" }, 30, 10},
		{"pages from 0", legacy.Dialect{FromZero: true}, func(*Backend) string { return "_page=4&_perPage=10" }, 40, 10},
		{"offset 57", legacy.Dialect{Offset: "offset", PerPage: "limit"}, func(*Backend) string { return "offset=57&limit=20" }, 57, 20},
		{"offset past the end", legacy.Dialect{Offset: "offset", PerPage: "limit"}, func(*Backend) string { return "offset=900&limit=20" }, 100, 0},
		{"last short page", legacy.Dialect{}, func(*Backend) string { return "_page=4&_perPage=30" }, 90, 10},
		{"keyset deep in the list", legacy.Dialect{Keyset: "id_gt={id}"},
			func(b *Backend) string { return "id_gt=" + itoa(b.IDs("calls")[80]) + "&_perPage=10" }, 0, 10},
		{"keyset and an offset", legacy.Dialect{Keyset: "id_gt={id}", Offset: "offset", PerPage: "limit"},
			func(b *Backend) string { return "id_gt=" + itoa(b.IDs("calls")[50]) + "&offset=5&limit=10" }, 5, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := New(Config{Seed: 3, Records: 100, Paging: tc.d})
			a := get(t, b, "/calls?"+tc.query(b)+byID)
			require.Equal(t, http.StatusOK, a.code, string(a.body))
			assert.Len(t, a.recs, int(tc.served))
			assert.Equal(t, int64(1), b.Requests("calls"))
			assert.Equal(t, tc.skipped, b.Skipped("calls"), "skipped")
			assert.Equal(t, tc.served, b.Served("calls"), "served")
			assert.Equal(t, tc.skipped+tc.served, b.Stepped("calls"), "stepped: skipped and served")
			assert.Zero(t, b.Skipped("tickets")+b.Served("tickets"), "another list's counters")
		})
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestOnly: a backend made with Only serves those lists alone, each the
// same as without Only, and answers 404 for the others (a single ticket's
// path too) without failing its churn.
func TestOnly(t *testing.T) {
	all := New(Config{Seed: 5, Records: 200})
	only := New(Config{Seed: 5, Records: 200, Only: []string{"calls"}})
	q := "/calls?_page=3&_perPage=25&_sortField=id&_sortDir=ASC"
	assert.Equal(t, get(t, all, q).body, get(t, only, q).body, "the list made alone is the same, byte for byte")
	for _, path := range []string{"/tickets", "/tickets/1", "/phone_numbers"} {
		assert.Equal(t, http.StatusNotFound, get(t, only, path).code, path)
	}
	assert.Zero(t, only.Len("tickets"))
	assert.NotPanics(t, func() { only.Churn(5) }, "churn runs on the lists made")
}
