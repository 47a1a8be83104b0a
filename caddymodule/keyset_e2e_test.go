package caddymodule_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule"
	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/legacy"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
	"github.com/helpdesk-gateway/gateway/redisstore/redistest"
)

// keysetStyle is one backend's form of "the records with id above X",
// as the gateway's backend_keyset writes it and the reference backend
// (Paging.Keyset, KeysetInclusive) reads it.
type keysetStyle struct {
	name      string
	options   string // the gateway's options
	paging    legacy.Dialect
	inclusive bool
	envelope  string
}

// keysetStyles are the four forms the README shows, each with the paging
// dialect and body its backend has.
var keysetStyles = []keysetStyle{
	{name: "id_gt", options: `backend_keyset "id_gt={id}"`, paging: legacy.Dialect{Keyset: "id_gt={id}"}},
	{name: "json-server id_gte", inclusive: true,
		options: "backend_keyset \"id_gte={id}\"\n\t\tbackend_per_page_param _limit",
		paging:  legacy.Dialect{Keyset: "id_gte={id}", PerPage: "_limit"}},
	{name: "PostgREST id=gt.", envelope: "data",
		options: "backend_keyset \"id=gt.{id}\"\n\t\tbackend_offset_param offset\n\t\tbackend_per_page_param limit\n\t\trecords_path data",
		paging:  legacy.Dialect{Keyset: "id=gt.{id}", Offset: "offset", PerPage: "limit"}},
	{name: "PocketBase filter", envelope: "items",
		options: "backend_keyset \"filter=(id>'{id}')\"\n\t\tbackend_page_param page\n\t\tbackend_per_page_param perPage\n\t\trecords_path items",
		paging:  legacy.Dialect{Keyset: "filter=(id>'{id}')", Page: "page", PerPage: "perPage"}},
}

func (s keysetStyle) pageIDs(t testing.TB) func(answer) []string {
	return func(a answer) []string {
		if s.envelope != "" {
			return a.ids(t, s.envelope)
		}
		return a.ids(t)
	}
}

// keysetParam is the parameter the style's template sets.
func (s keysetStyle) keysetParam() string { return s.paging.KeysetParams()[0] }

// TestKeysetStylesServeEveryRecord runs the gateway in front of the
// reference backend reading each form: walks at sizes below, at and
// above the backend's clamp, hand-built cursors and _page requests are
// exact; every cursor page is asked by keyset, with no page number or
// offset (the first page, and a page as large as the backend's limit
// that must look one record past an answer, by page), and _page requests by the dialect's page; a
// client sending the template's parameter gets 400. Read-ahead is off, so
// that every page is a call.
func TestKeysetStylesServeEveryRecord(t *testing.T) {
	for _, s := range keysetStyles {
		t.Run(s.name, func(t *testing.T) {
			b := reference.New(reference.Config{Seed: 23, Records: 900, MaxPerPage: dialectLimit, Envelope: s.envelope,
				Paging: s.paging, KeysetInclusive: s.inclusive})
			rec := &recorder{next: b}
			srv := httptest.NewServer(rec)
			t.Cleanup(srv.Close)
			// Read-ahead off: every page is a backend call, to be seen asked by keyset.
			c := gatewaytest.Start(t, fmt.Sprintf(gatewaySite, s.options+"\n\t\treadahead_ttl 0"), srv.URL)
			all := strIDs(b.IDs("calls"))
			pageIDs := s.pageIDs(t)
			r := rand.New(rand.NewPCG(23, uint64(len(s.name))))
			param := s.keysetParam()
			windowParams := []string{s.paging.PageParam()}
			if s.paging.Offsets() {
				windowParams[0] = s.paging.Offset
			}
			for _, size := range []int{7, dialectLimit - 1, dialectLimit, 250} {
				rec.reset()
				assert.Equal(t, all, walkDialect(t, c.URL, size, pageIDs), "%d per page: cursor walk", size)
				keyed := 0
				for _, req := range rec.requests() {
					q := req.URL.Query()
					if _, ok := q[param]; !ok {
						continue
					}
					keyed++
					for _, w := range windowParams {
						assert.NotContains(t, q, w, "a keyset call has no page number or offset: %s", req.URL.RawQuery)
					}
				}
				pages := (len(all) + size - 1) / size
				assert.GreaterOrEqual(t, keyed, pages-1, "%d per page: every cursor page is asked by keyset", size)
				for range 4 { // client-built cursors: a record's own id, or one above it
					i := r.IntN(len(all))
					id := mustInt(all[i]) + r.Int64N(2)
					a := get(t, fmt.Sprintf("%s/calls?_perPage=%d&_cursor=%s", c.URL, size, cursorFor(strconv.FormatInt(id, 10))))
					require.Equal(t, http.StatusOK, a.status, string(a.body))
					from := i + 1
					if i+1 < len(all) && mustInt(all[i+1]) == id {
						from = i + 2
					}
					assert.Equal(t, all[from:min(from+size, len(all))], pageIDs(a), "%d per page: after %d", size, id)
				}
				rec.reset()
				for _, page := range []int{1, 3} {
					a := get(t, fmt.Sprintf("%s/calls?_perPage=%d&_page=%d", c.URL, size, page))
					require.Equal(t, http.StatusOK, a.status, string(a.body))
					from := min((page-1)*size, len(all))
					assert.Equal(t, all[from:min(from+size, len(all))], pageIDs(a), "_page %d", page)
				}
				for _, req := range rec.requests() {
					assert.NotContains(t, req.URL.Query(), param, "a _page request keeps the page dialect")
				}
			}
			for _, name := range []string{param, strings.ToUpper(param), url.QueryEscape(param) + "%5B%5D"} {
				a := get(t, c.URL+"/calls?"+name+"=5")
				require.Equal(t, http.StatusBadRequest, a.status, name)
				assert.Contains(t, a.message(t), param, name)
			}
		})
	}
}

