package caddymodule

import (
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/helpdesk-gateway/gateway/liststore"
)

// Read-ahead behind a balancer, with no shared store: each instance
// serves pages from its windows only once it has seen its callers' walks
// stay on it, and stands down at the first cursor it did not hand out
// while the same caller walks the same list here (liststore/stay.go).
// This file tells the operator: one warning, the admin endpoint's
// readahead.walks, and two metrics.

// staysWarned is set once a gateway in this process has warned that
// read-ahead stood down: the warning says what to change, once; later
// stand-downs (after each quiet time) are logged at debug.
var staysWarned atomic.Bool

// watchStays tells the operator what g's store proves of walks.
func (g *Gateway) watchStays() {
	if g.store != nil || *g.ReadaheadTTL <= 0 {
		return // a shared store sees every page; no read-ahead, nothing to prove
	}
	signs, down := metrics.otherCursors, new(atomic.Bool)
	g.stoodDown = down
	g.windows.OnStay(func(trusted, sign bool) {
		if !sign {
			down.Store(false)
			g.logger.Debug("read-ahead: callers' walks stay on this instance; its windows serve their pages")
			return
		}
		signs.Inc()
		if !down.CompareAndSwap(false, true) {
			return // a sign while standing down already
		}
		msg := "pages of one walk arrive at several instances: use a sticky lb_policy or readahead_store; " +
			"read-ahead stands down on this instance (each page one backend call, as with readahead_ttl 0) and proves again after a quiet time " +
			"(a cursor it did not hand out came while the same caller walked the same list here; a client that builds cursors by hand shows the same)"
		fields := []zap.Field{zap.Duration("quiet", g.windows.Quiet())}
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

// standsDown reports whether g's read-ahead stands down: it saw a cursor
// another instance handed out, and has not proven since.
func (g *Gateway) standsDown() bool {
	st := g.staysReport()
	return st != nil && !st.Trusted && st.Signs > 0
}
