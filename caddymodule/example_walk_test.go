package caddymodule_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"

	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// The Go paging loop of docs/clients.md, word for word
// (TestClientDocGoExample checks that the page shows exactly this text).

// docs/clients.md: begin walk-go
// walkCalls fetches every record of /calls, page by page, following
// next_page_cursor until it is absent.
func walkCalls(base string) ([]json.RawMessage, error) {
	var records []json.RawMessage
	cursor := ""
	for {
		query := url.Values{"_perPage": {"100"}}
		if cursor != "" {
			query.Set("_cursor", cursor)
		}
		resp, err := http.Get(base + "/calls?" + query.Encode())
		if err != nil {
			return nil, err
		}
		var page []json.RawMessage
		if resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("GET /calls: %s", resp.Status)
		} else {
			err = json.NewDecoder(resp.Body).Decode(&page)
		}
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		records = append(records, page...)
		if cursor = resp.Header.Get("next_page_cursor"); cursor == "" {
			return records, nil
		}
	}
}

// docs/clients.md: end walk-go

// Example_walkCalls runs the documentation's Go loop against a gateway in front
// of the reference backend (2,000 calls), both started here on loopback,
// and compares what it got with the backend's own list.
func Example_walkCalls() {
	b := reference.New(reference.Config{Seed: 20, Records: 2000})
	backend := httptest.NewServer(b)
	defer backend.Close()
	gateway, err := gatewaytest.Run("http://:0 {\n\thelpdesk_gateway\n\treverse_proxy {backend}\n}\n", backend.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer gateway.Close()

	records, err := walkCalls(gateway.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	ids := make([]int64, 0, len(records))
	for _, r := range records {
		var record struct{ ID int64 }
		if err := json.Unmarshal(r, &record); err != nil {
			fmt.Println(err)
			return
		}
		ids = append(ids, record.ID)
	}
	want := b.IDs("calls")
	fmt.Printf("%d records of the backend's %d; each once, in id order: %t\n", len(ids), len(want), slices.Equal(ids, want))
	// Output: 2000 records of the backend's 2000; each once, in id order: true
}
