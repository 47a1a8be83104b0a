package liststore

import "time"

// Span is a run of the list as one backend answer held it: the one kind
// of answer the engine cuts pages from, a backend call's as a page reads
// it and a read-ahead window's (StoredWindow), which is such an answer
// kept for the pages after. Its fields are exported because the engine
// (translate) reads and builds spans as much as the store keeps them.
type Span struct {
	IDs     []string
	Records [][]byte // parallel to IDs; nil when the fetcher gave none
	// Start is the offset of IDs[0], or -1 for an answer read by keyset.
	Start int
	// A kept span holds every record of the list above Floor (or from
	// the list's start) up to its last id: the cursors it can serve.
	Floor     string
	FromStart bool
	Ended     bool      // the list ended after the span
	Call      int       // the page's call that read it (translate's Keeper, Releaser)
	At        time.Time // when the page that read it began; set when kept
}

// Holds reports whether the span's records from k on hold a page of
// size records and the one after it, or run to the list's end: the page
// is then cut whole from it. Fewer are a head (see Memory.Cut).
func (s *Span) Holds(k, size int) bool { return len(s.IDs)-k > size || s.Ended }

// StoredWindow is one backend answer kept as a read-ahead window: a span,
// with what the store keeps of it.
type StoredWindow struct {
	Span

	list   *List
	bytes  int64
	source any
	ref    any
	// unread is how many of its records followed the page that read it,
	// and read how many of those pages took since; tip is the chain
	// entry of the last page served from it, which a drop of the window
	// mostly unread backs off (see Walk).
	unread, read int
	tip          string
	// reach is the index of the furthest record a page served from the
	// window (or the page that read it) ended at; -1 for a window read
	// ahead that served none yet. A client's cursor past it, inside the
	// window, is a sign that its walk went on elsewhere (stay.go).
	reach int
}

// SetSource records what the fetcher kept of the window's answer (see
// Source) and the bytes it holds alive, which the store's bound counts,
// before the window is kept.
func (w *StoredWindow) SetSource(source any, bytes int64) { w.source, w.bytes = source, bytes }

// Source is what the fetcher's Keeper returned for the window's answer,
// or what a shared store made of it again (NewStoredWindow).
func (w *StoredWindow) Source() any { return w.source }

// WindowData is a window as plain data, for a WalkStore that keeps it
// outside the instance (redisstore): whatever keeps a window this way
// keeps all of these, or it cannot serve the walk rule or the guarantee.
type WindowData struct {
	IDs     []string
	Records [][]byte // parallel to IDs; nil when the fetcher gave none
	// Start is the offset of IDs[0] in the list when it was read.
	Start int
	// Floor is the cursor at or above which the window can serve (its
	// first id), unless FromStart: it starts the list.
	Floor     string
	FromStart bool
	Ended     bool      // the list ended after the window
	At        time.Time // the time the walk rule gives it (Walked.At)
}

// Data returns the window as plain data. Its slices are the window's:
// they are only read.
func (w *StoredWindow) Data() WindowData {
	return WindowData{IDs: w.IDs, Records: w.Records, Start: w.Start, Floor: w.Floor,
		FromStart: w.FromStart, Ended: w.Ended, At: w.At}
}

// NewStoredWindow makes a window a WalkStore read back as plain data, or
// the part of one it holds after a cursor: source is what the fetcher
// composes pages from (see Source), ref the store's own reference to the
// window (see Ref), which it finds again on Walked.From.
func NewStoredWindow(d WindowData, source, ref any) *StoredWindow {
	return &StoredWindow{Span: Span{IDs: d.IDs, Records: d.Records, Start: d.Start, Floor: d.Floor,
		FromStart: d.FromStart, Ended: d.Ended, At: d.At}, source: source, ref: ref}
}

// Ref is what the WalkStore that made the window (NewStoredWindow) keeps
// to find it again; nil for a window of the instance's own.
func (w *StoredWindow) Ref() any { return w.ref }
