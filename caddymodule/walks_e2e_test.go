package caddymodule_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule"
	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/legacy"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// The tests of this file hold every walk of one caller to the product's
// first promise (issue 29): every record that existed for the whole walk
// appears, byte for byte, however the walk's pages were served and
// whatever the same caller did just before or does beside it. The backend
// churns on its own (a mutation a second for every 60 records: the
// issue's churn 40 on 2,400) and, between walks, renews records (deleting
// an id and making a new record under it, as the reference churn does
// when it reuses a free id) and inserts new ones: a walk that starts
// after that must show the new records and the new bytes. What existed
// for a whole walk is read from the backend itself, with its churn
// paused, just before the walk's first page and just after its last: a
// record is (id, bytes), and those in both reads existed throughout.
//
// Every test runs with read-ahead at its default, where windows outlive
// a walk, and with readahead_ttl 0 as the control.

// exampleBackend is one of the three example Caddyfiles' backends: the
// gateway's options come from the file, the backend's settings mirror its
// helpdesk_legacy block.
type exampleBackend struct {
	file     string
	paging   legacy.Dialect
	envelope string
	limit    int // the backend's max_per_page
}

var exampleBackends = []exampleBackend{
	{"Caddyfile.page-per-page", legacy.Dialect{Page: "page", PerPage: "per_page"}, "data", 100},
	{"Caddyfile.offset-limit", legacy.Dialect{Offset: "offset", PerPage: "limit"}, "", 500},
	{"Caddyfile.keyset", legacy.Dialect{Keyset: "id_gt={id}"}, "", 500},
}

// gatewayOptions returns the options of the file's helpdesk_gateway block.
func (e exampleBackend) gatewayOptions(t *testing.T) string {
	t.Helper()
	text, err := os.ReadFile("../" + e.file)
	require.NoError(t, err)
	_, block, ok := strings.Cut(string(text), "helpdesk_gateway {\n")
	require.True(t, ok, "%s has a helpdesk_gateway block", e.file)
	block, _, ok = strings.Cut(block, "\n\t}\n")
	require.True(t, ok)
	return strings.TrimSpace(block)
}

// churnedWalks is the stage of one test: the backend of e with records
// per list, churning from the first walk's start, behind a real Caddy
// whose gateway has e's options and extra.
type churnedWalks struct {
	t         *testing.T
	e         exampleBackend
	readahead bool // at its default; else readahead_ttl 0
	b         *reference.Backend
	url       string
	r         *rand.Rand
	list      string
}

func startChurnedWalks(t *testing.T, e exampleBackend, records int, extra string) *churnedWalks {
	s, _ := churnedWalksBehind(t, e, records, fmt.Sprintf(gatewaySite, e.gatewayOptions(t)+"\n\t\t"+extra), extra == "")
	return s
}

// churnedWalksBehind is startChurnedWalks behind any Caddyfile whose
// gateways reach the backend as {backend} and take e's options (several
// instances behind a balancer, as scaleOutSites makes), its first site
// the one clients ask; readahead says whether its gateways read ahead.
func churnedWalksBehind(t *testing.T, e exampleBackend, records int, caddyfile string, readahead bool, opts ...gatewaytest.Options) (*churnedWalks, *gatewaytest.Caddy) {
	b := reference.New(reference.Config{Seed: 29, Records: records, MaxPerPage: e.limit, Envelope: e.envelope,
		Paging: e.paging, ChurnPerSecond: float64(records) / 60})
	srv := httptest.NewServer(b)
	t.Cleanup(func() {
		srv.Close()
		b.Close()
	})
	c := gatewaytest.Start(t, caddyfile, srv.URL, opts...)
	return &churnedWalks{t: t, e: e, readahead: readahead, b: b, url: c.URL,
		r: rand.New(rand.NewPCG(29, uint64(records))), list: "calls"}, c
}

// snapshot reads the whole list from the backend itself, by its own
// paging names in id order, with its churn paused: one moment of the
// list, as records by id. The churn stays paused; resume starts it again.
func (s *churnedWalks) snapshot() map[int64][]byte {
	s.t.Helper()
	s.b.Close()
	out := map[int64][]byte{}
	d := s.e.paging
	for n := 0; ; n++ {
		q := url.Values{"_sortField": {"id"}, "_sortDir": {"ASC"}, d.PerPageParam(): {strconv.Itoa(s.e.limit)}}
		if d.Offsets() {
			q.Set(d.Offset, strconv.Itoa(n*s.e.limit))
		} else if d.FromZero {
			q.Set(d.PageParam(), strconv.Itoa(n))
		} else {
			q.Set(d.PageParam(), strconv.Itoa(n+1))
		}
		rec := httptest.NewRecorder()
		s.b.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/"+s.list+"?"+q.Encode(), nil))
		require.Equal(s.t, http.StatusOK, rec.Code, rec.Body.String())
		ids, recs := s.records(rec.Body.Bytes())
		for i, id := range ids {
			out[id] = recs[i]
		}
		if len(ids) < s.e.limit {
			require.Len(s.t, out, s.b.Len(s.list), "the paused list read whole")
			return out
		}
	}
}

