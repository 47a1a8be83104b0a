package caddymodule

import (
	"github.com/helpdesk-gateway/gateway/liststore/liststoretest"
	dto "github.com/prometheus/client_model/go"
)

// SettleReadsAhead waits until no running gateway reads ahead of a
// walker: what a test then counts at its backend is every call the pages
// so far started, the background ones among them.
func SettleReadsAhead() {
	for _, g := range runningGateways() {
		for _, ep := range g.endpoints {
			if ep.engine != nil {
				ep.engine.WaitAhead()
			}
		}
	}
}

// BackgroundCalls is how many backend calls the process's gateways have
// made reading ahead of walkers, once they are settled.
func BackgroundCalls() int64 {
	SettleReadsAhead()
	var m dto.Metric
	if metrics.aheadCalls == nil || metrics.aheadCalls.Write(&m) != nil {
		return 0
	}
	return int64(m.GetCounter().GetValue())
}

// TrustWalks makes every running gateway with no shared store trust its
// read-ahead windows, as one that has seen its callers' walks stay on it
// (liststore/stay.go), until its next sign: for the tests of what
// windows serve and to whom, which start from an instance proven as a
// lone instance is after its first walk. TestDefaultConfigBehindRoundRobin
// and TestRoundRobinWalkSplitAcrossWalks test the proof itself.
func TrustWalks() {
	for _, g := range runningGateways() {
		liststoretest.TrustWalks(g.windows)
	}
}
