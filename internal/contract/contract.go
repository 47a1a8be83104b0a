// Package contract holds answers to the gateway's OpenAPI document: a
// Transport for test clients checks every request and response with
// kin-openapi against the document of the gateway it talks to, and turns
// an answer that strays from it into an error of the request, so the test
// that made it fails.
//
// A request the document finds invalid, as tests send on purpose, must get
// the documented 400: the gateway's own JSON error body. A valid request's
// answer must match the document, errors included. Requests the document
// does not describe (other paths and methods, which pass through to the
// backend) are not checked.
package contract

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Document is a loaded OpenAPI document, valid by kin-openapi's checks,
// with its router.
type Document struct {
	doc    *openapi3.T
	router routers.Router
}

// documents caches Load by the document's text: tests start many Caddys
// with a few configs, and loading and routing a document once per test
// binary keeps the checks cheap.
var documents sync.Map // string -> *loaded

type loaded struct {
	once sync.Once
	doc  *Document
	err  error
}

// Load parses and validates an OpenAPI document.
func Load(raw []byte) (*Document, error) {
	v, _ := documents.LoadOrStore(string(raw), new(loaded))
	l := v.(*loaded)
	l.once.Do(func() {
		doc, err := openapi3.NewLoader().LoadFromData(raw)
		if err != nil {
			l.err = fmt.Errorf("loading the OpenAPI document: %w", err)
			return
		}
		if err := doc.Validate(context.Background()); err != nil {
			l.err = fmt.Errorf("the OpenAPI document is not valid: %w", err)
			return
		}
		router, err := gorillamux.NewRouter(doc)
		if err != nil {
			l.err = fmt.Errorf("routing the OpenAPI document: %w", err)
			return
		}
		l.doc = &Document{doc: doc, router: router}
	})
	return l.doc, l.err
}

// Check checks one exchange: req as sent, and the answer's status, header
// and body. It returns nil for a request the document does not describe.
func (d *Document) Check(req *http.Request, status int, header http.Header, body []byte) error {
	req = req.Clone(context.Background())
	route, pathParams, err := d.router.FindRoute(req)
	if err != nil {
		return nil // not the gateway's: it passes through to the backend
	}
	options := &openapi3filter.Options{
		AuthenticationFunc:  openapi3filter.NoopAuthenticationFunc,
		SkipSettingDefaults: true,
	}
	in := &openapi3filter.RequestValidationInput{
		Request: req, PathParams: pathParams, Route: route, Options: options,
		ParamDecoder: decodeJSONParameter,
	}
	if reqErr := openapi3filter.ValidateRequest(context.Background(), in); reqErr != nil {
		// A request the document calls invalid must get the gateway's 400.
		if status != http.StatusBadRequest {
			return fmt.Errorf("the document finds the request invalid (%v), but the answer is %d, not 400", reqErr, status)
		}
		if mt, _, _ := mime.ParseMediaType(header.Get("Content-Type")); mt != "application/json" {
			return fmt.Errorf("the document finds the request invalid (%v); the 400 answer should be the gateway's JSON error, but its Content-Type is %q", reqErr, header.Get("Content-Type"))
		}
	}
	if err := checkResponse(route, status, header, body); err != nil {
		return fmt.Errorf("the %d answer strays from the document: %w", status, err)
	}
	return nil
}

