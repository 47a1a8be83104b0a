package caddymodule_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"

	"github.com/helpdesk-gateway/gateway/cursor"
)

// productBackend serves one list, /calls, as a product does, counting
// calls and keeping every query; with churn it inserts and deletes
// records where each keyset call looks.
type productBackend struct {
	p     keysetProduct
	mu    sync.Mutex
	ids   []string
	churn *rand.Rand
	gone  map[string]bool // deleted once: never inserted again
	calls int
	seen  []url.Values
}

func newProductBackend(p keysetProduct, r *rand.Rand, n int) *productBackend {
	ids := make([]string, 0, n)
	if p.order == cursor.Numeric {
		for id := 0; len(ids) < n; {
			id += 10 + r.IntN(20) // gaps for churn to insert into
			ids = append(ids, strconv.Itoa(id))
		}
	} else {
		ids = lexicalProductIDs(r, n)
	}
	slices.SortFunc(ids, p.order.Compare)
	return &productBackend{p: p, ids: ids, gone: map[string]bool{}}
}

// lexicalProductIDs returns n distinct PocketBase-like ids.
func lexicalProductIDs(r *rand.Rand, n int) []string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	seen := map[string]bool{}
	for len(seen) < n {
		b := make([]byte, 15)
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		seen[string(b)] = true
	}
	return slices.Collect(func(yield func(string) bool) {
		for id := range seen {
			if !yield(id) {
				return
			}
		}
	})
}

func (b *productBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	defer b.mu.Unlock()
	q := r.URL.Query()
	b.calls++
	b.seen = append(b.seen, q)
	after, inclusive, keyed, err := b.p.condition(q)
	if err != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, err.Error())
		return
	}
	if keyed && b.churn != nil {
		b.strike(after)
	}
	list := b.ids
	if keyed {
		i, found := slices.BinarySearchFunc(list, after, b.p.order.Compare)
		if found && !inclusive {
			i++
		}
		list = list[i:]
	}
	offset, limit, ascending := b.p.window(q)
	if b.p.maxLimit > 0 {
		limit = min(limit, b.p.maxLimit)
	}
	recs := list[min(offset, len(list)):min(offset+limit, len(list))]
	if !ascending {
		recs = slices.Clone(recs)
		slices.Reverse(recs) // unsorted: the gateway must have asked wrongly
	}
	body, _ := json.Marshal(b.p.body(recs, len(list), offset, limit, b.p.order))
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// strike deletes the first record above the cursor or the cursor's own,
// and inserts records just above and just below it. Callers hold mu.
func (b *productBackend) strike(cursor string) {
	at, _ := slices.BinarySearchFunc(b.ids, cursor, b.p.order.Compare)
	for range 1 + b.churn.IntN(3) {
		var id string
		switch b.churn.IntN(3) {
		case 0:
			if i := at + b.churn.IntN(2); i < len(b.ids) {
				b.gone[b.ids[i]] = true
				b.ids = slices.Delete(b.ids, i, i+1)
			}
			continue
		case 1:
			id = productNear(cursor, b.p.order, 1)
		default:
			id = productNear(cursor, b.p.order, -1)
		}
		if i, found := slices.BinarySearchFunc(b.ids, id, b.p.order.Compare); id != "" && !found && !b.gone[id] {
			b.ids = slices.Insert(b.ids, i, id)
		}
	}
}

// productNear returns an id just above (dir 1) or below (-1) id, or "".
func productNear(id string, o cursor.Order, dir int) string {
	if o == cursor.Numeric {
		n, _ := strconv.Atoi(id)
		if n+dir < 1 {
			return ""
		}
		return strconv.Itoa(n + dir)
	}
	if dir > 0 {
		return id + "0"
	}
	if last := id[len(id)-1]; last > '0' && last != 'a' {
		return id[:len(id)-1] + string(last-1) + "z"
	}
	return ""
}

func (b *productBackend) list() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.ids)
}

func (b *productBackend) count() (int, []url.Values) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.calls, slices.Clone(b.seen)
}

func (b *productBackend) reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls, b.seen = 0, nil
}
