package verify

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/helpdesk-gateway/gateway/legacy"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// TestVerifyChecksBackendKeyset: told the gateway's backend_keyset,
// verify --backend asks the backend for the records above a few ids of
// its own walk and reports a backend that ignores the condition, answers
// records at or below the id, or nothing; then it walks the whole list by
// keyset and reports, naming the first id, a backend whose keyset walk
// differs from its own (records above the id missing); one that keeps
// it, strictly or inclusively, passes, with the Caddyfile line.
func TestVerifyChecksBackendKeyset(t *testing.T) {
	// lower moves the backend's id_gt down by 30: records at or below
	// the id asked; empty answers nothing to a keyset call.
	lower := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			q := r.URL.Query()
			if v := q.Get("id_gt"); v != "" {
				n, _ := strconv.Atoi(v)
				q.Set("id_gt", strconv.Itoa(n-30))
				r.URL.RawQuery = q.Encode()
			}
			next.ServeHTTP(w, r)
		})
	}
	// raise moves it up by 30 below id 500, as a condition on another
	// field that runs behind the id for old records (migrated tickets'
	// numbers) reads it: records above the id go missing, no answer has
	// one at or below it, and the probes near the end agree.
	raise := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			q := r.URL.Query()
			if v := q.Get("id_gt"); v != "" {
				if n, _ := strconv.Atoi(v); n < 500 {
					q.Set("id_gt", strconv.Itoa(n+30))
				}
				r.URL.RawQuery = q.Encode()
			}
			next.ServeHTTP(w, r)
		})
	}
	empty := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Has("id_gt") {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte("[]"))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	for _, tc := range []struct {
		name      string
		backend   legacy.Dialect // what the backend reads
		inclusive bool
		wrap      func(http.Handler) http.Handler
		told      legacy.Dialect // what verify is told
		want      []string
		bad       bool
	}{
		{name: "id_gt kept", backend: legacy.Dialect{Keyset: "id_gt={id}"}, told: legacy.Dialect{Keyset: "id_gt={id}"},
			want: []string{`backend_keyset "id_gt={id}": kept, records above the id in id order, 4 probes`, "\tbackend_keyset \"id_gt={id}\"\n"}},
		{name: "json-server id_gte kept, inclusive", backend: legacy.Dialect{Keyset: "id_gte={id}"}, inclusive: true, told: legacy.Dialect{Keyset: "id_gte={id}"},
			want: []string{`backend_keyset "id_gte={id}": kept, inclusive (answers start at the id itself, which the gateway drops)`}},
		{name: "PocketBase filter kept", backend: legacy.Dialect{Keyset: "filter=(id>'{id}')", Page: "page", PerPage: "perPage"},
			told: legacy.Dialect{Keyset: "filter=(id>'{id}')", Page: "page", PerPage: "perPage"},
			want: []string{`backend_keyset "filter=(id>'{id}')": kept`, "\tbackend_keyset \"filter=(id>'{id}')\"\n"}},
		{name: "ignored", backend: legacy.Dialect{}, told: legacy.Dialect{Keyset: "id_gt={id}"},
			want: []string{"the backend answered from the list's start", "it ignores the condition", `backend_keyset "id_gt={id}": not kept by the backend`}, bad: true},
		{name: "another form than the backend's", backend: legacy.Dialect{Keyset: "id=gt.{id}"}, told: legacy.Dialect{Keyset: "id_gt={id}"},
			want: []string{"it ignores the condition"}, bad: true},
		{name: "records at or below the id", backend: legacy.Dialect{Keyset: "id_gt={id}"}, wrap: lower, told: legacy.Dialect{Keyset: "id_gt={id}"},
			want: []string{"at or below it: it misreads the condition"}, bad: true},
		{name: "records above the id missing", backend: legacy.Dialect{Keyset: "id_gt={id}"}, wrap: raise, told: legacy.Dialect{Keyset: "id_gt={id}"},
			want: []string{"keyset: backend_keyset: the backend's keyset walk and its own walk differ first after id", "the keyset walk has id"}, bad: true},
		{name: "nothing", backend: legacy.Dialect{Keyset: "id_gt={id}"}, wrap: empty, told: legacy.Dialect{Keyset: "id_gt={id}"},
			want: []string{"the backend answered nothing where its own walk has 5 records after it"}, bad: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := reference.New(reference.Config{Seed: 4, Records: 95, Paging: tc.backend, KeysetInclusive: tc.inclusive})
			var h http.Handler = b
			if tc.wrap != nil {
				h = tc.wrap(b)
			}
			backend := httptest.NewServer(h)
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
				assert.Contains(t, out, "keyset: backend")
				assert.NotContains(t, out, "\tbackend_keyset ")
			} else {
				assert.Zero(t, problems, out)
			}
		})
	}
}
