package pbbench

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"testing"
)

// BenchmarkCallCost splits PocketBase's CPU into what a walk's calls are
// made of, so that a walk's cost can be read as calls × a call's cost +
// records returned × a record's + rows stepped over × a row's (+ the
// COUNT of totalItems): each kind of call, made repeatedly at random
// places of the list straight to PocketBase, and its CPU per call.
//
//	go test -run '^$' -bench CallCost -benchtime 1x -timeout 0
func BenchmarkCallCost(b *testing.B) {
	pbBin, _ := build(b)
	n := ints(b, "PBBENCH_RECORDS", []int{300_000})[0]
	data := seeded(b, pbBin, n)
	port := freePort(b)
	w := &bench{b: b, pbURL: fmt.Sprintf("http://127.0.0.1:%d", port),
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4, DisableCompression: true}}}
	w.pb = start(b, w.pbURL+"/api/health", nil, pbBin, "--dir", data, "serve", "--http", fmt.Sprintf("127.0.0.1:%d", port))
	w.count, _ = newCounter(b, w.pbURL)
	ids := w.ids(n)
	r := rand.New(rand.NewPCG(40, 1))
	keyset := func(per int, skipTotal bool) func() url.Values {
		return func() url.Values {
			q := url.Values{"sort": {"id"}, "perPage": {strconv.Itoa(per)}, "filter": {"(id>'" + ids[r.IntN(n)] + "')"}}
			if skipTotal {
				q.Set("skipTotal", "1")
			}
			return q
		}
	}
	page := func(per int, at func() int) func() url.Values {
		return func() url.Values {
			return url.Values{"sort": {"id"}, "perPage": {strconv.Itoa(per)}, "skipTotal": {"1"},
				"page": {strconv.Itoa(at()/per + 1)}}
		}
	}
	kinds := []struct {
		name  string
		calls int
		query func() url.Values
	}{
		{"keyset, 1 record, skipTotal: a call", 3000, keyset(1, true)},
		{"keyset, 1000 records, skipTotal: a call and 1000 records", 60, keyset(1000, true)},
		{"keyset, 1 record, with totalItems: a call and COUNT of the ids above (N/2 on average)", 300, keyset(1, false)},
		{"page 1, 1 record, with totalItems: a call and COUNT of the list", 300,
			func() url.Values { return url.Values{"sort": {"id"}, "perPage": {"1"}, "page": {"1"}} }},
		{"page at offset N-1, 7 records, skipTotal: the end-of-list check", 30, page(7, func() int { return n - 1 })},
		{"page at offset N/2, 1 record, skipTotal: a call and N/2 rows stepped", 60, page(1, func() int { return n / 2 })},
	}
	for b.Loop() {
		for _, k := range kinds {
			res := w.measureCalls(k.calls, k.query)
			b.Logf("%s: %d calls, %.3f ms of PocketBase CPU a call (%d records returned a call)",
				k.name, k.calls, res.pbCPU.Seconds()*1000/float64(k.calls), res.t.returned/k.calls)
		}
	}
}

// ids is the list's ids in order, read by PocketBase's keyset API.
func (w *bench) ids(n int) []string {
	ids := make([]string, 0, n)
	last := ""
	for {
		q := url.Values{"sort": {"id"}, "perPage": {"1000"}, "skipTotal": {"1"}}
		if last != "" {
			q.Set("filter", "(id>'"+last+"')")
		}
		_, page, err := w.get(pocketBaseURL(w.pbURL, q))
		if err != nil {
			w.b.Fatal(err)
		}
		ids = append(ids, page...)
		if len(page) < 1000 {
			return ids
		}
		last = page[len(page)-1]
	}
}

// measureCalls makes calls calls of query's making straight to
// PocketBase, one at a time, and reads its CPU around them.
func (w *bench) measureCalls(calls int, query func() url.Values) result {
	returned := 0
	res := w.measure("calls", nil, func() (int, error) {
		for range calls {
			_, page, err := w.get(pocketBaseURL(w.pbURL, query()))
			if err != nil {
				return 0, err
			}
			returned += len(page)
		}
		return 0, nil
	}, 0)
	res.t.returned = returned
	return res
}
