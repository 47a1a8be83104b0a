// Package adminreport is the JSON document of the admin API's
// /helpdesk/endpoints: what each running gateway serves and holds, and
// what its endpoints cost the backend. Operators and their scripts read
// it (docs/operating.md), so its shape is a contract: field names and
// units change only with the docs. caddymodule fills it from what it
// runs; the counters and the offset cost are kept here, beside the
// fields they fill.
package adminreport

import (
	"sync/atomic"
	"time"

	"github.com/helpdesk-gateway/gateway/estimate"
	"github.com/helpdesk-gateway/gateway/learnedlimit"
	"github.com/helpdesk-gateway/gateway/liststore"
	"github.com/helpdesk-gateway/gateway/redisstore"
	"github.com/helpdesk-gateway/gateway/translate"
)

// The JSON of /helpdesk/endpoints.
type (
	// Document is the whole answer: the running gateways.
	Document struct {
		Gateways []Gateway `json:"gateways"`
	}
	// Gateway is one gateway: where it serves and what it holds.
	Gateway struct {
		// Server is the name of the HTTP server (srv0, ...) whose routes
		// hold the gateway; Listen its bound addresses; Hosts the host
		// matchers of the routes that lead to it. Empty while a reload
		// starts the gateway's config.
		Server    string     `json:"server,omitempty"`
		Listen    []string   `json:"listen,omitempty"`
		Hosts     []string   `json:"hosts,omitempty"`
		BasePath  string     `json:"base_path"`
		Loaded    time.Time  `json:"loaded"`
		Readahead Readahead  `json:"readahead"`
		Endpoints []Endpoint `json:"endpoints"`

		// Deployment is the gateway's deployment fingerprint
		// (caddymodule's deployment.go): instances that show the same one share
		// readahead_store's entries, others never do. Absent until the
		// gateway's config runs.
		Deployment *Deployment `json:"deployment,omitempty"`
	}
	// Deployment is a gateway's fingerprint, its first 12 hex
	// digits; the deployment option, if set; and what of the backend the
	// config does not describe, which the fingerprint then cannot cover.
	Deployment struct {
		Fingerprint string   `json:"fingerprint"`
		Name        string   `json:"name,omitempty"`
		Unknown     []string `json:"unknown,omitempty"`
	}
	// Readahead is the gateway's read-ahead windows: its settings,
	// what it holds now, and what it did since its config was loaded.
	Readahead struct {
		TTL            string `json:"ttl"` // "0s": off
		MemoryLimit    int64  `json:"memory_limit"`
		Windows        int    `json:"windows"`
		Bytes          int64  `json:"bytes"`
		PagesServed    int64  `json:"pages_served"` // each a backend call saved
		WindowsEvicted int64  `json:"windows_evicted"`
		WindowsExpired int64  `json:"windows_expired"`
		// Store is the shared store's state (readahead_store), which then
		// holds the walks and windows in place of the counts above:
		// its address without credentials, whether it answers, its
		// errors, run_id and eviction policy, pages served and windows
		// kept. Absent without one.
		Store *redisstore.State `json:"store,omitempty"`
		// Sharing is who shares the store's entries with this instance,
		// from its last heartbeat through the store (caddymodule's storecheck.go): its
		// instance id, the key_id of its readahead_store_key (a digest,
		// never the key), its peers (same key, same fingerprint) and the
		// instances on the store it shares nothing with, and why. Absent
		// without a store.
		Sharing *redisstore.Sharing `json:"sharing,omitempty"`
		// Walks is what this instance, with no shared store, has seen of
		// whether its callers' walks stay on it: its windows serve only
		// while trusted (operating.md, "Several instances"). Absent with a
		// store or with read-ahead off.
		Walks *liststore.Stay `json:"walks,omitempty"`
	}
	// Endpoint is one of a gateway's endpoints.
	Endpoint struct {
		Path string `json:"path"`
		Kind string `json:"kind"` // cursor or filter

		// Cursor endpoints only.
		BackendPageLimit       int    `json:"backend_page_limit,omitempty"`
		BackendPageLimitSource string `json:"backend_page_limit_source,omitempty"`
		// LearnedPageLimits are the limits lists learned, each with how
		// many lists and callers learned it; absent until one did.
		LearnedPageLimits []learnedlimit.Count `json:"learned_page_limits,omitempty"`
		Index             *Index               `json:"index,omitempty"`
		Pages             *Pages               `json:"pages,omitempty"`
		// OffsetCost is what walks of the endpoint's longest known list
		// cost a backend read by offset; absent with backend_keyset and
		// until a list's extent is known.
		OffsetCost *OffsetCost `json:"offset_cost,omitempty"`
	}
	// OffsetCost: a backend that pages by offset steps over every
	// row before the window it sends, so a whole walk of list_records
	// read in windows of window steps over list_records/(2*window) rows
	// per record served (estimate.OffsetStepped). list_records is the
	// position index's extent of the longest list (Index.Extent); window
	// is the backend page limit with read-ahead on (windows grow to it),
	// else the mean page served (a call a page). Advice, from
	// estimate.LargeListStepped on, suggests backend_keyset.
	OffsetCost struct {
		ListRecords                int     `json:"list_records"`
		Window                     int     `json:"window"`
		RowsSteppedPerRecordServed float64 `json:"rows_stepped_per_record_served"`
		Advice                     string  `json:"advice,omitempty"`
	}
	// Index counts what the endpoint's position index holds in the
	// gateway's lists (their bytes are in readahead's): lists holding
	// samples and the samples, each at most index_size.
	Index struct {
		Lists     int `json:"lists"`
		Samples   int `json:"samples"`
		IndexSize int `json:"index_size"`
	}
	// Pages is what a cursor endpoint served since its config was loaded
	// (Counters).
	Pages struct {
		Served         int64 `json:"served"`
		FromWindows    int64 `json:"from_readahead_windows"`
		BackendCalls   int64 `json:"backend_calls"`
		RecordsFetched int64 `json:"records_fetched"`
		RecordsServed  int64 `json:"records_served"`
		// The ratios; absent until a page is served.
		BackendCallsPerPage           *float64 `json:"backend_calls_per_page,omitempty"`
		RecordsFetchedPerRecordServed *float64 `json:"records_fetched_per_record_served,omitempty"`
	}
)

