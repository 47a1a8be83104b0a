package openapi

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// cursorOperation is GET on a cursor endpoint.
func cursorOperation(g Config, name string, page map[string]any) map[string]any {
	params := []any{
		map[string]any{
			"name": "_perPage", "in": "query",
			"description": fmt.Sprintf("Records per page, a whole number from 1 to %d (max_per_page); %d (default_per_page) when absent.", g.MaxPerPage, g.DefaultPerPage),
			"schema":      map[string]any{"type": "integer", "minimum": 1, "maximum": g.MaxPerPage, "default": g.DefaultPerPage},
		},
		map[string]any{
			"name": "_cursor", "in": "query",
			"description": "Where to continue: the `next_page_cursor` of the previous page. Absent for the first page. " +
				"The page holds the records whose id is greater than the cursor's, up to `_perPage`. Not with `_page`.",
			"schema": ref("CursorParameter"),
		},
		map[string]any{
			"name": "_page", "in": "query",
			"description": "A numbered page: the N-th page of `_perPage` records in id order, with `next_page_cursor` so a client can switch to cursors. " +
				"Not with `_cursor`; `_page` times `_perPage` is at most 2^40.",
			"schema": map[string]any{"type": "integer", "minimum": 1},
		},
	}
	// The sort parameters: the gateway refuses any order but ascending id,
	// and sends the backend its own backend_sort.
	sortNames := slices.Sorted(maps.Keys(g.BackendSort))
	for _, k := range sortNames {
		params = append(params, map[string]any{
			"name": k, "in": "query",
			"description": fmt.Sprintf("Optional: pages are always in ascending %s order, so only `%s=%s` (any case) is accepted; the backend gets the gateway's own.", g.IDField, k, g.BackendSort.Get(k)),
			"schema":      map[string]any{"type": "string", "pattern": "^" + anyCase(g.BackendSort.Get(k)) + "$"},
		})
	}
	if _, ok := g.BackendSort["_sortField"]; !ok {
		params = append(params, map[string]any{
			"name": "_sortField", "in": "query",
			"description": fmt.Sprintf("Optional: pages are always in ascending %s order, so only `%s` is accepted.", g.IDField, g.IDField),
			"schema":      map[string]any{"type": "string", "pattern": "^" + anyCase(g.IDField) + "$"},
		})
	}
	if _, ok := g.BackendSort["_sortDir"]; !ok {
		params = append(params, map[string]any{
			"name": "_sortDir", "in": "query",
			"description": "Optional: pages are always ascending, so only `ASC` (any case) is accepted.",
			"schema":      map[string]any{"type": "string", "pattern": "^" + anyCase("asc") + "$"},
		})
	}
	headers := map[string]any{
		"next_page_cursor": map[string]any{
			"description": "The `_cursor` of the next page; present when at least one more record existed when the page was read, absent on the last page, so a walk never ends on an empty page. " +
				"Listed in Access-Control-Expose-Headers when the answer is for a cross-origin browser request.",
			"schema": ref("Cursor"),
		},
	}
	if g.LinkHeader {
		headers["Link"] = map[string]any{
			"description": "With link_header: the next page as an RFC 8288 link, relative to the request and carrying its other parameters, beside next_page_cursor; absent on the last page.",
			"schema":      map[string]any{"type": "string", "pattern": `^<[^>]+>; rel="next"$`},
		}
	}
	ok := map[string]any{
		"description": "One page. Its headers are the backend answer's it was cut from, with `Content-Length` recomputed, and `ETag`, `Last-Modified` and the backend's own paging headers (drop_backend_headers: its `Link`, `X-Page`, `Content-Range`, ...) dropped.",
		"headers":     headers,
		"content":     map[string]any{"application/json": map[string]any{"schema": page}},
	}
	responses := map[string]any{
		"200": ok,
		"400": gatewayError("A client mistake: a bad `_perPage`, `_page` or `_cursor`; `_page` with `_cursor`; a repeated `_cursor`, `_perPage`, `_page` or `_filters`; "+
			"a sort other than ascending id; `_from` or `_to` (a backend reads them as its own result window); a parameter name a backend could read as one of these (`_PAGE`, `.page`, `_page[]`, `%255Fpage`); `;` in the query; "+
			backendParamsText(g.BackendParams)+
			fmt.Sprintf("a query longer than %d bytes (max_query_length).", g.MaxQueryLength), false),
		"502": gatewayError("The backend's answer could not be used (not JSON, no records array, a record without id, ids out of order or too long, larger than max_body_size), "+
			"or the backend did not answer or broke its answer off.", false),
		"503": gatewayError("The page needed more backend calls than max_subrequests, as when records change quickly: retry the same request.", true),
		"504": gatewayError("The backend did not answer in time.", false),
	}
	addBackendRanges(responses)
	return map[string]any{
		"operationId": operationID("list", g.BasePath+name),
		"summary":     "A page of " + name + " by cursor",
		"description": "Pages by cursor over a backend that only pages by offset: ask for the first page without `_cursor`, then send each answer's `next_page_cursor` as `_cursor` until the header is absent. " +
			"Over a whole walk, while records are inserted and deleted, no record appears twice, ids strictly increase, and every record that existed for the whole walk appears. " +
			"Every other parameter and header (filters, API keys) goes to the backend unchanged; `_cursor` never does. " +
			"A parameter must not appear twice, and the query must not hold `;`.",
		"parameters": params,
		"responses":  responses,
	}
}

