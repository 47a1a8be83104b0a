package caddymodule

import (
	"fmt"

	"go.uber.org/zap"
)

// pageLimitLearned returns the engine's OnLearn for ep. The first limit
// any list learns is logged as a warning that says it is that caller's;
// the gauge and the advice to set backend_max_per_page (a warning that
// names the Caddyfile line) follow only a limit the callers agree on.
// Other learnings log at debug: a client could otherwise write a line
// per list it makes.
func (g *Gateway) pageLimitLearned(ep *endpoint) func(list string, limit int, fixed bool) {
	return func(list string, limit int, fixed bool) {
		counts, agreed, ok := ep.learned.Add(list, limit, fixed)
		if ok {
			metrics.pageLimit.WithLabelValues(ep.name).Set(float64(agreed.Limit))
		} else {
			metrics.pageLimit.WithLabelValues(ep.name).Set(float64(g.BackendMaxPerPage))
		}
		level, msg := zap.DebugLevel, "backend clamps _perPage for a caller"
		if !ep.warned.Swap(true) {
			level, msg = zap.WarnLevel, "backend clamps _perPage for one caller: its pages are planned within the limit its answers proved; other callers keep theirs"
		}
		if fixed {
			msg = "backend ignores _perPage for one caller: asking for the page size it sends; no answer overlaps the next at its page edges, so under churn a record may slip past one (docs/backends.md, Verify)"
		}
		if ce := g.logger.Check(level, msg); ce != nil {
			ce.Write(zap.String("endpoint", ep.name), zap.Int("limit", limit), zap.Bool("fixed", fixed),
				zap.Int("backend_max_per_page", g.BackendMaxPerPage), zap.Int("limits_learned", len(counts)))
		}
		if ok && ep.agreed.Swap(int64(agreed.Limit)) != int64(agreed.Limit) {
			g.logger.Warn("callers agree: the backend clamps _perPage for all of them; set backend_max_per_page to plan within it from the first page",
				zap.String("endpoint", ep.name), zap.Int("limit", agreed.Limit), zap.Bool("fixed", agreed.Fixed),
				zap.Int("callers", counts[0].Callers), zap.Int("backend_max_per_page", g.BackendMaxPerPage),
				zap.String("caddyfile", fmt.Sprintf("backend_max_per_page %d", agreed.Limit)))
		}
	}
}
