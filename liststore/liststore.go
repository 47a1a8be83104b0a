// Package liststore keeps what the gateway holds per caller's list, under
// one bound in bytes: the walks it served and their read-ahead windows,
// and, opaque to it, the paging engine's own state of each list (package
// translate: learned page sizes, keyset trust, position samples).
//
// A list identity is one caller's view of one list: the endpoint, the
// caller's own parameters and a hash of its headers. All the gateway keeps
// of it is one object, under the identity in full (never a hash: its
// windows are content) and under the store's one bound in bytes:
//
//   - the engine's own state (Memory's type parameter): what the list's
//     backend taught, and its position samples, which are hints that
//     every answer verifies, not content. They stay in the instance that
//     learned them, and go when the store evicts the list (Owner).
//   - its walk chains: for each page served with more after it, an entry
//     under the page's last id that holds the time of the answer that
//     record came from, and the walk's read-ahead size and pace. They are
//     what lets a cursor continue a walk, and what the walk rule
//     (walk.go) checks a window against. An entry lives for the TTL from
//     the page that made it.
//   - its read-ahead windows: backend answers that hold more of the list
//     than the page that read them, each with the time its call began.
//     They serve for the TTL from that time.
//
// WalkStore is the walks and their windows alone, the part a store shared
// by several instances (redisstore) keeps: each of its methods is one
// atomic operation on one list identity, one round trip for such a store,
// and windows go in and out of it as plain data (WindowData) with what the
// fetcher composes pages from (StoredWindow.Source). Memory is the
// instance's own store of every list's object.
//
// The package knows ids only through the compare func it is given, and
// imports nothing of the engine: translate imports it, never the reverse.
package liststore

import (
	"context"
	"time"
)

// WalkStore keeps the walks a gateway serves and their read-ahead
// windows, and keeps the walk rule (walk.go) for them. A store that
// fails answers as one that holds nothing: a page it cannot serve is read
// from the backend, and one it cannot record makes no chain entry, nor
// leaves an older walk's entry for its last record to continue its walk
// (redisstore's fence).
type WalkStore interface {
	// Cut answers a page's first question: does its cursor continue a
	// walk (a live chain entry), and if so and the request allows, which
	// window the walk rule admits holds the page, or its first records.
	Cut(ctx context.Context, list string, q CutQuery) CutResult
	// Walked records a page served: its chain entry, when more follows
	// it, and the answer kept as a window, if any.
	Walked(ctx context.Context, list string, w Walked)
	// TTL is how long a window or a chain entry lives; 0 turns read-ahead
	// off.
	TTL() time.Duration
}

// AheadClaimer is a WalkStore shared by instances (redisstore) that
// tells them of each other's reads ahead: asked by a Cut with
// CutQuery.Ahead, it gives the marker (CutResult.Ahead) only to the
// instance that claims the read, in the same call, so that the read is
// made once whichever instances serve the walk's pages; DoneAhead must
// follow. An instance that serves the walker's page at the window's end
// while another reads its rest waits for that read (AwaitAhead) instead
// of making it again.
type AheadClaimer interface {
	WalkStore
	// DoneAhead marks the read ahead after the cursor over, whatever it
	// kept, waking the instances that wait for it.
	DoneAhead(ctx context.Context, list, after string)
	// AwaitAhead waits, for at most the store's own short bound, for a
	// read ahead in flight after the cursor, and reports whether there
	// was one.
	AwaitAhead(ctx context.Context, list, after string) bool
}

// WindowCopier is a WalkStore that copies what it keeps of a window (its
// records, and what it needs of its Source) in Walked and holds nothing
// of it after (redisstore): the engine then lends it the answer (the
// fetcher's Lender) instead of taking it from the fetcher for good.
type WindowCopier interface {
	WalkStore
	CopiesWindows()
}

// CutQuery is a page's first question to the store.
type CutQuery struct {
	After string    // the cursor id; "" for a first page or an offset
	Size  int       // the page's records
	Fresh bool      // the caller asked for the backend's own answer
	Now   time.Time // when the page began
	// Ahead says the engine can read the walk's next window ahead now: a
	// store shared by instances then claims that read for this one when
	// the page is a window's marker (AheadClaimer).
	Ahead bool
	// Probe says the cursor is the engine's own (the last record of a
	// window's head, or of a window read ahead), not a client's: a store
	// that proves walks stay on it (stay.go) does not count it.
	Probe bool
}

// CutResult is the store's answer to a CutQuery.
type CutResult struct {
	// At is the time the walk rule gives the answers this page reads
	// (Walked.At): the time of this Cut on the store's clock, which is no
	// later than any of the page's calls. Zero when the store took none
	// (a first page): the store then takes its own time when it records
	// the page, after its calls, which can only admit fewer windows.
	At time.Time
	// Continues says the cursor is the last record of a page the store
	// served a live chain entry for; Walk and Made are then that entry's
	// walk and the time its page was served.
	Continues bool
	Walk      Walk
	Made      time.Time
	// Window is the admitted window that holds records after the cursor,
	// from its record From on: the whole page (Span.Holds), or only its
	// first records, which the engine stitches the backend's on. nil when
	// no admitted window holds a record after the cursor.
	Window *StoredWindow
	From   int
	// Ahead, when not "", is the cursor the walk's next window is to be
	// read after, now, in the background: the page is the window's marker
	// (Marker), and Ahead the window's last id. AheadAt is that record's
	// offset in the list when the window was read, for the engine's
	// position index, or -1 (a window read by keyset); AheadHead is how
	// many records the window holds after its last whole page, which
	// start the walk's page at the window's end (walk.go).
	Ahead     string
	AheadAt   int
	AheadHead int
}

// Holds reports whether the answer's window holds the whole page of size
// records after the cursor.
func (c *CutResult) Holds(size int) bool { return c.Window != nil && c.Window.Holds(c.From, size) }

// Walked is a page served, as the store records it.
type Walked struct {
	// Last is the page's last id and More whether records followed it:
	// only such a page makes a chain entry.
	Last string
	More bool
	// Size is the page size asked: a shared store cuts the window's
	// pages at it, as the walk's next pages will be asked. First, when
	// not 0, is the size of the window's first page instead: a window
	// read ahead of the walker after the last record of the window before
	// it, whose first page ends the walk's page that starts in that one.
	Size, First int
	// At is the time of the answer the page's last record came from: a
	// window's when the page was cut whole from one, else the page's
	// start, which is no later than any of its calls (see the walk rule).
	At time.Time
	// Now is when the page began: the chain entry lives for the TTL from
	// it.
	Now time.Time
	// Walk is the walk's read-ahead state after this page.
	Walk Walk
	// From is the window the page was cut from, whole or as a head, or
	// nil; Window an answer of this page to keep as a window, or nil. Its
	// bytes are set (StoredWindow.SetSource).
	From, Window *StoredWindow
	// Ahead says the page is a window read ahead of the walker (walk.go),
	// whose cursor Last no client was handed.
	Ahead bool
}