// filterOperation is GET on a filter endpoint.
func filterOperation(g Config, name string, filters map[string]any) map[string]any {
	responses := map[string]any{
		"200": map[string]any{
			"description": "The backend's list, passed on unchanged.",
			"content": map[string]any{"application/json": map[string]any{
				"schema": map[string]any{"description": "The backend's body; the gateway does not change it."},
			}},
		},
		"400": gatewayError("The `_filters` value is not valid (the message names the filter, the parameter and what is allowed), is repeated, "+
			"or the query is not valid or is longer than "+fmt.Sprint(g.MaxQueryLength)+" bytes; the backend was not called.", false),
	}
	addBackendRanges(responses)
	return map[string]any{
		"operationId": operationID("list", g.BasePath+name),
		"summary":     "The ticket list, with validated _filters",
		"description": "The gateway checks `_filters` against the filter grammar before the backend sees anything: a valid value is forwarded byte for byte, an invalid one gets 400. " +
			"Every other parameter passes through unchanged.",
		"parameters": []any{map[string]any{
			"name": "_filters", "in": "query",
			"description": "Filters in one of two forms: an object of `{\"<parameter>\": \"<value>\"}` pairs, each parameter with its equality-type operator, " +
				"or a list of `[\"<parameter>\",\"<operator>\",\"<value>\"]` triples, all of which must hold. `[]` and `{}` mean no filter. Send it once.",
			"content": map[string]any{"application/json": map[string]any{"schema": filters}},
		}},
		"responses": responses,
	}
}

// gatewayError is an error answer the gateway makes. A backend's own
// answer with the same status also reaches the client as the backend sent
// it: described by the */* entry when it is not JSON.
func gatewayError(why string, retry bool) map[string]any {
	r := map[string]any{
		"description": why + " A backend's own answer with this status is passed on as the backend sent it.",
		"content": map[string]any{
			"application/json": map[string]any{"schema": ref("Error")},
			"*/*":              map[string]any{},
		},
	}
	if retry {
		r["headers"] = map[string]any{"Retry-After": map[string]any{
			"description": "Seconds to wait before retrying; 1 from the gateway.",
			"schema":      map[string]any{"type": "integer", "minimum": 0},
		}}
	}
	return r
}

// addBackendRanges adds the backend's own errors, passed on unchanged.
func addBackendRanges(responses map[string]any) {
	for _, class := range []string{"4XX", "5XX"} {
		responses[class] = map[string]any{
			"description": "The backend's own answer (e.g. 401 for a bad API key, 429 with Retry-After), passed on with its status, headers and body. " +
				"Errors the gateway itself makes are JSON `{\"message\": \"...\"}`.",
			"content": map[string]any{"*/*": map[string]any{}},
		}
	}
}

// anyCase returns a pattern that matches s regardless of ASCII case, in
// the syntax JSON Schema (ECMA-262) and Go share: no inline flags.
func anyCase(s string) string {
	var b strings.Builder
	for _, r := range s {
		lower, upper := strings.ToLower(string(r)), strings.ToUpper(string(r))
		if lower != upper && r < 0x80 {
			b.WriteString("[" + lower + upper + "]")
			continue
		}
		b.WriteString(regexp.QuoteMeta(string(r)))
	}
	return b.String()
}

// headOperation is HEAD beside a GET operation: the same parameters, status
// and headers as GET would give, and no body.
func headOperation(get map[string]any) map[string]any {
	responses := map[string]any{}
	for status, r := range get["responses"].(map[string]any) {
		head := map[string]any{}
		for k, v := range r.(map[string]any) {
			if k != "content" {
				head[k] = v
			}
		}
		responses[status] = head
	}
	return map[string]any{
		"operationId": "head" + strings.TrimPrefix(get["operationId"].(string), "list"),
		"summary":     "The headers " + strings.ToLower(get["summary"].(string)[:1]) + get["summary"].(string)[1:] + " would have",
		"description": "As GET, with the same status and headers (`next_page_cursor`, `Content-Type`, `Content-Length`) and no body.",
		"parameters":  get["parameters"],
		"responses":   responses,
	}
}

// backendParamsText names, for the 400 description, the backend's own
// paging parameters that clients may not send, in any spelling.
func backendParamsText(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return "the backend's own paging parameters (`" + strings.Join(names, "`, `") + "`), in any spelling; "
}
