package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/helpdesk-gateway/gateway/translate"
)

// driver is the clients of one phase. Each client walks the list from its
// first page to its last and starts over, one request at a time, or, when
// random, asks for one page after another at random places.
type driver struct {
	base    string // the list's URL
	cursor  bool   // walk by _cursor; else by _page
	windows bool   // walk by the gateway's backend windows (Window)
	perPage int
	records int // records in the list, which does not change
	client  *http.Client

	key    string   // the API key of every client; "" for one of each its own
	random bool     // pages at random places, no continuations
	ids    []string // the list's ids in order, for cursors the clients build
}

// load is what the clients of one run did.
type load struct {
	requests, errors, bytes, served int64
	latencies                       []time.Duration
	firstError                      error
}

// run drives the target with clients for d and returns when every client
// has finished its last request.
func (dr *driver) run(ctx context.Context, clients int, d time.Duration) load {
	deadline := time.Now().Add(d)
	var (
		mu    sync.Mutex
		total load
		wg    sync.WaitGroup
	)
	for i := range clients {
		wg.Go(func() {
			key := dr.key
			if key == "" {
				key = "client-" + strconv.Itoa(i)
			}
			start := 0
			if dr.key != "" {
				// One caller's walkers split the list between them.
				start = i * ((dr.records + dr.perPage - 1) / dr.perPage) / clients
			}
			l := dr.client1(ctx, deadline, key, start, uint64(i))
			mu.Lock()
			defer mu.Unlock()
			total.requests += l.requests
			total.errors += l.errors
			total.bytes += l.bytes
			total.served += l.served
			total.latencies = append(total.latencies, l.latencies...)
			if total.firstError == nil {
				total.firstError = l.firstError
			}
		})
	}
	wg.Wait()
	return total
}

// client1 is one client until deadline, sending key. By default each
// client sends its own API key, as separate callers do: the gateway keeps
// its read-ahead windows and learned state per caller. With a shared key
// (Config.SharedKey) the clients are one caller's workers, whose walks
// the gateway keeps apart by their cursors alone; each starts its first
// walk at page start (0-based) by _page, as the workers of a parallel
// export split the list (a cursor built by hand there, while another
// worker of the caller walks the list, would stand the gateway's
// read-ahead down: docs/operating.md, "Behind a balancer"), and its next
// walks at the first page.
func (dr *driver) client1(ctx context.Context, deadline time.Time, key string, start int, seed uint64) load {
	l := load{latencies: make([]time.Duration, 0, 1<<14)}
	pages := (dr.records + dr.perPage - 1) / dr.perPage
	page, pageCursor := start, ""   // the next page of the walk, 0-based, and its cursor
	byPage := page > 0 && dr.cursor // the first page of a walk that starts inside the list
	r := rand.New(rand.NewPCG(seed, uint64(dr.perPage)))
	var body bytes.Buffer
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if dr.random {
			// A page anywhere: by a cursor the client builds from the
			// id before it, as a parallel export splitting the list does.
			page, pageCursor = r.IntN(pages), ""
			if page > 0 {
				pageCursor = cursor.Encode(dr.ids[page*dr.perPage-1])
			}
		}
		target := dr.base + "?_perPage=" + strconv.Itoa(dr.perPage)
		switch {
		case dr.windows:
			w := gatewayWindow(page, dr.perPage)
			target = dr.base + "?_sortField=id&_sortDir=ASC&_page=" + strconv.Itoa(w.Page()) + "&_perPage=" + strconv.Itoa(w.Size)
		case !dr.cursor:
			target += "&_sortField=id&_sortDir=ASC&_page=" + strconv.Itoa(page+1)
		case byPage:
			target += "&_page=" + strconv.Itoa(page+1)
			byPage = false
		case pageCursor != "":
			target += "&_cursor=" + url.QueryEscape(pageCursor)
		}
		start := time.Now()
		next, err := dr.getAs(ctx, target, key, &body)
		elapsed := time.Since(start)
		if err == nil && dr.cursor && (next == "") != (page == pages-1) {
			err = fmt.Errorf("%s: the walk of %d pages has next_page_cursor %q on page %d", target, pages, next, page+1)
		}
		if err != nil {
			l.errors++
			if l.firstError == nil {
				l.firstError = err
			}
			page, pageCursor = 0, ""
			continue
		}
		l.requests++
		l.bytes += int64(body.Len())
		l.served += int64(min(dr.perPage, dr.records-page*dr.perPage))
		l.latencies = append(l.latencies, elapsed)
		page, pageCursor = page+1, next
		if page == pages {
			page, pageCursor = 0, ""
		}
	}
	return l
}

// gatewayMaxPerPage is the gateway's default backend_max_per_page, the
// cap of its windows.
const gatewayMaxPerPage = 1000

// gatewayWindow is the backend call the gateway makes for page (0-based)
// of a sequential walk with a warm index: the first page and the record
// after it; then the cursor's own record, the page and one more.
func gatewayWindow(page, perPage int) translate.Window {
	if page == 0 {
		return translate.PlanWindow(0, perPage+1, gatewayMaxPerPage)
	}
	at := page*perPage - 1 // the cursor's record
	return translate.PlanWindow(at, at+perPage+2, gatewayMaxPerPage)
}

// get fetches target into body and returns its next_page_cursor.
func (dr *driver) get(ctx context.Context, target string, body *bytes.Buffer) (string, error) {
	return dr.getAs(ctx, target, "", body)
}

// getAs is get with an X-Api-Key header, unless key is empty.
func (dr *driver) getAs(ctx context.Context, target, key string, body *bytes.Buffer) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return "", err
	}
	if key != "" {
		req.Header.Set("X-Api-Key", key)
	}
	resp, err := dr.client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body.Reset()
	if _, err := body.ReadFrom(resp.Body); err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK || body.Len() < 2 || body.Bytes()[0] != '[' {
		return "", fmt.Errorf("%s: %s: %.200s", target, resp.Status, body.Bytes())
	}
	return resp.Header.Get("Next_page_cursor"), nil
}

// listIDs reads the ids of the list at base (the backend's list URL) in
// id order, by _page: clients build cursors from them, for random pages
// and for the first pages of one caller's walkers.
func listIDs(ctx context.Context, client *http.Client, base string, records int) ([]string, error) {
	const perPage = 1000
	ids := make([]string, 0, records)
	var body bytes.Buffer
	for page := 1; ; page++ {
		u := base + "?_sortField=id&_sortDir=ASC&_perPage=" + strconv.Itoa(perPage) + "&_page=" + strconv.Itoa(page)
		if _, err := (&driver{client: client}).get(ctx, u, &body); err != nil {
			return nil, err
		}
		var recs []struct{ ID json.Number }
		if err := json.Unmarshal(body.Bytes(), &recs); err != nil {
			return nil, fmt.Errorf("%s: %v", u, err)
		}
		for _, r := range recs {
			ids = append(ids, r.ID.String())
		}
		if len(recs) < perPage {
			break
		}
	}
	if len(ids) != records {
		return nil, fmt.Errorf("the backend's list has %d records, not %d", len(ids), records)
	}
	return ids, nil
}
