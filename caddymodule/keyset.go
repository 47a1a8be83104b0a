package caddymodule

import (
	"strconv"

	"go.uber.org/zap"
)

// keysetMisread returns the engine's OnKeysetMisread for ep: an answer
// showed that the backend ignored or misread backend_keyset for one list
// (records at or below the cursor), which is read by offset from then on.
// Each such list counts in backend_keyset_misreads_total; the first of
// the endpoint warns with the Caddyfile line, the others log at info.
func (g *Gateway) keysetMisread(ep *endpoint) func(reason string) {
	return func(reason string) {
		metrics.keysetMisreads.WithLabelValues(ep.name).Inc()
		level := zap.WarnLevel
		if ep.keysetWarned.Swap(true) {
			level = zap.InfoLevel
		}
		if ce := g.logger.Check(level, "backend ignores or misreads backend_keyset: reading that list by offset; check the template against the backend's filter syntax, or remove it"); ce != nil {
			ce.Write(zap.String("endpoint", ep.name), zap.String("reason", reason),
				zap.String("caddyfile", "backend_keyset "+strconv.Quote(g.BackendKeyset)))
		}
	}
}
