package translate

import (
	"time"

	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/helpdesk-gateway/gateway/liststore"
)

// What the engine keeps per list identity lives in package liststore, one
// object per identity under one bound in bytes, with the walks it served
// and their read-ahead windows, and so do the contracts of the stores that
// keep them: a liststore.WalkStore (Engine.Walks, shared by instances in
// redisstore) keeps walks and windows; a ListStore (Engine.Lists) is the
// instance's own object per list as well.

// ListStore is the instance's own object per list identity: the learned
// state and the position samples, which are hints each instance learns
// from its own answers, and the walks and windows (liststore.WalkStore).
type ListStore interface {
	// stateOf returns what the list's backend taught, made when new. It
	// is the one piece of state an instance keeps in its own memory
	// whatever the store (clamps and keyset trust are learned from this
	// instance's answers), hence unexported.
	stateOf(list string) *listState
	liststore.WalkStore
}

// MemoryStore is the ListStore of one instance: a liststore.Memory whose
// objects hold the engine's own part of each list (listObj: what the
// list's backend taught, which stays in the instance that learned it, and
// its position samples, hints the Index finds there), counted in its one
// bound and dropped with the list. Its methods but learned and Index are
// liststore.Memory's.
type MemoryStore struct {
	liststore.Memory[listObj]
	order cursor.Order
}

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
func NewMemoryStore(order cursor.Order, ttl time.Duration, memory int64) *MemoryStore {
	compare := compares[cursor.Numeric]
	if order == cursor.Lexical {
		compare = compares[cursor.Lexical]
	}
	s := &MemoryStore{order: order}
	s.Init(compare, ttl, memory, listOwner{})
	return s
}

// compares are the orders' Compare as the funcs a store keeps, made once
// so that making a store costs no closure.
var compares = [...]func(a, b string) int{cursor.Numeric: cursor.Numeric.Compare, cursor.Lexical: cursor.Lexical.Compare}

func (s *MemoryStore) stateOf(name string) *listState {
	return &s.Own(name, true, nil).learned
}

// listState is what the engine learns of one list identity's backend:
// the page sizes its answers proved (pageSizes) and whether it kept the
// keyset condition (keyset, which takes its own lock).
//
// It is per list identity, not per endpoint, because a list identity is
// one caller's view: a caller whose own parameter makes the backend answer
// short must teach that limit to its own walks only, never to another
// caller's (SECURITY.md, "Limits and their defaults": the learned page
// limit).
type listState struct {
	sizes    pageSizes
	readTime readTime // how long its reads take, for the wait on a read ahead

	keyed keyset
}
