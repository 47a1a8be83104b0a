package verify

import (
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/legacy"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// TestVerifySaysWhenKeysetPays: verify --backend reports what the
// gateway's walks of a list it reads by offset cost, rows stepped over
// per record served in windows of the backend's page (its clamp, when it
// clamps), and for a large list that backend_keyset makes them linear;
// told backend_keyset, it says neither.
func TestVerifySaysWhenKeysetPays(t *testing.T) {
	for _, tc := range []struct {
		name    string
		d       legacy.Dialect
		records int
		want    string
		advice  bool
	}{
		{"a large page-dialect list", legacy.Dialect{}, 2500, "  cost: this list's walks step over 50 rows per record served (2500 records read by offset in windows of 25)", true},
		{"a large offset list", legacy.Dialect{Offset: "offset", PerPage: "limit"}, 3000, "step over 60 rows per record served (3000 records read by offset in windows of 25)", true},
		{"a small page-dialect list", legacy.Dialect{}, 1000, "  cost: this list's walks step over 20.0 rows per record served (1000 records read by offset in windows of 25)\n", false},
		{"a keyset backend", legacy.Dialect{Keyset: "id_gt={id}"}, 2500, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := reference.New(reference.Config{Seed: 4, Records: tc.records, MaxPerPage: 25, Paging: tc.d, Only: []string{"calls"}})
			backend := httptest.NewServer(b)
			t.Cleanup(backend.Close)
			ids := b.IDs("calls")
			gateway := &fakeGateway{pageList: func(int) []int { return ints(ids) }, cursor: ints(ids)}
			problems, out := runFake(t, gateway, func(c *Config) {
				c.PerPage = 100
				c.BackendURL = backend.URL
				c.BackendPaging = tc.d
			})
			require.Zero(t, problems, out)
			if tc.want != "" {
				assert.Contains(t, out, tc.want)
			} else {
				assert.NotContains(t, out, "cost:")
			}
			if tc.advice {
				assert.Contains(t, out, `if the backend can filter by id, backend_keyset "id_gt={id}" (in its own form) makes them linear`)
			} else {
				assert.NotContains(t, out, "backend_keyset \"id_gt={id}\" (in its own form)")
			}
		})
	}
}
