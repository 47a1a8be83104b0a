package referencemodule

import (
	"fmt"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestModuleRegistered is what `caddy list-modules` shows of this package.
func TestModuleRegistered(t *testing.T) {
	info, err := caddy.GetModule("http.handlers.helpdesk_legacy")
	require.NoError(t, err)
	assert.IsType(t, new(Handler), info.New())
}

func TestLegacyCaddyfile(t *testing.T) {
	var l Handler
	require.NoError(t, l.UnmarshalCaddyfile(caddyfile.NewTestDispenser(`helpdesk_legacy {
		seed 7
		records 500
		max_per_page 200
		max_per_page /calls 137
		max_per_page tickets/history 60
		fixed_per_page /phone_numbers 40
		base_path /api
		envelope data
		churn 2.5
	}`)))
	assert.Equal(t, Handler{Seed: 7, Records: 500, MaxPerPage: 200, BasePath: "/api", Envelope: "data", Churn: 2.5,
		ListMaxPerPage: map[string]int{"calls": 137, "tickets/history": 60}, FixedPerPage: map[string]int{"phone_numbers": 40}}, l)
	l = Handler{}
	require.NoError(t, l.UnmarshalCaddyfile(caddyfile.NewTestDispenser(`helpdesk_legacy {
		per_page_param _page
		page_param     page
		first_page     0
	}`)), "checked as a whole, not option by option")
	zero := 0
	assert.Equal(t, &zero, l.FirstPage)
	l = Handler{}
	require.NoError(t, l.UnmarshalCaddyfile(caddyfile.NewTestDispenser(`helpdesk_legacy {
		offset_param   startAt
		per_page_param maxResults
	}`)))
	l = Handler{}
	require.NoError(t, l.UnmarshalCaddyfile(caddyfile.NewTestDispenser(`helpdesk_legacy {
		per_page_param _limit
		keyset         id_gte={id}
		keyset_inclusive
	}`)))
	assert.Equal(t, Handler{PerPageParam: "_limit", Keyset: "id_gte={id}", KeysetInclusive: true}, l)
	for _, bad := range []string{"keyset id_gt=1", "keyset _page={id}", "keyset_inclusive", "keyset_inclusive yes", "keyset {id}=1"} {
		err := new(Handler).UnmarshalCaddyfile(caddyfile.NewTestDispenser("helpdesk_legacy {\n" + bad + "\n}"))
		assert.ErrorContains(t, err, "Testfile:2", bad)
		assert.ErrorContains(t, err, "keyset", bad)
	}
	for _, bad := range []string{"seed -1", "records x", "max_per_page 0", "churn -1", "bogus 1",
		"max_per_page /nowhere 10", "max_per_page /calls 0", "fixed_per_page /calls", "fixed_per_page /calls 1 2",
		"first_page 2", "page_param a&b", "offset_param o\npage_param p", "offset_param o\nfirst_page 1", "page_param _perPage"} {
		err := new(Handler).UnmarshalCaddyfile(caddyfile.NewTestDispenser("helpdesk_legacy {\n" + bad + "\n}"))
		assert.ErrorContains(t, err, fmt.Sprintf("Testfile:%d", 2+strings.Count(bad, "\n")), bad)
	}
}
