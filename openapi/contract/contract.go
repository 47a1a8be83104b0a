// Package contract holds answers to the gateway's OpenAPI document: a
// Transport for test clients checks every request and response against
// the document of the gateway it talks to, and turns an answer that
// strays from it into an error of the request, so the test that made it
// fails.
//
// A request the document finds invalid, as tests send on purpose, must get
// the documented 400: the gateway's own JSON error body. A valid request's
// answer must match the document, errors included. Requests the document
// does not describe (other paths and methods, which pass through to the
// backend) are not checked.
//
// kin-openapi loads and validates the document (OpenAPI 3.1), routes
// requests to its operations and gives the model the checks walk
// (Responses.Status, Content.Get, parameters); schemas are checked as
// JSON Schema 2020-12 by santhosh-tekuri/jsonschema, the validator
// kin-openapi itself uses for 3.1. The checks follow openapi3filter's
// ValidateRequest and ValidateResponse but compile each schema once:
// openapi3filter compiles a schema, with a check against the metaschema,
// at every use, milliseconds per parameter and per body, which made the
// end-to-end load test four times slower.
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
	route, _, err := d.router.FindRoute(req)
	if err != nil {
		return nil // not the gateway's: it passes through to the backend
	}
	if reqErr := checkRequest(route, req); reqErr != nil {
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

// checkRequest checks the query parameters of req as
// openapi3filter.ValidateRequest does for the forms the document uses:
// form-style scalars, and JSON in _filters. A described parameter sent
// twice is invalid: the document describes one value.
func checkRequest(route *routers.Route, req *http.Request) error {
	query := req.URL.Query()
	for _, ref := range slices.Concat(route.PathItem.Parameters, route.Operation.Parameters) {
		p := ref.Value
		if p.In != openapi3.ParameterInQuery {
			continue
		}
		values, ok := query[p.Name]
		switch {
		case !ok && p.Required:
			return fmt.Errorf("parameter %s is required", p.Name)
		case !ok:
			continue
		case len(values) > 1:
			return fmt.Errorf("parameter %s is repeated", p.Name)
		case p.Content != nil:
			if err := checkJSONParameter(p, values[0]); err != nil {
				return err
			}
			continue
		case p.Schema == nil:
			continue
		}
		value, err := scalar(p.Schema.Value, values[0])
		if err == nil {
			err = validate(p.Schema.Value, value)
		}
		if err != nil {
			return fmt.Errorf("parameter %s: %w", p.Name, err)
		}
	}
	return nil
}

// scalar reads text as the value its schema describes: a number where it
// wants one (a query's _perPage, a header's Retry-After), else the text.
func scalar(s *openapi3.Schema, text string) (any, error) {
	switch {
	case s.Type.Is("integer"):
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", text)
		}
		return n, nil
	case s.Type.Is("number"):
		n, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", text)
		}
		return n, nil
	}
	return text, nil
}

// checkResponse checks an answer as openapi3filter.ValidateResponse does:
// the documented status, then the headers, the media type and the body
// against the operation's schemas.
func checkResponse(route *routers.Route, status int, header http.Header, body []byte) error {
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
		value, err := scalar(h.Schema.Value, values[0])
		if err == nil {
			err = validate(h.Schema.Value, value)
		}
		if err != nil {
			return fmt.Errorf("header %s: %w", name, err)
		}
	}
	if len(response.Content) == 0 || route.Method == http.MethodHead {
		return nil // no body described, or none sent
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

// validate checks v against s with s compiled once.
func validate(s *openapi3.Schema, v any) error {
	check, err := compiled(s)
	if err != nil {
		return err
	}
	return check(v)
}

// checkJSONParameter checks a parameter whose value is JSON (_filters)
// against its schema.
func checkJSONParameter(param *openapi3.Parameter, text string) error {
	mt := param.Content.Get("application/json")
	if len(param.Content) != 1 || mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
		return fmt.Errorf("parameter %s: want one application/json schema", param.Name)
	}
	var value any
	if err := json.Unmarshal([]byte(text), &value); err != nil {
		return fmt.Errorf("parameter %s is not JSON: %w", param.Name, err)
	}
	if err := validate(mt.Schema.Value, value); err != nil {
		return fmt.Errorf("parameter %s does not match its schema: %w", param.Name, err)
	}
	return nil
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
