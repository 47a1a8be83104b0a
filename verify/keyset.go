package verify

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/helpdesk-gateway/gateway/legacy"
)

// keysetProbe is how many records each keyset probe asks for.
const keysetProbe = 5

// checkKeyset asks the backend, with the gateway's backend_keyset, for
// the records above a few ids of its own complete walk (the first, a
// third and two thirds in, the one before last), and compares each
// answer with the records the walk has after that id. A backend that
// answers from the list's start ignores the condition; one that answers
// records at or below the id misreads it; either way the gateway reads
// that list by offset and warns, and here it is a keyset problem. An
// answer that starts at the id itself is an inclusive condition
// (json-server's id_gte), which the gateway handles. Churn between the
// walk and a probe can shift an answer: a shifted answer that is in
// order and above the id is noted, not counted. Then the whole list is
// walked by keyset (walkKeyset), whatever the probes found.
func (v *verifier) checkKeyset(ctx context.Context, direct *backendWalk) {
	d := v.cfg.BackendPaging
	if !d.Keysets() || !direct.complete {
		return
	}
	ids := direct.ids
	if len(ids) < 2 {
		fmt.Fprintln(v.out, "note: the list is too short to check backend_keyset")
		return
	}
	order := v.cfg.Order
	sort, _ := url.ParseQuery(v.cfg.BackendSort)
	probed, inclusive, bad := 0, false, false
	for _, at := range slices.Compact([]int{0, len(ids) / 3, 2 * len(ids) / 3, len(ids) - 2}) {
		id := ids[at]
		if err := d.KeysetCheck(id); err != nil {
			fmt.Fprintf(v.out, "note: backend_keyset not probed after id %.40q: %v\n", id, err)
			continue
		}
		q := keysetQuery(sort, d, id, keysetProbe+1)
		got, _, err := v.fetchFrom(ctx, v.backend, q)
		if err != nil {
			v.problem("keyset", "backend_keyset after id %q: %v", id, err)
			bad = true
			continue
		}
		probed++
		want := ids[at+1 : min(at+1+keysetProbe, len(ids))]
		if len(got) > 0 && got[0] == id {
			inclusive, got = true, got[1:]
		}
		switch {
		case at > 0 && len(got) > 0 && got[0] == ids[0]:
			v.problem("keyset", "backend_keyset after id %q: the backend answered from the list's start (%q): it ignores the condition; the gateway reads this list by offset", id, got[0])
			bad = true
		case slices.ContainsFunc(got, func(g string) bool { return order.Check(g) != nil || order.Compare(g, id) <= 0 }):
			i := slices.IndexFunc(got, func(g string) bool { return order.Check(g) != nil || order.Compare(g, id) <= 0 })
			v.problem("keyset", "backend_keyset after id %q: the backend answered id %q, at or below it: it misreads the condition (check the template against its filter syntax, and id_order); the gateway reads this list by offset", id, got[i])
			bad = true
		case len(got) == 0 && len(want) > 0:
			v.problem("keyset", "backend_keyset after id %q: the backend answered nothing where its own walk has %s after it: it misreads the condition", id, count(len(want), "record"))
			bad = true
		case !slices.Equal(got[:min(len(want), len(got))], want[:min(len(want), len(got))]):
			k := 0
			for got[k] == want[k] {
				k++
			}
			fmt.Fprintf(v.out, "note: backend_keyset after id %q: the backend answered %q where its walk has %q; records changed meanwhile, or the condition is read differently (the keyset walk below tells)\n", id, got[k], want[k])
		}
	}
	if probed > 0 && !v.walkKeyset(ctx, direct) {
		bad = true
	}
	switch {
	case bad:
		fmt.Fprintf(v.out, "backend_keyset %q: not kept by the backend (see the keyset problems); remove it, or fix the template\n", d.Keyset)
	case probed == 0:
		fmt.Fprintf(v.out, "backend_keyset %q: not probed, no id of the list is in the safe set\n", d.Keyset)
	case inclusive:
		fmt.Fprintf(v.out, "backend_keyset %q: kept, inclusive (answers start at the id itself, which the gateway drops), %d probes\n", d.Keyset, probed)
		v.keysetOK = true
	default:
		fmt.Fprintf(v.out, "backend_keyset %q: kept, records above the id in id order, %d probes\n", d.Keyset, probed)
		v.keysetOK = true
	}
}

