// Package openapi writes the gateway's client contract as an OpenAPI 3.1
// document, from the same settings and filter tables the gateway runs on:
// its endpoints under base_path, the _perPage bounds, the cursor's shape,
// the next_page_cursor header, the error bodies and the _filters grammar
// (read from ticketfilter.DescribeFilters, so a change to the filter tables
// changes the document).
//
// It imports no Caddy code: the Caddy glue fills a Config from a
// handler's settings, with their defaults applied.
package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/helpdesk-gateway/gateway/ticketfilter"
)

// Version is the OpenAPI version of the documents Generate writes.
const Version = "3.1.0"

// Config is what the document needs of one helpdesk_gateway handler, with
// every default already applied.
type Config struct {
	BasePath        string   // prefix of every endpoint, "" for none
	CursorEndpoints []string // paths served by cursor, without BasePath
	FilterEndpoints []string // paths whose _filters are validated, without BasePath
	IDField         string   // gjson path of a record's id
	RecordsPath     string   // gjson path of the records array, "" when the body is the array
	IDOrder         cursor.Order
	BackendSort     url.Values // the parameters that sort a backend list by id
	DefaultPerPage  int
	MaxPerPage      int
	MaxQueryLength  int  // bytes of the query string of an owned request
	LinkHeader      bool // a Link rel="next" header beside next_page_cursor
	// BackendParams are the backend's own paging parameters where they are
	// not the clients' (backend_page_param, ...): refused from clients.
	BackendParams []string
	Filters       ticketfilter.FilterConfig
}