// Counters count a cursor endpoint's served pages and their cost since
// its config was loaded. They are added to once per served page.
type Counters struct {
	pages, calls, fetched, served, fromWindows atomic.Int64
}

// Add counts one served page.
func (c *Counters) Add(pg *translate.Page) {
	c.pages.Add(1)
	if pg.Stored != nil {
		c.fromWindows.Add(1)
	}
	c.calls.Add(int64(pg.Calls))
	c.fetched.Add(int64(pg.Fetched))
	c.served.Add(int64(len(pg.IDs)))
}

// AddAhead counts the backend calls and records of a read-ahead, which
// serves no page itself: the pages it stores count theirs as they serve.
func (c *Counters) AddAhead(calls, fetched int) {
	c.calls.Add(int64(calls))
	c.fetched.Add(int64(fetched))
}

// Report is what the counters hold now, with their ratios.
func (c *Counters) Report() *Pages {
	p := &Pages{
		Served:         c.pages.Load(),
		FromWindows:    c.fromWindows.Load(),
		BackendCalls:   c.calls.Load(),
		RecordsFetched: c.fetched.Load(),
		RecordsServed:  c.served.Load(),
	}
	ratio := func(a, b int64) *float64 {
		if b == 0 {
			return nil
		}
		v := float64(a) / float64(b)
		return &v
	}
	p.BackendCallsPerPage = ratio(p.BackendCalls, p.Served)
	p.RecordsFetchedPerRecordServed = ratio(p.RecordsFetched, p.RecordsServed)
	return p
}

// NewOffsetCost is an endpoint's offset_cost (OffsetCost), or nil:
// extent is the position index's extent of its longest list (0: not
// known), limit the backend page limit, windows whether read-ahead is on
// (windows then grow to limit; else a page is a call, of the mean page
// served).
func NewOffsetCost(extent, limit int, windows bool, pages *Pages) *OffsetCost {
	if extent == 0 {
		return nil
	}
	w := limit
	if !windows {
		if pages.Served == 0 {
			return nil
		}
		w = int(max(pages.RecordsServed/pages.Served, 1))
	}
	return &OffsetCost{ListRecords: extent, Window: w,
		RowsSteppedPerRecordServed: estimate.OffsetStepped(extent, w), Advice: estimate.KeysetAdvice(extent, w)}
}