// walkKeyset walks the list by backend_keyset, as the gateway would with
// no check: from the first record of the backend's own walk, asking for
// the records above the last one received until an empty answer, and
// compares the two walks record for record. It reports whether they
// agree. A backend can keep the condition at the probes and misread it
// elsewhere (ids compared as text: after 9 come 90, 91...; the condition
// on another field): the gateway catches such a misread only where its
// checks read the same records by offset (docs/backends.md), so a
// disagreement here is a problem, named by its first id. Records that
// changed between the walks disagree too: run verify again on a quiet
// list before removing the template. An id the template cannot carry is
// read past as the gateway does, by the backend's own walk.
func (v *verifier) walkKeyset(ctx context.Context, direct *backendWalk) bool {
	d, order, ids := v.cfg.BackendPaging, v.cfg.Order, direct.ids
	sort, _ := url.ParseQuery(v.cfg.BackendSort)
	walk := []string{ids[0]}
	for pages := 0; ; pages++ {
		if pages == v.cfg.MaxPages {
			v.problem("incomplete", "backend keyset walk did not end within --max-pages %d pages", v.cfg.MaxPages)
			return false
		}
		after := walk[len(walk)-1]
		if d.KeysetCheck(after) != nil {
			// the gateway reads this page by offset: go on from the
			// backend's own walk, at the next id the template carries
			i := slices.Index(ids, after)
			if i < 0 {
				break // not in the backend's walk: the comparison below names it
			}
			for i++; i < len(ids) && d.KeysetCheck(ids[i]) != nil; i++ {
				walk = append(walk, ids[i])
			}
			if i == len(ids) {
				break
			}
			walk = append(walk, ids[i])
			continue
		}
		q := keysetQuery(sort, d, after, v.cfg.BackendPerPage)
		got, _, err := v.fetchFrom(ctx, v.backend, q)
		if err != nil {
			v.problem("request", "backend keyset walk, after id %q: %v", after, err)
			return false
		}
		if len(got) > 0 && got[0] == after {
			got = got[1:] // inclusive
		}
		if len(got) == 0 {
			break
		}
		if i := slices.IndexFunc(got, func(g string) bool { return order.Check(g) != nil || order.Compare(g, after) <= 0 }); i >= 0 {
			v.problem("keyset", "backend keyset walk, after id %q: the backend answered id %q, at or below it: it misreads the condition", after, got[i])
			return false
		}
		walk = append(walk, got...)
	}
	fmt.Fprintf(v.out, "backend keyset walk: %s\n", count(len(walk), "record"))
	for i := range max(len(walk), len(ids)) {
		switch {
		case i == len(walk):
			v.problem("keyset", "backend_keyset: the backend's keyset walk ended after id %q, where its own walk has %q next (%s more): it misreads the condition there (ids compared as text? the condition on another field?)",
				walk[i-1], ids[i], count(len(ids)-i, "record"))
			return false
		case i == len(ids):
			v.problem("keyset", "backend_keyset: the backend's keyset walk has id %q after %q, past the end of its own walk: records changed, or the condition is read differently from the sort",
				walk[i], ids[i-1])
			return false
		case walk[i] != ids[i]:
			v.problem("keyset", "backend_keyset: the backend's keyset walk and its own walk differ first after id %q: the keyset walk has id %q where its own walk has %q: the backend misreads the condition there (ids compared as text? the condition on another field?), or records changed meanwhile",
				ids[i-1], walk[i], ids[i])
			return false
		}
	}
	return true
}

// keysetQuery is the backend query for the records above id, size of
// them: the sort parameters, the keyset condition with id written in, and
// the page size.
func keysetQuery(sort url.Values, d legacy.Dialect, id string, size int) url.Values {
	q := url.Values{}
	for k, vals := range sort {
		q[k] = vals
	}
	cond, _ := url.ParseQuery(strings.Replace(d.Keyset, "{id}", url.QueryEscape(id), 1))
	for k, vals := range cond {
		q[k] = vals
	}
	q.Set(d.PerPageParam(), strconv.Itoa(size))
	return q
}