func (s *churnedWalks) resume() { s.b.Start() }

// records returns the ids and the bytes of the records of a page body.
func (s *churnedWalks) records(body []byte) ([]int64, []json.RawMessage) {
	s.t.Helper()
	if s.e.envelope != "" {
		var env map[string]json.RawMessage
		require.NoError(s.t, json.Unmarshal(body, &env), string(body))
		body = env[s.e.envelope]
	}
	var recs []json.RawMessage
	require.NoError(s.t, json.Unmarshal(body, &recs), string(body))
	ids := make([]int64, len(recs))
	for i, r := range recs {
		var f struct{ ID json.Number }
		require.NoError(s.t, json.Unmarshal(r, &f), string(r))
		id, err := strconv.ParseInt(strings.Trim(string(f.ID), `"`), 10, 64)
		require.NoError(s.t, err, string(r))
		ids[i] = id
	}
	return ids, recs
}

// renew changes the list between walks, with the churn paused: about n
// records get new bytes under their old id (deleted, then made anew, as
// the churn's reuse of free ids does), evenly over the list, and about n
// new records go into gaps past the first keep records. The next walk's
// first page then ends where the last walk's did, as it does when the
// churn happens to leave it alone: the walk follows the same cursors,
// and a window the last walk read is as good a place for its pages as
// any, but for the changes.
func (s *churnedWalks) renew(n, keep int) {
	ids := s.b.IDs(s.list)
	step := max(1, len(ids)/n)
	for i := s.r.IntN(step); i < len(ids); i += step {
		require.True(s.t, s.b.Delete(s.list, ids[i]))
		require.NoError(s.t, s.b.Insert(s.list, ids[i]))
		if j := i + step/2; j >= keep && j+1 < len(ids) && ids[j]+1 < ids[j+1] {
			require.NoError(s.t, s.b.Insert(s.list, ids[j]+1))
		}
	}
}

// walk is one cursor walk of the caller, taken a page at a time.
type walk struct {
	name     string
	perPage  int
	cursor   string
	pages    int
	done     bool
	ids      []int64
	recs     []json.RawMessage
	existing map[int64][]byte // the list as its first page was asked for
	calls0   int64            // the backend's count of list calls when w began
	calls    int64            // the backend calls w cost, once it has ended
	refused  int              // the 503s step repeated
}

// start renews the list and reads it, then starts w: what the backend
// holds now must all appear in w, unless the churn takes it before w ends.
func (s *churnedWalks) start(name string, perPage int) *walk {
	s.b.Close() // the churn pauses, so that renew's ids stay free
	s.renew(max(4, s.b.Len(s.list)/40), perPage)
	w := s.begin(name, perPage)
	s.resume()
	return w
}

// begin starts w on the list as it is, reading it first (which pauses
// the churn: resume starts it again, finish does).
func (s *churnedWalks) begin(name string, perPage int) *walk {
	w := &walk{name: name, perPage: perPage, existing: s.snapshot()}
	w.calls0 = s.b.Requests(s.list)
	return w
}

// step asks for w's next page, with headers, repeating a 503 the gateway
// sent for max_subrequests as it asks.
func (s *churnedWalks) step(w *walk, headers ...string) {
	s.t.Helper()
	u := s.url + "/" + s.list + "?_perPage=" + strconv.Itoa(w.perPage)
	if w.cursor != "" {
		u += "&_cursor=" + url.QueryEscape(w.cursor)
	}
	a := get(s.t, u, headers...)
	for try := 0; try < 5 && a.status == http.StatusServiceUnavailable; try++ {
		w.refused++
		a = get(s.t, u, headers...)
	}
	require.Equal(s.t, http.StatusOK, a.status, "%s: %s", w.name, a.body)
	ids, recs := s.records(a.body)
	w.ids, w.recs = append(w.ids, ids...), append(w.recs, recs...)
	w.pages++
	require.Less(s.t, w.pages, 100000, "%s: the walk does not end", w.name)
	if w.cursor = a.header.Get("next_page_cursor"); w.cursor == "" {
		w.done = true
	} else {
		require.Len(s.t, ids, w.perPage, "%s: a page before the last is full", w.name)
	}
}

