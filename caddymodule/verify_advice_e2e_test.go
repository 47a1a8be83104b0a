package caddymodule_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/legacy"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// swappable serves whichever handler it holds now.
type swappable struct{ h atomic.Pointer[http.Handler] }

func (s *swappable) ServeHTTP(w http.ResponseWriter, r *http.Request) { (*s.h.Load()).ServeHTTP(w, r) }

func (s *swappable) set(h http.Handler) { s.h.Store(&h) }

// numbersFrom is a list of n ids from first, one apart.
func numbersFrom(first, n int) *listBackend {
	b := &listBackend{tokens: make([]string, n)}
	for i := range b.tokens {
		b.tokens[i] = strconv.Itoa(first + i)
	}
	return b
}

// adviceLines reads verify's "matching Caddyfile lines" block.
func adviceLines(t *testing.T, out string) []string {
	t.Helper()
	_, block, ok := strings.Cut(out, "matching Caddyfile lines (helpdesk_gateway block):\n")
	require.True(t, ok, "verify prints Caddyfile lines:\n%s", out)
	var lines []string
	for _, l := range strings.Split(block, "\n") {
		if !strings.HasPrefix(l, "\t") {
			break
		}
		lines = append(lines, strings.TrimSpace(l))
	}
	return lines
}

// verifyFlags are the verify flags that say what the Caddyfile lines
// say, so that verify walks the backend as the gateway would.
func verifyFlags(lines []string) []string {
	var flags []string
	for _, l := range lines {
		name, value, _ := strings.Cut(l, " ")
		switch name {
		case "id_order":
			flags = append(flags, "--id-order", value)
		case "backend_first_page":
			flags = append(flags, "--backend-first-page", value)
		case "backend_sort":
			flags = append(flags, "--backend-sort", value)
		}
	}
	return flags
}

// TestVerifyAdvisesWhatTheGatewayAccepts: verify's advice for a backend
// is fed back into a gateway in front of the same backend, and verify
// then finds it whole, with no warning. Two backends verify advised
// wrongly before:
//   - ids that are all numbers of one width, verified with --id-order
//     lexical: it said OK and advised id_order lexical, which fails every
//     walk once an id is a digit longer. It now warns, and advises
//     id_order numeric, which still walks the list once ids pass 9999.
//   - a backend that pages from 0, behind a gateway not told: its notes
//     blamed churn. It now says the backend pages from 0, and advises
//     backend_first_page 0.
func TestVerifyAdvisesWhatTheGatewayAccepts(t *testing.T) {
	for _, tc := range []struct {
		name    string
		backend http.Handler
		options string   // the gateway's, before the advice
		flags   []string // verify's, before the advice
		says    []string // in verify's first report
		advises string
		grown   http.Handler // the backend later, walked with the advice
	}{
		{"numbers of one width, lexical", numbersFrom(1000, 900), "id_order lexical", []string{"--id-order", "lexical"},
			[]string{"warning: id_order lexical on ids that are all numbers", "set id_order numeric"}, "id_order numeric",
			numbersFrom(9500, 900)},
		{"pages from 0", reference.New(reference.Config{Seed: 5, Records: 300, Paging: legacy.Dialect{FromZero: true}}), "", nil,
			[]string{"note: the backend pages from 0"}, "backend_first_page 0", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &swappable{}
			b.set(tc.backend)
			srv := httptest.NewServer(b)
			t.Cleanup(srv.Close)
			c := gatewaytest.Start(t, fmt.Sprintf(gatewaySite, tc.options), srv.URL)
			args := append([]string{"verify", "--url", c.URL, "--endpoint", "/calls", "--per-page", "37", "--backend", srv.URL}, tc.flags...)
			stdout, stderr, _ := runHelpdesk(t, args...)
			t.Logf("before the advice:\n%s%s", stdout, stderr)
			for _, s := range tc.says {
				assert.Contains(t, stdout, s)
			}
			assert.NotContains(t, stdout, "as they do when records change", "no churn ran")
			assert.NotContains(t, stdout, "inserted while it ran", "no churn ran")
			lines := adviceLines(t, stdout)
			assert.Contains(t, lines, tc.advises)

			// The advice, fed back: the gateway takes it, and serves the
			// backend whole.
			c.Stop(t) // one Caddy a process
			c2 := gatewaytest.Start(t, fmt.Sprintf(gatewaySite, strings.Join(lines, "\n\t\t")), srv.URL)
			args = append([]string{"verify", "--url", c2.URL, "--endpoint", "/calls", "--per-page", "37", "--backend", srv.URL}, verifyFlags(lines)...)
			stdout, stderr, err := runHelpdesk(t, args...)
			require.NoError(t, err, "%s%s", stdout, stderr)
			t.Logf("with the advice:\n%s", stdout)
			assert.Contains(t, stdout, "\nOK")
			assert.NotContains(t, stdout, "warning:")
			assert.NotContains(t, stdout, "note:")
			assert.Equal(t, lines, adviceLines(t, stdout), "the advice followed is the advice given again")
			if tc.grown == nil {
				return
			}
			b.set(tc.grown)
			stdout, stderr, err = runHelpdesk(t, args...)
			require.NoError(t, err, "the advice holds as the ids grow past 9999:\n%s%s", stdout, stderr)
		})
	}
}