// checkResponse checks an answer as openapi3filter.ValidateResponse does
// (the documented status, then the headers, the media type and the body
// against the operation's schemas), but with each schema compiled once:
// kin-openapi compiles a JSON Schema 2020-12 schema at every use, which
// costs milliseconds per answer and starves the load tests.
func checkResponse(route *routers.Route, status int, header http.Header, body []byte) error {
	if route.Method == http.MethodHead {
		return nil // no body to check; the headers are GET's, checked there
	}
	ref := route.Operation.Responses.Status(status)
	if ref == nil {
		ref = route.Operation.Responses.Default()
	}
	if ref == nil || ref.Value == nil {
		return fmt.Errorf("status %d is not documented", status)
	}
	response := ref.Value
	for _, name := range slices.Sorted(maps.Keys(response.Headers)) {
		h := response.Headers[name].Value
		values := header.Values(name)
		switch {
		case len(values) == 0 && h.Required:
			return fmt.Errorf("header %s is missing", name)
		case len(values) == 0 || h.Schema == nil:
			continue
		case len(values) > 1:
			return fmt.Errorf("header %s appears %d times", name, len(values))
		}
		if err := validate(h.Schema.Value, headerValue(h.Schema.Value, values[0])); err != nil {
			return fmt.Errorf("header %s: %w", name, err)
		}
	}
	if len(response.Content) == 0 {
		return nil
	}
	mt := response.Content.Get(header.Get("Content-Type"))
	if mt == nil {
		return fmt.Errorf("Content-Type %q is not documented", header.Get("Content-Type"))
	}
	if mt.Schema == nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // ids beyond 2^53 stay exact
	var value any
	if err := dec.Decode(&value); err != nil {
		return fmt.Errorf("the body is not JSON: %w", err)
	}
	if dec.More() {
		return errors.New("the body is not one JSON value")
	}
	if err := validate(mt.Schema.Value, value); err != nil {
		return fmt.Errorf("the body: %w", err)
	}
	return nil
}

// headerValue is a header's text as the value its schema describes: a
// number where the schema wants one (Retry-After), else the text.
func headerValue(s *openapi3.Schema, text string) any {
	if s.Type.Is("integer") || s.Type.Is("number") {
		if n, err := strconv.ParseFloat(text, 64); err == nil {
			return n
		}
	}
	return text
}

// validate checks v against s with s compiled once.
func validate(s *openapi3.Schema, v any) error {
	check, err := compiled(s)
	if err != nil {
		return err
	}
	return check(v)
}

// decodeJSONParameter decodes a parameter whose value is JSON (_filters)
// and checks it against its schema with a validator compiled once, since
// kin-openapi compiles a JSON Schema 2020-12 schema at every use, which
// costs tens of milliseconds for the filter grammar. The validator is the
// one kin-openapi uses for OpenAPI 3.1, santhosh-tekuri/jsonschema.
func decodeJSONParameter(param *openapi3.Parameter, values []string) (any, *openapi3.Schema, error) {
	mt := param.Content.Get("application/json")
	if len(param.Content) != 1 || mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
		return nil, nil, fmt.Errorf("parameter %q: want one application/json schema", param.Name)
	}
	if len(values) != 1 {
		return nil, nil, fmt.Errorf("parameter %q is repeated", param.Name)
	}
	var value any
	if err := json.Unmarshal([]byte(values[0]), &value); err != nil {
		return nil, nil, fmt.Errorf("parameter %q is not JSON: %w", param.Name, err)
	}
	if err := validate(mt.Schema.Value, value); err != nil {
		return nil, nil, fmt.Errorf("parameter %q does not match its schema: %w", param.Name, err)
	}
	return value, &openapi3.Schema{}, nil
}

// compiledSchemas caches compiled schemas by the loaded schema.
var compiledSchemas sync.Map // *openapi3.Schema -> *compiledSchema

type compiledSchema struct {
	once   sync.Once
	schema *jsonschema.Schema
	err    error
}

// compiled returns a validator of s, a schema without references, as JSON
// Schema 2020-12.
func compiled(s *openapi3.Schema) (func(any) error, error) {
	v, _ := compiledSchemas.LoadOrStore(s, new(compiledSchema))
	c := v.(*compiledSchema)
	c.once.Do(func() {
		raw, err := json.Marshal(s)
		if err != nil {
			c.err = err
			return
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			c.err = err
			return
		}
		compiler := jsonschema.NewCompiler()
		compiler.DefaultDraft(jsonschema.Draft2020)
		if err := compiler.AddResource("schema.json", doc); err != nil {
			c.err = err
			return
		}
		c.schema, c.err = compiler.Compile("schema.json")
	})
	if c.err != nil {
		return nil, fmt.Errorf("compiling a schema: %w", c.err)
	}
	return c.schema.Validate, nil
}

// Validator returns a validator of s, a schema without references, as
// JSON Schema 2020-12, compiled once.
func Validator(s *openapi3.Schema) (func(any) error, error) { return compiled(s) }
