package openapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/helpdesk-gateway/gateway/openapi"
	"github.com/helpdesk-gateway/gateway/openapi/contract"
	"github.com/helpdesk-gateway/gateway/ticketfilter"
)

// defaults is a handler as the gateway runs it with no option set.
func defaults() openapi.Config {
	return openapi.Config{
		CursorEndpoints: []string{"/calls", "/grid/reports/time", "/phone_numbers", "/tickets/history"},
		FilterEndpoints: []string{"/tickets"},
		IDField:         "id",
		IDOrder:         cursor.Numeric,
		BackendSort:     url.Values{"_sortField": {"id"}, "_sortDir": {"ASC"}},
		DefaultPerPage:  10,
		MaxPerPage:      1000,
		MaxQueryLength:  8192,
	}
}

// load generates the document for cfgs and loads it with kin-openapi,
// failing the test unless the library finds it valid.
func load(t *testing.T, cfgs ...openapi.Config) *openapi3.T {
	t.Helper()
	raw, err := openapi.Generate(cfgs...)
	require.NoError(t, err)
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	require.NoError(t, err)
	require.NoError(t, doc.Validate(context.Background()))
	require.True(t, doc.IsOpenAPI31OrLater())
	return doc
}

func TestDocumentIsValidOpenAPI(t *testing.T) {
	full := defaults()
	full.BasePath = "/api/v3"
	full.RecordsPath = "result.data"
	full.IDField = "meta.id"
	full.IDOrder = cursor.Lexical
	full.BackendSort = url.Values{"sort": {"id"}, "order": {"asc"}}
	full.LinkHeader = true
	full.Filters = ticketfilter.FilterConfig{MaxFilters: 5, MaxLength: 100,
		StatusCodes: []string{"C", "L"}, ChannelTypes: []string{"E", "M"}, PeriodCodes: []string{"T", "L7D"}}
	odd := defaults()
	odd.RecordsPath = "data.#(x>1)" // a gjson query: described in words only
	odd.FilterEndpoints = nil
	for name, cfgs := range map[string][]openapi.Config{
		"defaults":   {defaults()},
		"every knob": {full},
		"odd paths":  {odd},
		"two sites":  {defaults(), full},
	} {
		t.Run(name, func(t *testing.T) {
			doc := load(t, cfgs...)
			for _, c := range cfgs {
				for _, e := range append(append([]string(nil), c.CursorEndpoints...), c.FilterEndpoints...) {
					require.NotNil(t, doc.Paths.Find(c.BasePath+e), c.BasePath+e)
				}
			}
		})
	}
}

func TestDocumentFollowsTheConfig(t *testing.T) {
	cfg := defaults()
	cfg.BasePath = "/api/v3"
	cfg.DefaultPerPage, cfg.MaxPerPage = 25, 250
	cfg.RecordsPath = "data"
	cfg.Filters.StatusCodes = []string{"C", "L"}
	doc := load(t, cfg)

	calls := doc.Paths.Find("/api/v3/calls").Get
	require.NotNil(t, calls)
	head := doc.Paths.Find("/api/v3/calls").Head
	require.NotNil(t, head, "HEAD answers as GET would")
	assert.Nil(t, head.Responses.Value("200").Value.Content, "HEAD has no body")
	assert.Contains(t, head.Responses.Value("200").Value.Headers, "next_page_cursor")
	assert.NotContains(t, calls.Responses.Value("200").Value.Headers, "Link", "Link only with link_header")
	perPage := calls.Parameters.GetByInAndName("query", "_perPage").Schema.Value
	assert.Equal(t, 1.0, *perPage.Min)
	assert.Equal(t, 250.0, *perPage.Max)
	assert.Equal(t, 25.0, perPage.Default)
	for _, status := range []string{"200", "400", "502", "503", "504", "4XX", "5XX"} {
		assert.NotNil(t, calls.Responses.Value(status), status)
	}
	ok := calls.Responses.Value("200").Value
	require.Contains(t, ok.Headers, "next_page_cursor")
	page := ok.Content.Get("application/json").Schema.Value
	assert.Contains(t, page.Required, "data", "the envelope holds the records at records_path")
	assert.Equal(t, uint64(250), *page.Properties["data"].Value.MaxItems)
	assert.Equal(t, []string{"message"}, doc.Components.Schemas["Error"].Value.Required)

	status := doc.Components.Schemas["Filters"].Value.OneOf[0].Value.Properties["status"].Value
	assert.Equal(t, []any{"C", "L"}, status.Enum, "configured status codes are an enum")
	assert.Nil(t, doc.Paths.Find("/calls"), "every endpoint is under base_path")

	assert.NotContains(t, *calls.Responses.Value("400").Value.Description, "backend's own paging parameters")
	dialect := cfg
	dialect.BackendParams = []string{"page", "per_page"}
	bad := *load(t, dialect).Paths.Find("/api/v3/calls").Get.Responses.Value("400").Value.Description
	assert.Contains(t, bad, "the backend's own paging parameters (`page`, `per_page`)", "a client may not send the backend's paging names")

	_, err := openapi.Generate(defaults(), cfg, func() openapi.Config { c := cfg; c.MaxPerPage = 500; return c }())
	require.ErrorContains(t, err, "handlers 2 and 3 both serve /api/v3/calls with different settings")
}

