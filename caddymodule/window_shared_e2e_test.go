package caddymodule_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/legacy/reference"
)

// TestWindowPagesAreCopies: a read-ahead window is one backend answer
// that many requests of its caller cut pages from at once, and the page
// that read it is written while others are cut. None of them may write
// into the answer's bytes (as a page written in place would, putting its
// brackets where the answer had commas): run with -race, pages cut at
// once from one window are each exactly their records, in valid JSON.
func TestWindowPagesAreCopies(t *testing.T) {
	c, b, rec := startGateway(t, reference.Config{Seed: 3, Records: 400}, "")
	all := strIDs(b.IDs("calls"))
	const perPage = 7
	first := get(t, c.URL+"/calls?_perPage="+strconv.Itoa(perPage))
	require.Equal(t, http.StatusOK, first.status)
	second := get(t, c.URL+"/calls?_perPage="+strconv.Itoa(perPage)+"&_cursor="+first.header.Get("next_page_cursor"))
	require.Equal(t, http.StatusOK, second.status, "the walk continues: a window is read")
	rec.reset()

	// Pages of other sizes after cursors the window holds, each asked
	// for by many requests at once, each on a connection of its own (one
	// connection would serve them one after another): every one is cut
	// from the window read with page 2, and pages that overlap are
	// written at the same time.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	var wg sync.WaitGroup
	for i := range 48 {
		at := perPage + i%(2*perPage) // a cursor inside the window
		size := 2 + i%5
		wg.Go(func() {
			resp, err := client.Get(c.URL + "/calls?_perPage=" + strconv.Itoa(size) + "&_cursor=" + cursorFor(all[at-1]))
			if !assert.NoError(t, err) {
				return
			}
			defer resp.Body.Close()
			var page []struct {
				ID json.Number `json:"id"`
			}
			dec := json.NewDecoder(resp.Body)
			dec.UseNumber()
			assert.Equal(t, http.StatusOK, resp.StatusCode)
			if !assert.NoError(t, dec.Decode(&page), "valid JSON") {
				return
			}
			var got []string
			for _, r := range page {
				got = append(got, r.ID.String())
			}
			assert.Equal(t, all[at:at+size], got, "%d records after record %d", size, at)
		})
	}
	wg.Wait()
	assert.Empty(t, rec.requests(), "every page from the window")
}
