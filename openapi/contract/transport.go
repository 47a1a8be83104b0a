package contract

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// Transport is an http.RoundTripper that checks every exchange with a
// registered host against that host's document. An answer that strays
// from it is returned as an error of the request, with the answer's
// status and body for the test's log; the answer itself is dropped.
type Transport struct {
	// Next makes the requests.
	Next http.RoundTripper

	mu    sync.RWMutex
	hosts map[string]*Document // host:port -> its gateway's document
}

// Register makes t check the exchanges with host (host:port) against
// doc, until the returned function is called.
func (t *Transport) Register(host string, doc *Document) (unregister func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.hosts == nil {
		t.hosts = map[string]*Document{}
	}
	t.hosts[host] = doc
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.hosts[host] == doc {
			delete(t.hosts, host)
		}
	}
}

// RoundTrip makes the request and checks the exchange.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.mu.RLock()
	doc := t.hosts[req.URL.Host]
	t.mu.RUnlock()
	resp, err := t.Next.RoundTrip(req)
	if err != nil || doc == nil {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	plain, err := decode(resp.Header.Get("Content-Encoding"), body)
	if err == nil {
		err = doc.Check(req, resp.StatusCode, resp.Header, plain)
	}
	if err != nil {
		const show = 512
		if len(body) > show {
			body = append(body[:show:show], "..."...)
		}
		return nil, fmt.Errorf("OpenAPI contract: %s %s: %w\nanswer: %d %s", req.Method, req.URL.RequestURI(), err, resp.StatusCode, body)
	}
	return resp, nil
}

// CloseIdleConnections closes the idle connections of Next.
func (t *Transport) CloseIdleConnections() {
	if c, ok := t.Next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// decode undoes a Content-Encoding (Caddy's encode directive) so the body
// can be checked; the client still gets the body as it came.
func decode(encoding string, body []byte) ([]byte, error) {
	switch encoding {
	case "", "identity":
		return body, nil
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("the answer is not gzip: %w", err)
		}
		return io.ReadAll(zr)
	}
	return nil, fmt.Errorf("cannot check an answer in Content-Encoding %q; ask for identity or gzip", encoding)
}
