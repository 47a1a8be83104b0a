package caddymodule

import (
	"fmt"
	"hash/maphash"
	"slices"
	"strings"
	"sync"

	"go.uber.org/zap"

	"github.com/helpdesk-gateway/gateway/caller"
)

// maxLearnedLists bounds the lists whose learned page limit an endpoint
// keeps for its reports: past it, callers are not said to agree.
const maxLearnedLists = 4096

// learnedLimits is what an endpoint's lists taught it of the backend's
// page limit, list by list. A limit is learned per list identity (the
// engine plans each list within its own), and it may be one caller's
// own: a parameter, a key, a tenant that makes the backend answer short.
// So no single list's limit is shown as the endpoint's; the endpoint's
// is backend_max_per_page unless its callers agree (agreed).
type learnedLimits struct {
	mu       sync.Mutex
	seed     maphash.Seed
	lists    map[uint64]learnedLimit // by a hash of the list identity
	overflow bool                    // more than maxLearnedLists learned
}

// learnedLimit is one list's limit, and the caller that list is read by.
type learnedLimit struct {
	caller string // caller.Of the list identity
	params uint64 // a hash of the list's path and client parameters
	bare   bool   // the list has no client parameters
	limit  int
	fixed  bool // the backend ignores _perPage and sends pages of limit
}

// limitCount is how many lists and callers learned one limit.
type limitCount struct {
	Limit   int  `json:"limit"`
	Fixed   bool `json:"fixed,omitempty"`
	Lists   int  `json:"lists"`
	Callers int  `json:"callers"`
}

// add records the limit list learned, and returns what the endpoint's
// lists now say together.
func (l *learnedLimits) add(list string, limit int, fixed bool) (counts []limitCount, agreed learnedLimit, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lists == nil {
		l.seed = maphash.MakeSeed()
		l.lists = make(map[uint64]learnedLimit)
	}
	k := maphash.String(l.seed, list)
	if _, known := l.lists[k]; known || len(l.lists) < maxLearnedLists {
		// A copy: the identity holds the client's query, kept no longer.
		query := caller.Params(list)
		l.lists[k] = learnedLimit{caller: strings.Clone(caller.Of(list)), limit: limit, fixed: fixed,
			params: maphash.String(l.seed, query), bare: strings.HasSuffix(query, "?")}
	} else {
		l.overflow = true
	}
	return l.summaryLocked()
}

// summary returns the learned limits, smallest first, and the limit the
// callers agree on, if they do.
func (l *learnedLimits) summary() ([]limitCount, learnedLimit, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.summaryLocked()
}

// summaryLocked counts the lists and callers of each learned limit. The
// callers agree when at least two callers (two different sets of the
// facts that make one: keys, addresses, certificates; see identity.go)
// learned the same limit, no list learned another, and the limit is not
// what one set of client parameters asks: the lists that learned it
// differ in their parameters, or one of them has none. One caller's
// limit, two callers' that differ, or the limit a maxrows=30 that two
// callers both send asks for may be their own, and capping every caller
// at it would be wrong.
func (l *learnedLimits) summaryLocked() ([]limitCount, learnedLimit, bool) {
	type limitKey struct {
		limit int
		fixed bool
	}
	callers := map[limitKey]map[string]bool{}
	lists := map[limitKey]int{}
	params := map[uint64]bool{}
	bare := false
	for _, v := range l.lists {
		k := limitKey{v.limit, v.fixed}
		if callers[k] == nil {
			callers[k] = map[string]bool{}
		}
		callers[k][v.caller] = true
		lists[k]++
		params[v.params] = true
		bare = bare || v.bare
	}
	counts := make([]limitCount, 0, len(lists))
	for k, n := range lists {
		counts = append(counts, limitCount{Limit: k.limit, Fixed: k.fixed, Lists: n, Callers: len(callers[k])})
	}
	slices.SortFunc(counts, func(a, b limitCount) int { return a.Limit - b.Limit })
	if len(counts) != 1 || counts[0].Callers < 2 || l.overflow || len(params) < 2 && !bare {
		return counts, learnedLimit{}, false
	}
	return counts, learnedLimit{limit: counts[0].Limit, fixed: counts[0].Fixed}, true
}

// pageLimitLearned returns the engine's OnLearn for ep. The first limit
// any list learns is logged as a warning that says it is that caller's;
// the gauge and the advice to set backend_max_per_page (a warning that
// names the Caddyfile line) follow only a limit the callers agree on.
// Other learnings log at debug: a client could otherwise write a line
// per list it makes.
func (g *Gateway) pageLimitLearned(ep *endpoint) func(list string, limit int, fixed bool) {
	return func(list string, limit int, fixed bool) {
		counts, agreed, ok := ep.learned.add(list, limit, fixed)
		if ok {
			metrics.pageLimit.WithLabelValues(ep.name).Set(float64(agreed.limit))
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
		if ok && ep.agreed.Swap(int64(agreed.limit)) != int64(agreed.limit) {
			g.logger.Warn("callers agree: the backend clamps _perPage for all of them; set backend_max_per_page to plan within it from the first page",
				zap.String("endpoint", ep.name), zap.Int("limit", agreed.limit), zap.Bool("fixed", agreed.fixed),
				zap.Int("callers", counts[0].Callers), zap.Int("backend_max_per_page", g.BackendMaxPerPage),
				zap.String("caddyfile", fmt.Sprintf("backend_max_per_page %d", agreed.limit)))
		}
	}
}
