package caddymodule

import (
	"errors"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Outcomes of a client request, the values of the outcome label.
const (
	outcomeOK          = "ok"              // a page served, or filters forwarded
	outcomeClientError = "client_error"    // 400: the client's query
	outcomeBackend     = "backend_status"  // a non-2xx backend answer passed on
	outcomeUnusable    = "unusable_answer" // 502: a 2xx answer that could not be used
	outcomeUnavailable = "unavailable"     // 502/504: no answer from the backend
	outcomeLimit       = "subrequest_limit"
	outcomeError       = "error"
)

// The label values known before anything happens. Each series is made at
// 0 when the gateway starts (registerMetrics, newEndpointMetrics), so
// that a counter the rollout checklist says stays at 0 is there at 0 from
// the first scrape, and rate() and alerts see its first event.
var (
	// cursorOutcomes are the outcomes of a cursor request; a filter
	// request is ok or client_error (the backend's answer is not counted).
	cursorOutcomes = []string{outcomeOK, outcomeClientError, outcomeBackend, outcomeUnusable, outcomeUnavailable, outcomeLimit, outcomeError}
	// filterReasons are the reasons a _filters value is refused: the
	// query's (serve.go) and ticketfilter.FilterError's.
	filterReasons = []string{"query", "repeated", "syntax", "too_long", "too_many", "unknown_parameter", "not_filterable", "operator", "value"}
	// dropReasons are windowDropped's; storeOps the shared store's calls
	// (redisstore's OnError).
	dropReasons = []string{"evicted", "expired"}
	storeOps    = []string{"cut", "walked", "ahead", "check", "peers"}
)

// metrics are the gateway's Prometheus collectors, all prefixed
// helpdesk_gateway_. They are made once per process and registered with the
// registry of every config that uses the gateway, as Caddy's own modules do,
// so they survive reloads and appear at the admin endpoint's /metrics.
var metrics = struct {
	once             sync.Once
	requests         *prometheus.CounterVec
	subrequests      *prometheus.HistogramVec
	index            *prometheus.CounterVec
	filterRejections *prometheus.CounterVec
	unusable         *prometheus.CounterVec
	pageLimit        *prometheus.GaugeVec
	keysetMisreads   *prometheus.CounterVec
	readaheadPages   *prometheus.CounterVec
	windowsDropped   *prometheus.CounterVec
	windowBytes      prometheus.GaugeFunc
	storeErrors      *prometheus.CounterVec
	storeConfigured  prometheus.GaugeFunc
	storeUp          prometheus.GaugeFunc
	storePeers       prometheus.GaugeFunc
	aheadCalls       prometheus.Counter
	aheadErrors      prometheus.Counter
	stays            []prometheus.Collector // stay.go
}{}

func registerMetrics(registry *prometheus.Registry) error {
	const ns = "helpdesk_gateway"
	metrics.once.Do(func() {
		metrics.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Name: "requests_total",
			Help: "Client requests on owned endpoints, by endpoint (its path with base_path) and outcome.",
		}, []string{"endpoint", "outcome"})
		metrics.subrequests = prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: ns, Name: "backend_subrequests",
			Help:    "Backend calls made for one client request on a cursor endpoint.",
			Buckets: []float64{1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64},
		}, []string{"endpoint"})
		metrics.index = prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Name: "position_index_total",
			Help: "Position index events on cursor requests: hit (the cursor's place was known), miss, relocation (a hint proved stale).",
		}, []string{"endpoint", "event"})
		metrics.filterRejections = prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Name: "filter_rejections_total",
			Help: "Rejected _filters values, by reason.",
		}, []string{"reason"})
		metrics.unusable = prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Name: "backend_unusable_answers_total",
			Help: "2xx backend answers rejected as unusable (not JSON, no records array, bad or unordered ids).",
		}, []string{"endpoint"})
		metrics.pageLimit = prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: ns, Name: "backend_page_limit",
			Help: "The endpoint's backend page limit: backend_max_per_page, or a smaller limit the answers of at least two callers proved and no caller's contradicted (one caller's limit is its own).",
		}, []string{"endpoint"})
		metrics.keysetMisreads = prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Name: "backend_keyset_misreads_total",
			Help: "Lists whose backend misread the backend_keyset condition (an answer at or below the cursor, or one an offset read of the same cursor contradicted twice); each is read by offset from then on.",
		}, []string{"endpoint"})
		metrics.readaheadPages = prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Name: "readahead_pages_total",
			Help: "Cursor pages cut from a read-ahead window, each a backend call saved, by endpoint.",
		}, []string{"endpoint"})
		metrics.windowsDropped = prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Name: "readahead_windows_dropped_total",
			Help: "Read-ahead windows dropped: evicted (for readahead_memory) or expired (past readahead_ttl).",
		}, []string{"reason"})
		metrics.windowBytes = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: ns, Name: "readahead_window_bytes",
			Help: "Bytes the running gateways hold of their callers' lists under readahead_memory, all counted: read-ahead windows, walks, each list's identity, learned state and position samples (not what readahead_store holds).",
		}, func() float64 {
			var n int64
			for _, g := range runningGateways() {
				n += g.windows.Stats().Bytes
			}
			return float64(n)
		})
		metrics.storeErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Name: "readahead_store_errors_total",
			Help: "Calls to the shared read-ahead store (readahead_store) that failed or timed out, by operation; each costs backend calls, never a page.",
		}, []string{"op"})
		metrics.storeConfigured = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: ns, Name: "readahead_store_configured",
			Help: "Running gateways with a shared read-ahead store (readahead_store) in use: 0 without one, whatever readahead_store_errors_total says.",
		}, func() float64 { return float64(len(storeGateways())) })
		metrics.storeUp = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: ns, Name: "readahead_store_up",
			Help: "Running gateways whose shared read-ahead store answered its last call (checked when the config runs, and by a heartbeat every 10s): below readahead_store_configured, pages go to the backend.",
		}, func() float64 {
			n := 0
			for _, g := range storeGateways() {
				if g.store.State().Up {
					n++
				}
			}
			return float64(n)
		})
		metrics.storePeers = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: ns, Name: "readahead_store_peers",
			Help: "Other instances the shared read-ahead store shows sharing this gateway's walks (the same readahead_store_key and deployment fingerprint, seen within 30s); with several gateways in one Caddy, the fewest any of them has. 0 with a store behind a balancer that spreads walks: nothing is shared.",
		}, func() float64 {
			least := -1
			for _, g := range storeGateways() {
				if n := g.store.Sharing().Peers; least < 0 || n < least {
					least = n
				}
			}
			return float64(max(least, 0))
		})
		metrics.aheadCalls = prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Name: "readahead_background_calls_total",
			Help: "Backend calls made reading walks' next windows ahead of their walkers, in the background.",
		})
		metrics.aheadErrors = prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Name: "readahead_background_errors_total",
			Help: "Reads ahead of walkers that failed; each walker reads its page when it gets there instead.",
		})
		metrics.stays = stayCollectors(ns)
		for _, r := range filterReasons {
			metrics.filterRejections.WithLabelValues(r)
		}
		for _, r := range dropReasons {
			metrics.windowsDropped.WithLabelValues(r)
		}
		for _, op := range storeOps {
			metrics.storeErrors.WithLabelValues(op)
		}
	})
	for _, c := range collectors() {
		if registry == nil {
			break
		}
		if err := registry.Register(c); err != nil && !errors.As(err, new(prometheus.AlreadyRegisteredError)) {
			return err
		}
	}
	return nil
}

