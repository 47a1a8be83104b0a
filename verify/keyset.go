package verify

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
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
// order and above the id is noted, not counted.
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
		q := url.Values{}
		for k, vals := range sort {
			q[k] = vals
		}
		cond, _ := url.ParseQuery(strings.Replace(d.Keyset, "{id}", url.QueryEscape(id), 1))
		for k, vals := range cond {
			q[k] = vals
		}
		q.Set(d.PerPageParam(), strconv.Itoa(keysetProbe+1))
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
		case !slices.Equal(got, want[:min(len(want), len(got))]):
			fmt.Fprintf(v.out, "note: backend_keyset after id %q: the backend answered %q first where its walk has %q; records changed meanwhile, or the condition is read differently\n", id, got[0], want[0])
		}
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
