package caddymodule

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/helpdesk-gateway/gateway/liststore"
)

// Read-ahead behind a balancer, with no shared store: a caller's list
// serves pages from its windows only once its walks were seen to stay on
// this instance, and stands down at its own walks' sign that they go on
// elsewhere (liststore/stay.go). This file tells the operator: one
// warning, the admin endpoint's readahead.walks, and the metrics below,
// which sum the same numbers over the running gateways (so they start
// again with a config's load, as the admin endpoint's do).

// staysWarned is set once a gateway in this process has warned that a
// list's read-ahead stood down: the warning says what to change, once;
// later stand-downs are logged at debug.
var staysWarned atomic.Bool

// watchStays logs each stand-down of g's lists.
func (g *Gateway) watchStays() {
	if g.store != nil || *g.ReadaheadTTL <= 0 {
		return // a shared store sees every page; no read-ahead, nothing to prove
	}
	g.windows.OnSign(func(kind liststore.SignKind, stoodDown bool) {
		if !stoodDown {
			return // within the list's quiet time already
		}
		msg := "a caller's walk goes on at another instance: its read-ahead stands down on this instance " +
			"(its pages one backend call each, as with readahead_ttl 0) and proves again after a quiet time; " +
			"other callers keep theirs. Behind a balancer that spreads one caller's pages, use a sticky lb_policy or readahead_store"
		fields := []zap.Field{zap.String("sign", kind.String()), zap.Duration("quiet", g.windows.Quiet())}
		if staysWarned.CompareAndSwap(false, true) {
			g.logger.Warn(msg, fields...)
		} else {
			g.logger.Debug(msg, fields...)
		}
	})
}

// staysReport is what the admin endpoint shows of the proof; nil where
// there is none (a shared store, or read-ahead off).
func (g *Gateway) staysReport() *liststore.Stay {
	if g.store != nil || g.windows.TTL() <= 0 {
		return nil
	}
	st := g.windows.Stay()
	return &st
}

// staysSum sums f over the running gateways' proofs: the metrics below.
// lists says f reads the lists' counts (Stay.Proven, Stay.StandingDown),
// which look at every list; the counters are read without.
func staysSum(lists bool, f func(st *liststore.Stay) float64) float64 {
	var n float64
	for _, g := range runningGateways() {
		if g.store != nil || g.windows.TTL() <= 0 {
			continue
		}
		st := g.windows.StayCounters()
		if lists {
			st = g.windows.Stay()
		}
		n += f(&st)
	}
	return n
}

// stayCollectors are the metrics of the proofs, each the admin
// endpoint's field of readahead.walks of the same name, summed.
func stayCollectors(ns string) []prometheus.Collector {
	gauge := func(name, help string, f func(st *liststore.Stay) float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: ns, Name: name, Help: help}, func() float64 { return staysSum(true, f) })
	}
	return []prometheus.Collector{
		gauge("readahead_lists_proven", "Callers' lists whose walks were seen to stay on this instance, so that their windows serve (no readahead_store): admin readahead.walks.lists_proven.",
			func(st *liststore.Stay) float64 { return float64(st.Proven) }),
		gauge("readahead_lists_standing_down", "Callers' lists whose read-ahead stands down within the quiet time after a sign that their walks go on at another instance (no readahead_store): admin readahead.walks.lists_standing_down. 0 behind a sticky balancer or on one instance.",
			func(st *liststore.Stay) float64 { return float64(st.StandingDown) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: ns, Name: "readahead_stood_down_total",
			Help: "Times a caller's list stood down at a sign (the first sign of each quiet time; no readahead_store): admin readahead.walks.stood_down."},
			func() float64 {
				return staysSum(false, func(st *liststore.Stay) float64 { return float64(st.StoodDown) })
			}),
		&stayCounter{
			desc: prometheus.NewDesc(ns+"_readahead_walk_signs_total", "Signs that a caller's walks go on at another instance (no readahead_store), by kind: a cursor this instance handed out for a page served before the window it lands in (continued_elsewhere), or one it never handed out (not_issued_here), landing in one of the caller's windows past the furthest page served from it. Each stands that caller's list down, never another's: admin readahead.walks.signs.", []string{"kind"}, nil),
			values: map[string]func(st *liststore.Stay) float64{
				liststore.ContinuedElsewhere.String(): func(st *liststore.Stay) float64 { return float64(st.Signs.ContinuedElsewhere) },
				liststore.NotIssuedHere.String():      func(st *liststore.Stay) float64 { return float64(st.Signs.NotIssuedHere) },
			},
		},
		&stayCounter{
			desc: prometheus.NewDesc(ns+"_readahead_cold_cursors_total", "Cursors read cold although they continue a walk this instance served (no readahead_store): handed out fewer times than they came back (reused: a retry, a replay) or back later than the walk's pace allows (late). Each costs its own caller one backend call: admin readahead.walks.reused and .late.", []string{"reason"}, nil),
			values: map[string]func(st *liststore.Stay) float64{
				"reused": func(st *liststore.Stay) float64 { return float64(st.Reused) },
				"late":   func(st *liststore.Stay) float64 { return float64(st.Late) },
			},
		},
	}
}

// stayCounter is a counter with one label whose values are sums over the
// running gateways' proofs, read at each scrape.
type stayCounter struct {
	desc   *prometheus.Desc
	values map[string]func(st *liststore.Stay) float64
}

// Interface guard
var _ prometheus.Collector = (*stayCounter)(nil)

func (c *stayCounter) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *stayCounter) Collect(ch chan<- prometheus.Metric) {
	for label, f := range c.values {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.CounterValue, staysSum(false, f), label)
	}
}
