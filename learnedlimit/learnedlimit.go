// Package learnedlimit keeps what an endpoint's lists taught it of the
// backend's page limit, list by list, and says when the callers agree on
// one. A limit is learned per list identity (package caller), and it may
// be one caller's own, so the gateway names a limit the endpoint's (its
// gauge, its advice to set backend_max_per_page) only when its callers
// agree.
package learnedlimit

import (
	"hash/maphash"
	"slices"
	"strings"
	"sync"

	"github.com/helpdesk-gateway/gateway/caller"
)

// MaxLists bounds the lists whose learned page limit an endpoint
// keeps for its reports: past it, callers are not said to agree.
const MaxLists = 4096

// Limits is what an endpoint's lists taught it of the backend's
// page limit, list by list. A limit is learned per list identity (the
// engine plans each list within its own), and it may be one caller's
// own: a parameter, a key, a tenant that makes the backend answer short.
// So no single list's limit is shown as the endpoint's; the endpoint's
// is backend_max_per_page unless its callers agree (agreed).
type Limits struct {
	mu       sync.Mutex
	seed     maphash.Seed
	lists    map[uint64]Limit // by a hash of the list identity
	overflow bool             // more than MaxLists learned
}

// Limit is one list's limit, and the caller that list is read by.
type Limit struct {
	caller string // caller.Of the list identity
	params uint64 // a hash of the list's path and client parameters
	bare   bool   // the list has no client parameters
	Limit  int
	Fixed  bool // the backend ignores _perPage and sends pages of Limit
}

// Count is how many lists and callers learned one limit.
type Count struct {
	Limit   int  `json:"limit"`
	Fixed   bool `json:"fixed,omitempty"`
	Lists   int  `json:"lists"`
	Callers int  `json:"callers"`
}

// Add records the limit list learned, and returns what the endpoint's
// lists now say together.
func (l *Limits) Add(list string, limit int, fixed bool) (counts []Count, agreed Limit, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lists == nil {
		l.seed = maphash.MakeSeed()
		l.lists = make(map[uint64]Limit)
	}
	k := maphash.String(l.seed, list)
	if _, known := l.lists[k]; known || len(l.lists) < MaxLists {
		// A copy: the identity holds the client's query, kept no longer.
		query := caller.Params(list)
		l.lists[k] = Limit{caller: strings.Clone(caller.Of(list)), Limit: limit, Fixed: fixed,
			params: maphash.String(l.seed, query), bare: strings.HasSuffix(query, "?")}
	} else {
		l.overflow = true
	}
	return l.summaryLocked()
}

// Summary returns the learned limits, smallest first, and the limit the
// callers agree on, if they do.
func (l *Limits) Summary() ([]Count, Limit, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.summaryLocked()
}

// summaryLocked counts the lists and callers of each learned limit. The
// callers agree when at least two callers (two different sets of the
// facts that make one: keys, addresses, certificates; see package caller)
// learned the same limit, no list learned another, and the limit is not
// what one set of client parameters asks: the lists that learned it
// differ in their parameters, or one of them has none. One caller's
// limit, two callers' that differ, or the limit a maxrows=30 that two
// callers both send asks for may be their own, and capping every caller
// at it would be wrong.
func (l *Limits) summaryLocked() ([]Count, Limit, bool) {
	type limitKey struct {
		limit int
		fixed bool
	}
	callers := map[limitKey]map[string]bool{}
	lists := map[limitKey]int{}
	params := map[uint64]bool{}
	bare := false
	for _, v := range l.lists {
		k := limitKey{v.Limit, v.Fixed}
		if callers[k] == nil {
			callers[k] = map[string]bool{}
		}
		callers[k][v.caller] = true
		lists[k]++
		params[v.params] = true
		bare = bare || v.bare
	}
	counts := make([]Count, 0, len(lists))
	for k, n := range lists {
		counts = append(counts, Count{Limit: k.limit, Fixed: k.fixed, Lists: n, Callers: len(callers[k])})
	}
	slices.SortFunc(counts, func(a, b Count) int { return a.Limit - b.Limit })
	if len(counts) != 1 || counts[0].Callers < 2 || l.overflow || len(params) < 2 && !bare {
		return counts, Limit{}, false
	}
	return counts, Limit{Limit: counts[0].Limit, Fixed: counts[0].Fixed}, true
}
