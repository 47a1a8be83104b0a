package caddymodule_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/helpdesk-gateway/gateway/legacy"
)

// keysetBackend is a list that reads a keyset condition in the form of
// its template, as the backend it plays does, with numeric or lexical
// ids, and pages by _page and _perPage. It can misbehave (mode) and
// change the list around every keyset call (churn), and it records every
// query it gets.
type keysetBackend struct {
	tmpl      legacy.KeysetTemplate
	order     cursor.Order
	inclusive bool
	envelope  string
	// mode: "" reads the condition; "ignore" answers from the list's
	// start, as a backend that does not know the parameter; "below"
	// answers from three records at or below the cursor, as a backend
	// that misreads the condition (>= on a wrong column, a string
	// compare of numbers); "text" compares ids as text while the list is
	// sorted by number (after 9 come 90, 91, ...; after 999, nothing);
	// "field" applies the condition to another field, each record's
	// "number", which counts the records from 0.
	mode string
	// keyedSize, when set, is the page size of every keyset answer,
	// whatever _perPage asks: a backend that ignores it there.
	keyedSize int

	mu      sync.Mutex
	ids     []string // ascending under order
	churn   *rand.Rand
	deleted map[string]bool
	queries []string
}

func newKeysetBackend(tmpl string, order cursor.Order, ids []string) *keysetBackend {
	t, err := legacy.ParseKeysetTemplate(tmpl, func(string) error { return nil })
	if err != nil {
		panic(err)
	}
	ids = slices.Clone(ids)
	slices.SortFunc(ids, order.Compare)
	return &keysetBackend{tmpl: t, order: order, ids: ids, deleted: map[string]bool{}}
}

// lexicalIDs returns n distinct ids of 4 to 12 letters, digits and - _ .
func lexicalIDs(r *rand.Rand, n int) []string {
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_."
	seen := map[string]bool{}
	for len(seen) < n {
		b := make([]byte, 4+r.IntN(9))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		seen[string(b)] = true
	}
	out := make([]string, 0, n)
	for id := range seen {
		out = append(out, id)
	}
	return out
}

// numericIDs returns n ascending ids with gaps, as decimal strings.
func numericIDs(r *rand.Rand, n int) []string {
	out := make([]string, n)
	id := 0
	for i := range out {
		id += 1 + r.IntN(9)
		out[i] = strconv.Itoa(id)
	}
	return out
}

func (b *keysetBackend) snapshot() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.ids)
}

func (b *keysetBackend) seen() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.queries)
}

// search returns where ids above (or at, with orAt) id start.
func (b *keysetBackend) search(id string, orAt bool) int {
	i, found := slices.BinarySearchFunc(b.ids, id, b.order.Compare)
	if found && !orAt {
		i++
	}
	return i
}

func (b *keysetBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.queries = append(b.queries, r.URL.RawQuery)
	q := r.URL.Query()
	page, _ := strconv.Atoi(q.Get("_page"))
	size, _ := strconv.Atoi(q.Get("_perPage"))
	page, size = max(page, 1), max(size, 1)
	from := 0
	var textual func(id string) bool // the condition on ids as text, in "text" mode
	if v, ok := q[b.tmpl.Param]; ok {
		s, found := strings.CutPrefix(v[0], b.tmpl.Prefix)
		s, found2 := strings.CutSuffix(s, b.tmpl.Suffix)
		if !found || !found2 || b.order.Check(s) != nil {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"message":"bad condition %s"}`, strconv.Quote(v[0]))
			return
		}
		if b.churn != nil {
			b.strike(s)
		}
		switch from = b.search(s, b.inclusive); b.mode {
		case "ignore":
			from = 0
		case "below":
			from = max(b.search(s, true)-3, 0)
		case "field":
			n, _ := strconv.Atoi(s)
			from = min(n+1, len(b.ids))
			if b.inclusive {
				from = min(n, len(b.ids))
			}
		case "text":
			textual = func(id string) bool { return id > s || b.inclusive && id == s }
		}
	}
	recs := b.ids[min(from, len(b.ids)):]
	if textual != nil {
		recs = slices.DeleteFunc(slices.Clone(b.ids), func(id string) bool { return !textual(id) })
	}
	if b.keyedSize > 0 && q.Has(b.tmpl.Param) {
		size = b.keyedSize
	}
	start := min((page-1)*size, len(recs))
	recs = recs[start:min(start+size, len(recs))]
	var sb strings.Builder
	if b.envelope != "" {
		fmt.Fprintf(&sb, `{"total":%d,%q:`, len(b.ids), b.envelope)
	}
	sb.WriteByte('[')
	for i, id := range recs {
		if i > 0 {
			sb.WriteByte(',')
		}
		tok, _ := json.Marshal(id)
		if b.order == cursor.Numeric {
			tok = []byte(id)
		}
		fmt.Fprintf(&sb, `{"id":%s,"n":%d}`, tok, i)
	}
	sb.WriteByte(']')
	if b.envelope != "" {
		sb.WriteByte('}')
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(sb.String()))
}

// strike changes the list where a keyset call after cursor looks: it
// deletes the first record above it or the cursor's own, and inserts
// records just above and just below it. Callers hold mu.
func (b *keysetBackend) strike(cursor string) {
	at := b.search(cursor, true)
	for range b.churn.IntN(3) {
		switch b.churn.IntN(3) {
		case 0:
			if i := at + b.churn.IntN(2); i < len(b.ids) {
				b.deleted[b.ids[i]] = true
				b.ids = slices.Delete(b.ids, i, i+1)
			}
		case 1:
			b.insert(b.near(cursor, 1))
		default:
			b.insert(b.near(cursor, -1))
		}
	}
}

// near returns an id just above (dir 1) or below (-1) the id after.
func (b *keysetBackend) near(after string, dir int) string {
	if b.order == cursor.Numeric {
		n, _ := strconv.Atoi(after)
		return strconv.Itoa(max(n+dir, 1))
	}
	if dir > 0 {
		return after + "0"
	}
	return after[:len(after)-1] + string(after[len(after)-1]-1) + "z"
}

func (b *keysetBackend) insert(id string) {
	if b.deleted[id] || b.order.Check(id) != nil {
		return // an id deleted once stays away, so the test knows what existed throughout
	}
	if i, found := slices.BinarySearchFunc(b.ids, id, b.order.Compare); !found {
		b.ids = slices.Insert(b.ids, i, id)
	}
}
