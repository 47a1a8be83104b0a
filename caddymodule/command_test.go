package caddymodule_test

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// runHelpdesk runs `caddy helpdesk args...` as Caddy's command line would:
// the command registered with caddycmd, under a root command, and returns
// what it wrote to stdout and stderr. A non-nil error is a non-zero exit.
func runHelpdesk(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	reg, ok := caddycmd.Commands()["helpdesk"]
	require.True(t, ok, "the helpdesk command is registered")
	root := &cobra.Command{Use: "caddy", SilenceUsage: true} // as Caddy's root
	cmd := &cobra.Command{Use: "helpdesk " + reg.Usage, Short: reg.Short, Long: reg.Long}
	reg.CobraFunc(cmd)
	root.AddCommand(cmd)
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(append([]string{"helpdesk"}, args...))
	err = root.Execute()
	return out.String(), errOut.String(), err
}

func TestHelpdeskCursorCommands(t *testing.T) {
	padded := base64.StdEncoding.EncodeToString([]byte(`{"id":"61"}`))
	for _, tc := range []struct {
		name    string
		args    []string
		stdout  string
		failure string // in stderr; "" when it must succeed
	}{
		{"encode", []string{"cursor", "encode", "61"}, padded + "\n", ""},
		{"encode escapes", []string{"cursor", "encode", `a"b\c`}, base64.StdEncoding.EncodeToString([]byte(`{"id":"a\"b\\c"}`)) + "\n", ""},
		{"decode padded", []string{"cursor", "decode", padded}, "61\n", ""},
		{"decode unpadded url-safe", []string{"cursor", "decode", base64.RawURLEncoding.EncodeToString([]byte(`{"id":"a>?b"}`))}, "a>?b\n", ""},
		{"decode a + turned into a space", []string{"cursor", "decode", strings.ReplaceAll(base64.StdEncoding.EncodeToString([]byte(`{"id":"a>b"}`)), "+", " ")}, "a>b\n", ""},
		{"decode a number id and extra members", []string{"cursor", "decode", base64.StdEncoding.EncodeToString([]byte(`{"x":true,"id":61}`))}, "61\n", ""},
		{"decode not base64", []string{"cursor", "decode", "%%%"}, "", "invalid _cursor: it is not base64"},
		{"decode an empty id", []string{"cursor", "decode", base64.StdEncoding.EncodeToString([]byte(`{"id":""}`))}, "", "its id is empty"},
		{"decode no object", []string{"cursor", "decode", base64.StdEncoding.EncodeToString([]byte(`["61"]`))}, "", "not decode to a JSON object"},
		{"encode an empty id", []string{"cursor", "encode", ""}, "", "the id is empty"},
		{"encode without an id", []string{"cursor", "encode"}, "", "accepts 1 arg(s), received 0"},
		{"decode two cursors", []string{"cursor", "decode", padded, padded}, "", "accepts 1 arg(s), received 2"},
		{"an unknown subcommand", []string{"cursor", "flip", "61"}, "", `unknown command "flip" for "caddy helpdesk cursor"`},
		{"an unknown tool", []string{"bogus"}, "", `unknown command "bogus" for "caddy helpdesk"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, err := runHelpdesk(t, tc.args...)
			assert.Equal(t, tc.stdout, stdout)
			if tc.failure == "" {
				assert.NoError(t, err)
				assert.Empty(t, stderr)
				return
			}
			assert.Error(t, err)
			assert.Contains(t, stderr, tc.failure)
		})
	}
}

func TestHelpdeskCursorRoundTrip(t *testing.T) {
	for _, id := range []string{"1", "18446744073709551616", "TK-000123", "ä/ü+ß", "a b", `"quoted"`, "tab\there", "x=y&z"} {
		enc, _, err := runHelpdesk(t, "cursor", "encode", id)
		require.NoError(t, err)
		dec, _, err := runHelpdesk(t, "cursor", "decode", strings.TrimSuffix(enc, "\n"))
		require.NoError(t, err)
		assert.Equal(t, id+"\n", dec)
	}
}

func TestHelpdeskFiltersCheckHelpNamesLiveAgentCodes(t *testing.T) {
	stdout, _, err := runHelpdesk(t, "filters", "check", "--help")
	require.NoError(t, err)
	for _, want := range []string{
		"Gpf_Data_Filter", "status: I init, N new", "C open", "L closed",
		"channel_type: E email", "C call", "DP: T today", "L7D last 7 days", "LWW last working week",
		"--status-codes strings", "e.g. I,N,T,P,R,X,B,A,C,W,L",
	} {
		assert.Contains(t, stdout, want)
	}
}

func TestHelpdeskFiltersCheck(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		stdout  string
		failure string
	}{
		{"list form", []string{`[["status","IN","C,L"],["date_created","D>=","2024-01-31 13:45:00"]]`},
			"OK: 2 filters\n  1. status IN \"C,L\"\n  2. date_created D>= \"2024-01-31 13:45:00\"\n", ""},
		{"object form gets its operators", []string{`{"subject":"printer","agentid":"4,5"}`},
			"OK: 2 filters\n  1. subject E \"printer\"\n  2. agentid IN \"4,5\"\n", ""},
		{"no filter", []string{`[]`}, "OK: no filters\n", ""},
		{"one filter", []string{`{"search":"refund"}`}, "OK: 1 filter\n  1. search L \"refund\"\n", ""},
		{"an operator not allowed", []string{`[["status","L","C"]]`}, "", `invalid _filters: filter 1 ("status"): operator "L" is not allowed; status takes E, IN, NI`},
		{"not filterable", []string{`{"owner_email":"a@b.c"}`}, "", `filter 1 ("owner_email"): owner_email cannot be used as a filter`},
		{"not JSON", []string{`{status:open}`}, "", "invalid _filters"},
		{"a bad date", []string{`[["date_created","D>","2024-02-30 00:00:00"]]`}, "", "not a real date-time"},
		{"LiveAgent's period code", []string{`[["date_created","DP","L7D"]]`}, "OK: 1 filter\n  1. date_created DP \"L7D\"\n", ""},
		{"status codes from a flag", []string{"--status-codes", "C,L", `{"status":"A"}`}, "", `"A" is not an allowed status code`},
		{"allowed by the flag", []string{"--status-codes", "C,L", `{"status":"L"}`}, "OK: 1 filter\n  1. status E \"L\"\n", ""},
		{"channel types from a flag", []string{"--channel-types", "E", `{"channel_type":"F"}`}, "", "channel"},
		{"period codes from a flag", []string{"--period-codes", "T", `[["last_activity","DP","Y"]]`}, "", `"Y" is not a period code; DP takes one of T`},
		{"without a value", nil, "", "accepts 1 arg(s), received 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, err := runHelpdesk(t, append([]string{"filters", "check"}, tc.args...)...)
			assert.Equal(t, tc.stdout, stdout)
			if tc.failure == "" {
				assert.NoError(t, err, stderr)
				return
			}
			assert.Error(t, err)
			assert.Contains(t, stderr, tc.failure)
		})
	}
}

// TestHelpdeskVerifyFlags runs verify against the reference backend
// itself, which needs a key here: the --header flag must carry it.
func TestHelpdeskVerifyFlags(t *testing.T) {
	b := reference.New(reference.Config{Seed: 3, Records: 40})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Apikey") != "k 1" || r.Header.Get("X-Team") != "ops" {
			http.Error(w, `{"message":"a key is needed"}`, http.StatusUnauthorized)
			return
		}
		b.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	for _, tc := range []struct {
		name    string
		args    []string
		stdout  []string
		failure string
	}{
		{"headers sent", []string{"--header", "apikey: k 1", "--header", "X-Team:ops"},
			[]string{"_page walk: 40 records in 5 pages"}, "verify found"},
		{"no key", nil, []string{"401 Unauthorized: a key is needed", "FAIL: 2 problems (2 request)"}, "verify found 2 problems"},
		{"a header without a colon", []string{"--header", "apikey k"}, nil, `--header "apikey k": want "Name: value"`},
		{"an unknown id order", []string{"--id-order", "random"}, nil, "--id-order"},
		{"no url", []string{"--url", ""}, nil, "--url"},
		{"zero timeout", []string{"--timeout", "0s"}, nil, "--timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"verify", "--url", srv.URL, "--endpoint", "/calls", "--per-page", "10"}, tc.args...)
			stdout, stderr, err := runHelpdesk(t, args...)
			for _, w := range tc.stdout {
				assert.Contains(t, stdout, w)
			}
			if tc.name == "headers sent" {
				// Not a bare "401": the backend's port may hold those digits.
				assert.NotContains(t, stdout, "401 Unauthorized")
			}
			assert.Error(t, err)
			assert.Contains(t, stderr, tc.failure)
		})
	}

	_, stderr, err := runHelpdesk(t, "verify", "--url", srv.URL)
	assert.Error(t, err)
	assert.Contains(t, stderr, `required flag(s) "endpoint" not set`)
}