// TestKeysetCost counts, at the reference backend speaking id_gt, what
// cursor walks cost it through a real Caddy: one keyset call per cursor
// page, at most p+1 records stepped through per keyset call at any
// depth, and about (p+1)/p records fetched per record served. The checks
// of issue 31 add two offset reads a walk: the first keyset page's (one
// call: the first page told the index where its cursor is) and the last
// page's (the answer that ends the list is confirmed where the keyset
// answers counted it to be), which steps through the list once. A cold
// cursor costs one call in a list identity already checked; in one never
// seen, the check's offset read too. Read-ahead is off for these counts;
// TestKeysetCostWithReadahead counts the default.
func TestKeysetCost(t *testing.T) {
	const records = 5000
	for _, perPage := range []int{10, 100} {
		t.Run(fmt.Sprintf("perPage=%d", perPage), func(t *testing.T) {
			// The same walk asked by page, for comparison: every page steps
			// through the records before it.
			pb := reference.New(reference.Config{Seed: 25, Records: records})
			pc := gatewaytest.StartBehind(t, fmt.Sprintf(gatewaySite, "readahead_ttl 0"), pb)
			_, ppages := walkCursor(t, pc.URL, "/calls", perPage, "")
			t.Logf("the same walk by _page: %d calls (%.2f per page), %.3f records fetched per record served, %.1f records stepped through per call",
				pb.Requests("calls"), float64(pb.Requests("calls"))/float64(ppages), float64(pb.Served("calls"))/records, float64(pb.Stepped("calls"))/float64(pb.Requests("calls")))
			pc.Stop(t) // one Caddy at a time

			b := reference.New(reference.Config{Seed: 25, Records: records, Paging: legacy.Dialect{Keyset: "id_gt={id}"}})
			rec := &recorder{next: b}
			c := gatewaytest.StartBehind(t, fmt.Sprintf(gatewaySite, "backend_keyset \"id_gt={id}\"\n\t\treadahead_ttl 0"), rec)
			ids, pages := walkCursor(t, c.URL, "/calls", perPage, "")
			require.Equal(t, strIDs(b.IDs("calls")), ids)
			calls, served, stepped := b.Requests("calls"), b.Served("calls"), b.Stepped("calls")
			kcalls, ocalls, ostepped := keysetCalls(t, b, rec, records)
			p := float64(perPage)
			t.Logf("walk of %d records: %d pages, %d calls (%d keyset, %d offset; %.3f per page), %.3f records fetched per record served, %.2f records stepped through per keyset call, %d by the offset reads",
				records, pages, calls, kcalls, ocalls, float64(calls)/float64(pages), float64(served)/records, float64(stepped-ostepped)/float64(kcalls), ostepped)
			assert.Equal(t, int64(pages-1), kcalls, "one keyset call per cursor page")
			assert.Equal(t, int64(1+2), ocalls, "the first page, and the checks of the first keyset page and of the last")
			checks := float64(2 * 2 * (perPage + 1)) // records the checks' two offset reads fetch, at most
			assert.LessOrEqual(t, float64(served), records*(p+1)/p+checks, "records fetched per record served")
			assert.LessOrEqual(t, float64(stepped-ostepped), float64(kcalls)*(p+1)+p, "records stepped through per keyset call (the first page's p besides)")
			assert.LessOrEqual(t, float64(ostepped), records+checks, "the offset reads step through the list about once")
			assert.Less(t, stepped*10, pb.Stepped("calls"), "a tenth of what the _page walk steps through, or less")

			// Cold cursors, anywhere in the list (not its last page): in
			// the walk's list identity, checked, and in one the gateway
			// has never seen (the backend ignores the extra parameter).
			all := b.IDs("calls")
			r := rand.New(rand.NewPCG(25, uint64(perPage)))
			coldMax := int64(0)
			for i := range 20 {
				at := r.IntN(len(all) - perPage - 1)
				for _, extra := range []string{"", fmt.Sprintf("&cold=%d", i)} {
					before, beforeStepped := b.Requests("calls"), b.Stepped("calls")
					a := get(t, fmt.Sprintf("%s/calls?_perPage=%d%s&_cursor=%s", c.URL, perPage, extra, cursorFor(strconv.FormatInt(all[at], 10))))
					require.Equal(t, http.StatusOK, a.status, string(a.body))
					assert.Equal(t, strIDs(all[at+1:min(at+1+perPage, len(all))]), a.ids(t))
					if extra == "" {
						assert.Equal(t, int64(1), b.Requests("calls")-before, "a cold cursor at %d costs one call", at)
						assert.LessOrEqual(t, b.Stepped("calls")-beforeStepped, int64(perPage+1), "and p+1 records stepped through")
					} else {
						coldMax = max(coldMax, b.Requests("calls")-before)
						assert.LessOrEqual(t, b.Requests("calls")-before, int64(1+3), "a cold cursor at %d of a list never seen: a keyset call and the check's offset read", at)
					}
				}
			}
			t.Logf("a cold cursor in a list identity never seen: %d calls at most", coldMax)
		})
	}
}