// Generate returns the document of the handlers' client contract, as
// indented JSON. Several handlers (several sites or routes of one Caddy)
// make one document when their endpoints differ or describe an endpoint
// alike; two that describe one path differently are an error, since the
// document could not tell a client which applies.
func Generate(gateways ...Config) ([]byte, error) {
	if len(gateways) == 0 {
		return nil, fmt.Errorf("no helpdesk_gateway handler to describe")
	}
	d := &document{paths: map[string]any{}, schemas: map[string]any{}, owner: map[string]int{}}
	d.schemas["Error"] = errorSchema
	d.schemas["Cursor"] = cursorSchema
	d.schemas["CursorParameter"] = cursorParameterSchema
	for i, g := range gateways {
		if err := d.add(i, g); err != nil {
			return nil, err
		}
	}
	doc := struct {
		OpenAPI    string         `json:"openapi"`
		Info       map[string]any `json:"info"`
		Paths      map[string]any `json:"paths"`
		Components map[string]any `json:"components"`
	}{
		OpenAPI: Version,
		Info: map[string]any{
			"title":   "Help-desk gateway",
			"version": "1",
			"summary": "Cursor paging and validated ticket filters in front of the help-desk API",
			"description": "The client contract of the helpdesk_gateway Caddy module, generated from its configuration. " +
				"Cursor endpoints page by `_cursor` and `next_page_cursor`; filter endpoints check `_filters` before the backend sees them. " +
				"Every other request, method and parameter passes through to the help-desk backend unchanged and is not described here. " +
				"Errors the gateway makes are JSON `{\"message\": \"...\"}`; a non-2xx answer of the backend reaches the client as the backend sent it.",
		},
		Paths:      d.paths,
		Components: map[string]any{"schemas": d.schemas},
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// document is a document being built.
type document struct {
	paths   map[string]any
	schemas map[string]any
	owner   map[string]int // path -> index of the handler that described it
}

func (d *document) add(i int, g Config) error {
	if g.MaxPerPage < 1 || g.DefaultPerPage < 1 || g.DefaultPerPage > g.MaxPerPage {
		return fmt.Errorf("handler %d: default_per_page %d and max_per_page %d are not a valid pair", i+1, g.DefaultPerPage, g.MaxPerPage)
	}
	page := d.schema("Page", pageSchema(g))
	for _, name := range g.CursorEndpoints {
		if err := d.path(i, g.BasePath+name, cursorOperation(g, name, page)); err != nil {
			return err
		}
	}
	if len(g.FilterEndpoints) > 0 {
		filters := d.schema("Filters", filtersSchema(ticketfilter.DescribeFilters(g.Filters)))
		for _, name := range g.FilterEndpoints {
			if err := d.path(i, g.BasePath+name, filterOperation(g, name, filters)); err != nil {
				return err
			}
		}
	}
	return nil
}

// path adds the GET operation op at path, with HEAD beside it, or checks
// that the one there says the same.
func (d *document) path(i int, path string, op map[string]any) error {
	item := map[string]any{"get": op, "head": headOperation(op)}
	if old, ok := d.paths[path]; ok {
		if !sameJSON(old, item) {
			return fmt.Errorf("handlers %d and %d both serve %s with different settings; describe one at a time", d.owner[path]+1, i+1, path)
		}
		return nil
	}
	d.paths[path] = item
	d.owner[path] = i
	return nil
}

// schema adds a component schema under name, or under name2, name3, ...
// when another handler's schema of that name differs, and returns its
// reference.
func (d *document) schema(name string, s map[string]any) map[string]any {
	key := name
	for n := 2; ; n++ {
		old, ok := d.schemas[key]
		if !ok {
			d.schemas[key] = s
			break
		}
		if sameJSON(old, s) {
			break
		}
		key = fmt.Sprintf("%s%d", name, n)
	}
	return ref(key)
}

func ref(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }

func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// operationID makes an operationId from a method word and a path.
func operationID(verb, path string) string {
	return verb + "_" + strings.Trim(nonWord.ReplaceAllString(path, "_"), "_")
}

var nonWord = regexp.MustCompile(`[^A-Za-z0-9]+`)

// errorSchema is the body of every error the gateway makes.
var errorSchema = map[string]any{
	"type":        "object",
	"required":    []string{"message"},
	"description": "An error the gateway made. More members may follow in later versions.",
	"properties": map[string]any{
		"message": map[string]any{
			"type":        "string",
			"minLength":   1,
			"description": "What is wrong and how to fix it, in words a person can act on.",
		},
	},
}

// cursorContent describes what a cursor decodes to.
func cursorContent(id map[string]any, extra bool) map[string]any {
	s := map[string]any{
		"type":       "object",
		"required":   []string{"id"},
		"properties": map[string]any{"id": id},
	}
	if !extra {
		s["additionalProperties"] = false
	}
	return s
}

// cursorSchema is next_page_cursor as the gateway sends it.
var cursorSchema = map[string]any{
	"type":             "string",
	"pattern":          `^[A-Za-z0-9+/]+={0,2}$`,
	"contentEncoding":  "base64",
	"contentMediaType": "application/json",
	"contentSchema":    cursorContent(map[string]any{"type": "string", "minLength": 1}, false),
	"description": "Standard padded base64 of exactly `{\"id\":\"<id>\"}`, the id of the last record of the page. " +
		"Send it as `_cursor` to get the next page.",
	"examples": []string{cursor.Encode("61")},
}

// cursorParameterSchema is _cursor as the gateway accepts it.
var cursorParameterSchema = map[string]any{
	"type":             "string",
	"minLength":        1,
	"maxLength":        cursor.MaxLength,
	"pattern":          `^[A-Za-z0-9+/_ -]+=*$`,
	"contentEncoding":  "base64",
	"contentMediaType": "application/json",
	"contentSchema": cursorContent(map[string]any{
		"type":      []string{"string", "integer"},
		"minLength": 1,
	}, true),
	"description": "Base64 of a JSON object whose `id` is the last id you already have: the value of `next_page_cursor`, " +
		"or one built by hand, e.g. base64 of `{\"id\":\"12345\"}` (the id need not exist). " +
		"Accepted: the standard and URL-safe alphabets, with or without `=` padding, a `+` a query decoder turned into a space, " +
		fmt.Sprintf("a JSON number id, and other members (ignored). The id is at most %d bytes; ", cursor.MaxIDLength) +
		"on a numeric list it must be a whole number. Anything else gets 400.",
	"examples": []string{cursor.Encode("61")},
}

// gjsonPlain matches a gjson path of plain member names, which a JSON
// Schema can follow; other paths are described in words only.
var gjsonPlain = regexp.MustCompile(`^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$`)

// atPath wraps s as the value at a plain gjson path, or returns nil when
// the path is not plain.
func atPath(path string, s map[string]any) map[string]any {
	if !gjsonPlain.MatchString(path) {
		return nil
	}
	names := strings.Split(path, ".")
	for _, name := range slices.Backward(names) {
		s = map[string]any{
			"type":       "object",
			"required":   []string{name},
			"properties": map[string]any{name: s},
		}
	}
	return s
}

// pageSchema is the body of one cursor page.
func pageSchema(g Config) map[string]any {
	id := map[string]any{"type": []string{"integer", "string"}, "pattern": `^-?[0-9]+$`}
	order := "numeric ids, ascending by value"
	if g.IDOrder == cursor.Lexical {
		id = map[string]any{"type": []string{"string", "number"}, "minLength": 1}
		order = "ids ascending byte by byte"
	}
	record := map[string]any{"type": "object"}
	if r := atPath(g.IDField, id); r != nil {
		record = r
	}
	records := map[string]any{
		"type":     "array",
		"maxItems": g.MaxPerPage,
		"items":    record,
		"description": fmt.Sprintf("The records of the page, at most _perPage, %s, each with its id at `%s`; "+
			"each record's bytes are exactly as the backend sent them.", order, g.IDField),
	}
	if g.RecordsPath == "" {
		return records
	}
	desc := fmt.Sprintf("The backend's envelope with the page's records at `%s`; its other members are kept as the backend sent them, "+
		"so a count in them is the backend's, not the page's.", g.RecordsPath)
	env := atPath(g.RecordsPath, records)
	if env == nil {
		env = map[string]any{}
	}
	env["description"] = desc
	return env
}
