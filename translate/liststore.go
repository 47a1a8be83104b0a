package translate

import (
	"sync"
	"time"

	"github.com/helpdesk-gateway/gateway/liststore"
)

// What the gateway keeps about a caller's list lives in package liststore:
// one object per list identity, under the identity in full and under one
// bound in bytes, with the walks the engine served and their read-ahead
// windows. The engine's own part of each object (listObj) is what the
// list's backend taught (listState), which stays in the instance that
// learned it, and its position samples (positions.go), hints the Index
// finds there.
//
// The contract types are liststore's, named here too so that the engine's
// API reads as one: a WalkStore (Engine.Walks; redisstore's, shared by
// instances) keeps walks and windows, and a ListStore (Engine.Lists) is
// the instance's own object per list, and, unless the engine is given
// another WalkStore, the walks and windows too.
type (
	// WalkStore keeps the walks a gateway serves and their read-ahead
	// windows (readahead.go): see liststore.WalkStore.
	WalkStore = liststore.WalkStore
	// CutQuery is a page's first question to the store.
	CutQuery = liststore.CutQuery
	// CutResult is the store's answer to a CutQuery.
	CutResult = liststore.CutResult
	// Walked is a page served, as the store records it.
	Walked = liststore.Walked
	// Walk is the read-ahead state of one walk.
	Walk = liststore.Walk
	// StoredWindow is one backend answer kept as a read-ahead window.
	StoredWindow = liststore.StoredWindow
	// WindowData is a window as plain data, for a WalkStore that keeps it
	// outside the instance.
	WindowData = liststore.WindowData
	// WindowStats is what the admin endpoint and the metrics show of a
	// store.
	WindowStats = liststore.WindowStats
)

// NewStoredWindow makes a window a WalkStore read back as plain data: see
// liststore.NewStoredWindow.
func NewStoredWindow(d WindowData, source, ref any) *StoredWindow {
	return liststore.NewStoredWindow(d, source, ref)
}

// ListStore is the instance's own object per list identity: the learned
// state and the position samples, which are hints each instance learns
// from its own answers, and the walks and windows (WalkStore).
type ListStore interface {
	// learned returns what the list's backend taught, made when new. It
	// is the one piece of state an instance keeps in its own memory
	// whatever the store (clamps and keyset trust are learned from this
	// instance's answers), hence unexported.
	learned(list string) *listState
	WalkStore
}

// MemoryStore is the ListStore of one instance: a liststore.Memory whose
// objects hold the engine's own part of each list (listObj), which it
// counts in its one bound and drops with the list. Its methods but
// learned and Index are liststore.Memory's.
type MemoryStore struct {
	*memory
	order Order
}

// memory is the store MemoryStore is, named so that its field stays
// unexported.
type memory = liststore.Memory[listObj]

// listObj is the engine's part of one list identity's object.
type listObj struct {
	learned listState
	pos     *positions // the position index's samples; nil before its first learning
}

// Interface guard
var _ ListStore = (*MemoryStore)(nil)

// NewMemoryStore returns a store whose windows and chain entries live for
// ttl and whose lists hold at most memory bytes in all. A ttl of 0 or
// less keeps no window and no chain: read-ahead is off, and the store
// holds the lists' learned state only.
func NewMemoryStore(order Order, ttl time.Duration, memory int64) *MemoryStore {
	return &MemoryStore{memory: liststore.NewMemory(order.Compare, ttl, memory, liststore.Owner[listObj](listOwner{})), order: order}
}

func (s *MemoryStore) learned(name string) *listState {
	return &s.Own(name, true, nil).learned
}

// listState is what the engine learns of one list identity's backend:
// the page sizes its answers proved (pageSizes) and whether it kept the
// keyset condition (keyset, read and written under mu).
//
// It is per list identity, not per endpoint, because a list identity is
// one caller's view: a caller whose own parameter makes the backend answer
// short must teach that limit to its own walks only, never to another
// caller's (SECURITY.md, "Limits and their defaults": the learned page
// limit).
type listState struct {
	sizes pageSizes

	mu    sync.Mutex
	keyed keyset
}
