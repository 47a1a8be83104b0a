package contract_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/helpdesk-gateway/gateway/openapi"
	"github.com/helpdesk-gateway/gateway/openapi/contract"
)

// fake is a stand-in gateway that gives whatever answer the test sets.
type fake struct {
	status int
	header map[string]string
	body   string
}

func document(t *testing.T) *contract.Document {
	t.Helper()
	raw, err := openapi.Generate(openapi.Config{
		CursorEndpoints: []string{"/calls"},
		FilterEndpoints: []string{"/tickets"},
		IDField:         "id",
		BackendSort:     url.Values{"_sortField": {"id"}, "_sortDir": {"ASC"}},
		DefaultPerPage:  2,
		MaxPerPage:      3,
		MaxQueryLength:  8192,
	})
	require.NoError(t, err)
	doc, err := contract.Load(raw)
	require.NoError(t, err)
	again, err := contract.Load(raw)
	require.NoError(t, err)
	require.Same(t, doc, again, "a document is loaded once")
	return doc
}

// TestTransportFailsStrayAnswers feeds the checking transport answers that
// keep to the document and answers that stray from it: a stray answer must
// fail the request, so the test that made it fails.
func TestTransportFailsStrayAnswers(t *testing.T) {
	var answer atomic.Pointer[fake]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := answer.Load()
		for k, v := range a.header {
			w.Header()[k] = []string{v}
		}
		w.WriteHeader(a.status)
		_, _ = w.Write([]byte(a.body))
	}))
	defer srv.Close()
	tr := &contract.Transport{Next: http.DefaultTransport}
	defer tr.CloseIdleConnections()
	host := strings.TrimPrefix(srv.URL, "http://")
	unregister := tr.Register(host, document(t))
	client := &http.Client{Transport: tr}

	json := map[string]string{"Content-Type": "application/json"}
	page := `[{"id":1},{"id":2},{"id":3}]`
	withCursor := map[string]string{"Content-Type": "application/json", "next_page_cursor": cursor.Encode("3")}
	filters := url.QueryEscape(`[["status","IN","open,pending"]]`)
	badFilters := url.QueryEscape(`[["status","L","open"]]`)
	for _, tc := range []struct {
		name   string
		path   string
		answer fake
		stray  string // "" when the answer keeps to the document
	}{
		{"a page", "/calls?_perPage=3", fake{200, withCursor, page}, ""},
		{"the last page", "/calls?_cursor=" + cursor.Encode("3"), fake{200, json, `[{"id":"4"}]`}, ""},
		{"a gateway error", "/calls?_perPage=0", fake{400, json, `{"message":"_perPage must be a whole number from 1 to 3"}`}, ""},
		{"a backend's own error", "/calls", fake{401, map[string]string{"Content-Type": "text/plain"}, "bad api key"}, ""},
		{"the gateway's 503", "/calls", fake{503, map[string]string{"Content-Type": "application/json", "Retry-After": "1"}, `{"message":"retry the same request"}`}, ""},
		{"a backend's 503 in text", "/calls", fake{503, map[string]string{"Content-Type": "text/plain", "Retry-After": "120"}, "down"}, ""},
		{"valid filters", "/tickets?_filters=" + filters, fake{200, json, `[{"id":"t1"}]`}, ""},
		{"refused filters", "/tickets?_filters=" + badFilters, fake{400, json, `{"message":"invalid _filters: ..."}`}, ""},
		{"not the gateway's path", "/other?_perPage=0", fake{200, json, `nonsense`}, ""},
		{"not the gateway's method", "/calls", fake{200, nil, ""}, ""},

		{"a page larger than max_per_page", "/calls", fake{200, json, `[{"id":1},{"id":2},{"id":3},{"id":4}]`}, "strays from the document"},
		{"a page that is not a list", "/calls", fake{200, json, `{"id":1}`}, "strays from the document"},
		{"a record without id", "/calls", fake{200, json, `[{"name":"x"}]`}, "strays from the document"},
		{"a cursor that is not base64", "/calls", fake{200, map[string]string{"Content-Type": "application/json", "next_page_cursor": "{id:3}"}, page}, "strays from the document"},
		{"an error without message", "/calls?_perPage=0", fake{400, json, `{"error":"bad"}`}, "strays from the document"},
		{"a 502 with an empty message", "/calls", fake{502, json, `{"message":""}`}, "strays from the document"},
		{"a page in text", "/calls", fake{200, map[string]string{"Content-Type": "text/plain"}, page}, "Content-Type \"text/plain\" is not documented"},
		{"a 503 with a bad Retry-After", "/calls", fake{503, map[string]string{"Content-Type": "application/json", "Retry-After": "soon"}, `{"message":"retry"}`}, "header Retry-After"},
		{"two cursors", "/calls", fake{200, map[string]string{"Content-Type": "application/json", "next_page_cursor": "a", "Next_Page_Cursor": "b"}, page}, "strays from the document"},
		{"an undocumented status", "/calls", fake{302, map[string]string{"Location": "/x"}, ""}, "status 302 is not documented"},
		{"an invalid request served", "/calls?_perPage=4", fake{200, json, page}, "the document finds the request invalid"},
		{"invalid filters served", "/tickets?_filters=" + badFilters, fake{200, json, `[]`}, "the document finds the request invalid"},
		{"invalid filters refused in text", "/tickets?_filters=" + badFilters, fake{400, map[string]string{"Content-Type": "text/plain"}, "no"}, "should be the gateway's JSON error"},
		{"repeated filters served", "/tickets?_filters=" + filters + "&_filters=" + filters, fake{200, json, `[]`}, "the document finds the request invalid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			answer.Store(&tc.answer)
			method := http.MethodGet
			if tc.name == "not the gateway's method" {
				method = http.MethodPost
			}
			req, err := http.NewRequest(method, srv.URL+tc.path, nil)
			require.NoError(t, err)
			resp, err := client.Do(req)
			if tc.stray == "" {
				require.NoError(t, err)
				resp.Body.Close()
				require.Equal(t, tc.answer.status, resp.StatusCode)
				return
			}
			require.Error(t, err, "the transport let a stray answer through")
			require.ErrorContains(t, err, tc.stray)
			require.ErrorContains(t, err, "OpenAPI contract")
		})
	}

	unregister()
	answer.Store(&fake{200, json, `nonsense`})
	resp, err := client.Get(srv.URL + "/calls")
	require.NoError(t, err, "an unregistered host is not checked")
	resp.Body.Close()
}
