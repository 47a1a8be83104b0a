package translate

import (
	"context"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// keysetList is a backend that answers keyset windows (the records with
// id above After) from a sorted list, and offset windows as memList does.
type keysetList struct{ memList }

func (l *keysetList) Fetch(ctx context.Context, w Window) (Batch, error) {
	if !w.Keyset() {
		return l.memList.Fetch(ctx, w)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls++
	cursor, _ := strconv.ParseInt(w.After, 10, 64)
	i, found := slices.BinarySearch(l.ids, cursor)
	if found {
		i++
	}
	b := Batch{IDs: []string{}}
	for _, id := range l.ids[i:min(i+w.Size, len(l.ids))] {
		b.IDs = append(b.IDs, strconv.FormatInt(id, 10))
	}
	l.fetched += len(b.IDs)
	return b, nil
}

// TestKeysetEmptyPageNamesItsAnswer: a cursor at the list's last record
// is asked by keyset and answered with no record. The page is empty and
// has no more, and like every page read from the backend it must name
// the answer it is cut from (Source), since the caller composes the
// page (its envelope, its headers) from that answer's body.
//
// It fails on the engine as committed (keysetPage sets Source only when
// it takes a record): caddymodule works around it (see serve.go). Run it
// with HELPDESK_KEYSET_BUGS=1 until the engine is fixed, then drop the
// skip.
func TestKeysetEmptyPageNamesItsAnswer(t *testing.T) {
	if os.Getenv("HELPDESK_KEYSET_BUGS") == "" {
		t.Skip("known engine bug, issue 23 (NOTES-23.md); set HELPDESK_KEYSET_BUGS=1 to see it fail")
	}
	l := &keysetList{memList{ids: evenIDs(50)}}
	e := &Engine{Order: Numeric, MaxPageSize: 100, Index: NewIndex(Numeric, 100), Keyset: func(string) error { return nil }}
	pg, err := e.Page(context.Background(), l, Request{List: "/l", After: "500", Size: 10})
	require.NoError(t, err)
	assert.Empty(t, pg.IDs)
	assert.False(t, pg.More)
	assert.True(t, pg.Keyset)
	assert.Equal(t, 0, pg.Source, "the page is cut from the first (empty) answer")
}