// finish checks w, which has ended, against the list as the backend holds
// it now (the churn paused for the read): ids strictly ascend, and every
// record that was in the list, with the same bytes, when w began and is
// now, appears in w with those bytes.
func (s *churnedWalks) finish(w *walk) {
	s.t.Helper()
	require.True(s.t, w.done)
	w.calls = s.b.Requests(s.list) - w.calls0
	now := s.snapshot()
	defer s.resume()
	for i := 1; i < len(w.ids); i++ {
		require.Less(s.t, w.ids[i-1], w.ids[i], "%s: ids strictly ascend, none twice", w.name)
	}
	var missing, stale []int64
	throughout := 0
	for id, rec := range w.existing {
		if !bytes.Equal(now[id], rec) {
			continue // deleted, or renewed, during the walk
		}
		throughout++
		i, found := slices.BinarySearch(w.ids, id)
		switch {
		case !found:
			missing = append(missing, id)
		case !bytes.Equal(w.recs[i], rec):
			stale = append(stale, id)
		}
	}
	slices.Sort(missing)
	slices.Sort(stale)
	s.t.Logf("%s: %d pages, %d backend calls, %d lived through, %d missing, %d stale", w.name, w.pages, w.calls, throughout, len(missing), len(stale))
	require.Greater(s.t, throughout, len(w.existing)*3/4, "%s: most of the list lived through the walk", w.name)
	assert.Empty(s.t, missing, "%s: %d of %d records that existed for the whole walk are missing (%d pages)",
		w.name, len(missing), throughout, w.pages)
	assert.Empty(s.t, stale, "%s: %d records that existed for the whole walk came with bytes the backend no longer held when it began",
		w.name, len(stale))
}

// readaheadSettings are the two ways every test runs: read-ahead at its
// default (windows live across walks) and readahead_ttl 0, the control.
var readaheadSettings = []struct{ name, options string }{
	{"readahead default", ""},
	{"readahead_ttl 0", "readahead_ttl 0"},
}

// walkSizes are the page sizes of the walks, each with two list lengths:
// a short list, whose whole walk fits in the windows the gateway keeps
// for a caller today (so the next walk meets every one of them), and a
// long one, whose walk outgrows them, as the lists of a real help desk
// do (only an engine that keeps more windows meets the old ones there).
var walkSizes = []struct{ perPage, short, long int }{
	{1, 60, 250}, {7, 150, 1000}, {100, 400, 1500}, {250, 800, 1500}, {1000, 1050, 2500},
}

// walkSetups says which setups a test walks: its list lengths, and the
// page sizes up to maxPerPage (0: all). The control, readahead_ttl 0,
// runs on the short list, or on the long one when a test has no short;
// -short leaves the long lists out: the package must run within minutes
// under -race on two cores. -race leaves out more, in the tests that
// read raceEnabled: the long lists, and the pages of 250 and 1,000;
// .ci/run walks them without it. What a long list adds, walks that
// outgrow the windows, and what a large page adds, pages stitched from
// several backend answers, are matters of counts and places, not of
// goroutines; under -race every test but TestWalksRestarted (long lists
// only) still walks the short lists by 1, 7 and 100 a page, in every
// dialect, with read-ahead and without.
type walkSetups struct {
	short, long bool
	maxPerPage  int
}

// eachWalkSetup runs walks in a subtest for each read-ahead setting,
// example backend, page size and list length that o names.
func eachWalkSetup(t *testing.T, o walkSetups, walks func(t *testing.T, s *churnedWalks, perPage, pages int)) {
	for _, ra := range readaheadSettings {
		for _, e := range exampleBackends {
			for _, size := range walkSizes {
				if o.maxPerPage > 0 && size.perPage > o.maxPerPage {
					continue
				}
				for _, l := range []struct {
					name    string
					records int
					run     bool
				}{
					{"short", size.short, o.short},
					{"long", size.long, o.long && !testing.Short() && (ra.options == "" || !o.short)},
				} {
					if !l.run {
						continue
					}
					t.Run(fmt.Sprintf("%s/%s/perPage=%d/%s", ra.name, e.file, size.perPage, l.name), func(t *testing.T) {
						s := startChurnedWalks(t, e, l.records, ra.options)
						walks(t, s, size.perPage, (l.records+size.perPage-1)/size.perPage)
					})
				}
			}
		}
	}
}