// keysetCalls counts the calls rec saw: by keyset (id_gt), and by offset
// (the first page's, the checks'), with the records those step through.
func keysetCalls(t *testing.T, b *reference.Backend, rec *recorder, records int) (keyset, offset, offsetStepped int64) {
	t.Helper()
	for _, r := range rec.requests() {
		q := r.URL.Query()
		if q.Has("id_gt") {
			keyset++
			continue
		}
		offset++
		start, size, ok := b.Window("calls", q)
		require.True(t, ok)
		offsetStepped += int64(start + max(min(size, records-start), 0))
	}
	return keyset, offset, offsetStepped
}

// TestKeysetCostWithReadahead counts the same walk with read-ahead on
// (the default): keyset answers are read ahead and kept as windows (issue
// 40), so a walk costs a call per many pages, as the page dialect's does
// (0.05 a page at 10, 0.25 at 100), and the records its keyset calls
// step through stay those sent. The offset reads of the checks (the
// first keyset page's, and at the list's end one or two: near an offset
// of thousands, no page the backend numbers holds all the rest of the
// list) are counted apart: a walk of a backend that compares ids as
// numbers needs no other (translate's textMayDiffer). The walker lets
// the reads ahead in flight end before each page (walkCursorSettled), and
// windows live 30s, which no walker slowed by a loaded machine outlasts
// (at the default 2s, a slow walker's windows shrink to its pace): the
// counts are read-ahead's, not the machine's.
func TestKeysetCostWithReadahead(t *testing.T) {
	const records = 5000
	for _, perPage := range []int{10, 100} {
		t.Run(fmt.Sprintf("perPage=%d", perPage), func(t *testing.T) {
			b := reference.New(reference.Config{Seed: 25, Records: records, Paging: legacy.Dialect{Keyset: "id_gt={id}"}})
			rec := &recorder{next: b}
			c := gatewaytest.StartBehind(t, fmt.Sprintf(gatewaySite, `backend_keyset "id_gt={id}"`+"\n\t\treadahead_ttl 30s"), rec)
			caddymodule.TrustWalks() // as a lone instance after its first walk: read-ahead's cost, not the proof's
			ids, pages := walkCursorSettled(t, c.URL, "/calls", perPage, "")
			require.Equal(t, strIDs(b.IDs("calls")), ids)
			calls, served, stepped := b.Requests("calls"), b.Served("calls"), b.Stepped("calls")
			var checks, checkServed, checkStepped int64 // offset reads after the first page's
			for i, r := range rec.requests() {
				if q := r.URL.Query(); !q.Has("id_gt") && i > 0 {
					start, size, ok := b.Window("calls", q)
					require.True(t, ok)
					n := int64(max(min(size, records-start), 0))
					checks, checkServed, checkStepped = checks+1, checkServed+n, checkStepped+int64(start)+n
				}
			}
			t.Logf("walk of %d records with read-ahead: %d pages, %d calls (%.3f per page; %d offset reads checking), %.3f records fetched per record served, %.3f records stepped through per record served (%.3f and %.3f without the checks)",
				records, pages, calls, float64(calls)/float64(pages), checks, float64(served)/records, float64(stepped)/records,
				float64(served-checkServed)/records, float64(stepped-checkStepped)/records)
			want := map[int]float64{10: 0.05, 100: 0.25}[perPage]
			assert.LessOrEqual(t, float64(calls)/float64(pages), want, "calls per page, the checks' included")
			assert.LessOrEqual(t, checks, int64(3), "the first keyset page's check, and the end's")
			assert.LessOrEqual(t, float64(served-checkServed)/records, 1.2, "records fetched per record served, by the walk")
			assert.Equal(t, served-checkServed, stepped-checkStepped, "a keyset walk steps through only what it is sent")
			assert.LessOrEqual(t, checkStepped, int64(3*records), "the checks step through the list about once for each offset read at its end")
		})
	}
}