// collectors are the gateway's collectors, as registerMetrics registers
// them (made by its first call).
func collectors() []prometheus.Collector {
	return append([]prometheus.Collector{metrics.requests, metrics.subrequests, metrics.index, metrics.filterRejections,
		metrics.unusable, metrics.pageLimit, metrics.readaheadPages, metrics.windowsDropped, metrics.windowBytes, metrics.keysetMisreads, metrics.storeErrors,
		metrics.storeConfigured, metrics.storeUp, metrics.storePeers,
		metrics.aheadCalls, metrics.aheadErrors}, metrics.stays...)
}

// storeGateways are the running gateways with a shared store.
func storeGateways() []*Gateway {
	gs := runningGateways()
	n := 0
	for _, g := range gs {
		if g.store != nil {
			gs[n] = g
			n++
		}
	}
	return gs[:n]
}

// endpointMetrics are one endpoint's children of the collectors for what
// happens on most requests, looked up once at Provision: a lookup by label
// values hashes the labels and takes a lock on every request. Rarer
// outcomes are looked up as they happen; newEndpointMetrics makes their
// series at 0 all the same. name is the endpoint's path with base_path,
// as the admin endpoint shows it: two gateways with different base paths
// in one Caddy count apart.
type endpointMetrics struct {
	ok, clientError prometheus.Counter
	subrequests     prometheus.Observer // cursor endpoints only
	hit, miss       prometheus.Counter  // cursor endpoints only
	readahead       prometheus.Counter  // cursor endpoints only
}

func newEndpointMetrics(name string, cursor bool) *endpointMetrics {
	m := &endpointMetrics{
		ok:          metrics.requests.WithLabelValues(name, outcomeOK),
		clientError: metrics.requests.WithLabelValues(name, outcomeClientError),
	}
	if cursor {
		m.subrequests = metrics.subrequests.WithLabelValues(name)
		m.hit = metrics.index.WithLabelValues(name, "hit")
		m.miss = metrics.index.WithLabelValues(name, "miss")
		m.readahead = metrics.readaheadPages.WithLabelValues(name)
		for _, o := range cursorOutcomes {
			metrics.requests.WithLabelValues(name, o)
		}
		metrics.index.WithLabelValues(name, "relocation")
		metrics.unusable.WithLabelValues(name)
		metrics.keysetMisreads.WithLabelValues(name)
	}
	return m
}

// windowDropped counts a read-ahead window dropped by a store.
func windowDropped(expired bool) {
	reason := dropReasons[0]
	if expired {
		reason = dropReasons[1]
	}
	metrics.windowsDropped.WithLabelValues(reason).Inc()
}