// TestWalksBackToBack: one caller walks a list again as soon as its last
// walk ends, as a sync job on a short schedule does, in each example
// Caddyfile's dialect and at page sizes from 1 to 1,000. The list changed
// between the walks, so a page of a walk cut from a window the walk
// before read shows the list as it was before the walk began. Read-ahead
// keeps its use: with it on, a walk by pages far below the backend's
// limit costs the backend fewer calls than two thirds of its pages (by
// page or offset; keyset lists are not read ahead).
func TestWalksBackToBack(t *testing.T) {
	o := walkSetups{short: true, long: true}
	if caddymodule.RaceEnabled { // raceEnabled: .ci/run walks the long lists and large pages without -race
		o.long, o.maxPerPage = false, 100
	}
	eachWalkSetup(t, o, func(t *testing.T, s *churnedWalks, perPage, _ int) {
		for n := range 2 {
			w := s.start(fmt.Sprintf("walk %d", n+1), perPage)
			for !w.done {
				s.step(w)
			}
			s.finish(w)
			if s.readahead && perPage <= 7 && !s.e.paging.Keysets() {
				// Fewer calls than two thirds of the pages: without
				// read-ahead a walk costs a call a page at least. (A
				// keyset list is not read ahead: its answers are never
				// kept as windows, which no check would see.)
				assert.Less(t, 3*w.calls, 2*int64(w.pages), "%s: read-ahead serves most pages (%d calls, %d pages)", w.name, w.calls, w.pages)
			}
		}
	})
}

// TestWalksRestarted: one caller walks the first eighth of a long list,
// gives up and walks it again from its first page, as a client
// restarting a walk does. The windows of the walk given up lie where the
// new walk begins. (On a short list a restart is a back-to-back walk; so
// it has long lists only, and runs without -race only.)
func TestWalksRestarted(t *testing.T) {
	if caddymodule.RaceEnabled { // raceEnabled: .ci/run runs it again without -race
		t.Skip("walks long lists only, which -race leaves out (walkSetups)")
	}
	eachWalkSetup(t, walkSetups{long: true}, func(t *testing.T, s *churnedWalks, perPage, pages int) {
		w := s.start("walk given up", perPage)
		for range max(2, pages/8) {
			s.step(w)
		}
		w = s.start("walk restarted", perPage)
		for !w.done {
			s.step(w)
		}
		s.finish(w)
	})
}

// TestWalksInterleaved: the same caller starts a walk while its last is
// mid-list (a second job on the same key, or a restarted client while
// the old one still runs): three walks, each starting when the one
// before is a third of the way through, their pages taking turns. (A
// walk of 1,000 a page is over before another can start.)
func TestWalksInterleaved(t *testing.T) {
	o := walkSetups{short: true, maxPerPage: 250}
	if caddymodule.RaceEnabled { // raceEnabled: .ci/run walks every page size without -race
		o.maxPerPage = 100
	}
	eachWalkSetup(t, o, func(t *testing.T, s *churnedWalks, perPage, pages int) {
		s.interleaved(perPage, pages)
	})
}

// interleaved runs TestWalksInterleaved's three walks of the list of
// pages at perPage, each checked as it ends, and returns them.
func (s *churnedWalks) interleaved(perPage, pages int) []*walk {
	var (
		walks, all []*walk
		started    int
	)
	for started < 3 || len(walks) > 0 {
		if started < 3 && (len(walks) == 0 || walks[len(walks)-1].pages >= max(2, pages/3)) {
			started++
			walks = append(walks, s.start(fmt.Sprintf("walk %d", started), perPage))
			all = append(all, walks[len(walks)-1])
		}
		for _, w := range walks {
			s.step(w)
			if w.done {
				s.finish(w)
			}
		}
		walks = slices.DeleteFunc(walks, func(w *walk) bool { return w.done })
	}
	return all
}

// TestWalksAlternatingWindowAndBackend: after a plain walk, the same
// caller walks again with every other page sent with Cache-Control:
// no-cache, so that its pages alternate between backend calls and
// whatever windows the gateway holds for the caller: the second walk
// from its second page (the second, the fourth, ...), the third from its
// third.
func TestWalksAlternatingWindowAndBackend(t *testing.T) {
	o := walkSetups{short: true}
	if caddymodule.RaceEnabled { // raceEnabled: .ci/run walks every page size without -race
		o.maxPerPage = 100
	}
	eachWalkSetup(t, o, func(t *testing.T, s *churnedWalks, perPage, _ int) {
		for n := range 3 {
			w := s.start(fmt.Sprintf("walk %d", n+1), perPage)
			for !w.done {
				if n > 0 && w.pages > 0 && (w.pages+n)%2 == 0 {
					s.step(w, "Cache-Control", "no-cache")
				} else {
					s.step(w)
				}
			}
			s.finish(w)
		}
	})
}