// TestDocumentFollowsTheFilterTables: the document's filters are read from
// translate's tables, not written by hand: every parameter and operator of
// the grammar appears, and a list-form triple for each is valid.
func TestDocumentFollowsTheFilterTables(t *testing.T) {
	doc := load(t, defaults())
	filters := doc.Components.Schemas["Filters"].Value
	grammar := ticketfilter.DescribeFilters(ticketfilter.FilterConfig{})
	for _, p := range append(grammar.Params, ticketfilter.FilterParam{Name: "field_x", Operators: grammar.Custom.Operators}) {
		for _, op := range p.Operators {
			triple := []any{[]any{p.Name, op, sampleFor(grammar.Operators[op])}}
			assert.NoError(t, visit(filters, triple), "%s %s", p.Name, op)
		}
	}
	assert.Error(t, visit(filters, []any{[]any{"status", "L", "x"}}), "an operator the table does not give status")
}

func sampleFor(shape ticketfilter.FilterValueShape) string {
	switch shape {
	case ticketfilter.FilterShapeEmpty:
		return ""
	case ticketfilter.FilterShapeDate:
		return "2024-01-31 13:45:00"
	case ticketfilter.FilterShapePeriod:
		return "today"
	case ticketfilter.FilterShapeList:
		return "42,43"
	}
	return "42"
}

// visit validates v against s as JSON Schema 2020-12, with the validator
// kin-openapi uses for OpenAPI 3.1, compiled once per schema.
func visit(s *openapi3.Schema, v any) error {
	validate, err := contract.Validator(s)
	if err != nil {
		return err
	}
	return validate(v)
}

// TestFilterSchemaAgreesWithTheGateway runs every parameter with every
// operator and a range of values, in both forms, through the gateway's
// validator and the document's schema. They must agree, but for what JSON
// Schema cannot say, which the document says in words: a calendar date
// that does not exist, and a limit in bytes that characters do not reach.
// Above all the document never refuses what the gateway accepts.
func TestFilterSchemaAgreesWithTheGateway(t *testing.T) {
	grammar := ticketfilter.DescribeFilters(ticketfilter.FilterConfig{})
	params := []string{"field_color", "field_", "owner_email", "Status", "unknown"}
	for _, p := range grammar.Params {
		params = append(params, p.Name)
	}
	ops := []string{"E", "NE", "IN", "NI", "CY", "L", "NL", "IE", "INE", "D>", "D<", "D>=", "D<=", "DP", "e", "XX"}
	wide := strings.Repeat("é", 40) // 40 characters, 80 bytes
	values := []string{
		"open", "open,pending", "", "open,,pending", ",open", "open,", "printer scanner", "a b,c",
		"2024-01-31 13:45:00", "2024-1-31 13:45:00", "2024-01-31T13:45:00", "today", "last_7_days", "TODAY",
		"a\x01b", "a\u0085b", strings.Repeat("x", 64), strings.Repeat("x", 65), "é", "42", "42,43",
		"2024-02-30 00:00:00", wide,
	}
	inexpressible := map[string]bool{"2024-02-30 00:00:00": true, wide: true}
	for name, cfg := range map[string]ticketfilter.FilterConfig{
		"any code":   {},
		"code lists": {StatusCodes: []string{"open", "pending"}, ChannelTypes: []string{"E"}, PeriodCodes: []string{"today"}},
	} {
		t.Run(name, func(t *testing.T) {
			c := defaults()
			c.Filters = cfg
			schema := load(t, c).Components.Schemas["Filters"].Value
			v := ticketfilter.NewFilterValidator(cfg)
			check := func(raw string, value string) {
				t.Helper()
				var decoded any
				require.NoError(t, json.Unmarshal([]byte(raw), &decoded))
				_, gwErr := v.Parse(raw)
				docErr := visit(schema, decoded)
				if gwErr == nil {
					require.NoError(t, docErr, "the gateway accepts %s; the document must too", raw)
				} else if docErr == nil && !inexpressible[value] {
					t.Errorf("the document accepts %s, which the gateway refuses: %v", raw, gwErr)
				}
			}
			for _, p := range params {
				for _, value := range values {
					obj, _ := json.Marshal(map[string]string{p: value})
					check(string(obj), value)
					for _, op := range ops {
						triple, _ := json.Marshal([][]string{{p, op, value}})
						check(string(triple), value)
					}
				}
			}
			for _, raw := range []string{`[]`, `{}`, `[["status"]]`, `[["status","E","open","x"]]`, `[[1,"E","open"]]`, `{"status":1}`, `"status"`, `null`} {
				check(raw, "")
			}
		})
	}
}

// FuzzFilterSchema: whatever _filters value the gateway accepts, the
// document's schema accepts too, so a client that follows the document is
// never refused by it. Seeds: translate's filter corpus.
func FuzzFilterSchema(f *testing.F) {
	seeds, err := filepath.Glob("../ticketfilter/testdata/fuzz/FuzzParseFilters/*")
	require.NoError(f, err)
	require.NotEmpty(f, seeds)
	for _, path := range seeds {
		raw, err := os.ReadFile(path)
		require.NoError(f, err)
		_, value, _ := strings.Cut(strings.TrimSpace(string(raw)), "\n")
		s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(value, "string("), ")"))
		require.NoError(f, err, path)
		f.Add(s)
	}
	cfg := defaults()
	cfg.Filters = ticketfilter.FilterConfig{MaxFilters: 8, PeriodCodes: []string{"today", "last_7_days"}}
	raw, err := openapi.Generate(cfg)
	require.NoError(f, err)
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	require.NoError(f, err)
	require.NoError(f, doc.Validate(context.Background()))
	schema := doc.Components.Schemas["Filters"].Value
	v := ticketfilter.NewFilterValidator(cfg.Filters)
	f.Fuzz(func(t *testing.T, raw string) {
		if _, err := v.Parse(raw); err != nil {
			return
		}
		var decoded any
		require.NoError(t, json.Unmarshal([]byte(raw), &decoded), "the gateway accepted %q", raw)
		require.NoError(t, visit(schema, decoded), fmt.Sprintf("the gateway accepts %q; the document must too", raw))
	})
}