// TestKeysetSharedStoreWalk: keyset windows (no offset) go through the
// shared store as offset windows do: three instances behind round_robin
// share one redis-server, and a walk of a keyset backend is exact, asked
// by keyset, and costs far fewer calls than pages, the instances
// continuing each other's windows (each instance checks its own list's
// first keyset answer, and the end, against an offset read).
func TestKeysetSharedStoreWalk(t *testing.T) {
	if testing.Short() {
		t.Skip("walks through four servers and a redis-server")
	}
	const records = 5000
	store := redistest.Start(t)
	b := reference.New(reference.Config{Seed: 40, Records: records, Paging: legacy.Dialect{Keyset: "id_gt={id}"}})
	rec := &recorder{next: b}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	c := gatewaytest.Start(t, scaleOutSites(t, 3, "round_robin", sharedStoreOptions(store,
		`backend_keyset "id_gt={id}"`, storeTimeout, "readahead_ttl 30s")), srv.URL)
	ids, pages := walkSharedPages(t, c.URL, "/calls", 10, "client-1", "")
	require.Equal(t, strIDs(b.IDs("calls")), ids, "the walk is exact")
	keyed := 0
	for _, r := range rec.requests() {
		if r.URL.Query().Has("id_gt") {
			keyed++
		}
	}
	calls := len(rec.requests())
	t.Logf("%d pages, %d calls (%d keyset): %.3f a page", pages, calls, keyed, float64(calls)/float64(pages))
	assert.Positive(t, keyed, "the walk is read by keyset")
	assert.LessOrEqual(t, float64(calls)/float64(pages), 0.1, "calls per page, shared keyset windows")
}
