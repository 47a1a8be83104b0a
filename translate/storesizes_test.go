package translate

import (
	"context"
	"time"

	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/helpdesk-gateway/gateway/liststore"
)

// What the store (package liststore) counts for a list's object, its
// learned state and samples' handle included, and for a chain entry of a
// one-byte id, as its Stats show them: the figures docs/operating.md
// gives and the memory tests hold the heap to.
var listBytes, chainBytes = storeSizes()

func storeSizes() (list, chain int64) {
	s := trustedStore(cursor.Numeric, time.Hour, 1<<40)
	s.stateOf("l")
	list = s.Stats().Bytes - int64(len("l"))
	now := time.Unix(1_800_000_000, 0)
	s.Walked(context.Background(), "l", liststore.Walked{Last: "1", More: true, At: now, Now: now})
	return list, s.Stats().Bytes - list - int64(len("l")) - int64(len("1"))
}

// storedWindow is a window of s that holds bytes alive, as the engine
// keeps one (Engine.keepBytes).
func storedWindow(s liststore.Span, bytes int64) *liststore.StoredWindow {
	w := &liststore.StoredWindow{Span: s}
	w.SetSource(nil, bytes)
	return w
}
