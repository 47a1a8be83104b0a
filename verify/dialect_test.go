package verify

import (
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/helpdesk-gateway/gateway/legacy"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// TestVerifyWalksTheBackendInItsDialect: with the gateway's dialect
// options, verify --backend walks the backend by its own names, finds
// every record, and reports the paging it observed with the matching
// Caddyfile lines; a dialect the backend does not read is a problem.
func TestVerifyWalksTheBackendInItsDialect(t *testing.T) {
	for _, tc := range []struct {
		name    string
		backend legacy.Dialect // what the backend reads
		told    legacy.Dialect // what verify is told
		clamp   int
		want    []string
		bad     bool
	}{
		{name: "page/per_page", backend: legacy.Dialect{Page: "page", PerPage: "per_page"}, told: legacy.Dialect{Page: "page", PerPage: "per_page"}, clamp: 30,
			want: []string{"backend page walk: 95 records in 4 pages", "clamps per_page to 30", "first page: page=1",
				"\tbackend_max_per_page 30\n", "\tbackend_page_param page\n\tbackend_per_page_param per_page\n"}},
		{name: "pages from 0, found", backend: legacy.Dialect{Page: "p", PerPage: "n", FromZero: true}, told: legacy.Dialect{Page: "p", PerPage: "n"}, clamp: 40,
			want: []string{"backend p walk: 95 records in 3 pages", "first page: p=0 (the gateway numbers pages from 1 unless told", "\tbackend_first_page 0\n"}},
		{name: "pages from 0, told", backend: legacy.Dialect{Page: "p", PerPage: "n", FromZero: true}, told: legacy.Dialect{Page: "p", PerPage: "n", FromZero: true}, clamp: 40,
			want: []string{"first page: p=0\n", "\tbackend_first_page 0\n"}},
		{name: "told from 0, but from 1", backend: legacy.Dialect{}, told: legacy.Dialect{FromZero: true}, clamp: 40,
			want: []string{"first page: _page=1 (_page=0 is empty or the same page): remove backend_first_page 0"}},
		{name: "offset/limit", backend: legacy.Dialect{Offset: "startAt", PerPage: "maxResults"}, told: legacy.Dialect{Offset: "startAt", PerPage: "maxResults"}, clamp: 25,
			want: []string{"backend startAt walk: 95 records in 4 pages", "clamps maxResults to 25", "paging: by offset startAt and limit maxResults",
				"\tbackend_offset_param startAt\n\tbackend_per_page_param maxResults\n"}},
		{name: "offset, not clamped", backend: legacy.Dialect{Offset: "offset", PerPage: "limit"}, told: legacy.Dialect{Offset: "offset", PerPage: "limit"},
			want: []string{"backend offset walk: 95 records in 1 page\n", "the whole list (95 records) came in one page"}},
		{name: "a page backend told offsets", backend: legacy.Dialect{Page: "page", PerPage: "limit"}, told: legacy.Dialect{Offset: "offset", PerPage: "limit"}, clamp: 30,
			want: []string{"asking for offset 1 gave the first window again: the backend does not page by offset; set backend_page_param", "paging: offset is not read as the window"}, bad: true},
		{name: "names the backend does not read", backend: legacy.Dialect{Page: "page", PerPage: "per_page"}, told: legacy.Dialect{}, clamp: 30,
			want: []string{"asking for _page 2 gave the first window again: the backend does not page by _page", "paging: _page is not read as the window"}, bad: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := reference.New(reference.Config{Seed: 4, Records: 95, MaxPerPage: max(tc.clamp, 1000*btoi(tc.clamp == 0)), Paging: tc.backend})
			backend := httptest.NewServer(b)
			t.Cleanup(backend.Close)
			ids := b.IDs("calls")
			gateway := &fakeGateway{pageList: func(int) []int { return ints(ids) }, cursor: ints(ids)}
			problems, out := runFake(t, gateway, func(c *Config) {
				c.BackendURL = backend.URL
				c.BackendPaging = tc.told
			})
			for _, w := range tc.want {
				assert.Contains(t, out, w)
			}
			if tc.bad {
				assert.Positive(t, problems, out)
			} else {
				assert.Zero(t, problems, out)
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func ints(ids []int64) []int {
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i], _ = strconv.Atoi(strconv.FormatInt(id, 10))
	}
	return out
}
