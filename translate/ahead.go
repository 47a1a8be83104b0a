package translate

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/helpdesk-gateway/gateway/liststore"
)

// Reading ahead of the walker (liststore's walk.go): a page cut from a
// window at its marker (liststore.CutResult.Ahead) starts the read of
// the walk's next window in the background, so that the walker's page at
// the window's end is cut from a window as the pages before it were,
// instead of waiting for the backend's larger answer and for the store
// to keep it. That read is a page's read at the window's last cursor, with the
// read-ahead the walk would ask there, recorded as a page ending at that
// cursor; it needs a fetcher that outlives the request (Detacher).

// Detacher is a Fetcher that can make its calls after the request that
// made it returned, for a read ahead of the walker.
type Detacher interface {
	// Detach returns a fetcher that makes the same calls as this one,
	// for the same caller, with its own copy of what it sends, and the
	// context its calls are made in, which ends with the gateway or a
	// deadline, never with the client's request. done is called once,
	// with the read's error, when the engine no longer uses the fetcher
	// or anything read through it (what the store keeps it was given by
	// Keeper or Lender). ok is false when the fetcher cannot detach.
	Detach() (f Fetcher, ctx context.Context, done func(error), ok bool)
}

// DefaultMaxAhead bounds the reads ahead in the background at once when
// Engine.MaxAhead is 0: past it, a window's end is read when the walker
// gets there, as without reading ahead.
const DefaultMaxAhead = 32

// aheadKey names a read ahead in flight: the list and the cursor it
// reads after.
type aheadKey struct{ list, after string }

// canAhead reports whether the page's fetcher could read ahead now.
func (e *Engine) canAhead(f Fetcher) bool {
	_, ok := f.(Detacher)
	return ok && int(e.aheadN.Load()) < e.maxAhead()
}

func (e *Engine) maxAhead() int {
	if e.MaxAhead < 1 {
		return DefaultMaxAhead
	}
	return e.MaxAhead
}

// readAhead starts the read of a walk's next window after the last
// record of the window the page was cut from (c.Ahead), in the
// background, unless the fetcher cannot detach, as many reads are in
// flight as MaxAhead allows, or one is in flight there.
func (e *Engine) readAhead(f Fetcher, list string, c liststore.CutResult, size int, walk liststore.Walk) {
	key := aheadKey{strings.Clone(list), strings.Clone(c.Ahead)}
	wait := make(chan struct{})
	d, ok := f.(Detacher)
	if ok && e.aheadN.Add(1) > int32(e.maxAhead()) {
		e.aheadN.Add(-1)
		ok = false
	}
	if ok {
		if _, busy := e.ahead.LoadOrStore(key, wait); busy {
			e.aheadN.Add(-1)
			ok = false
		}
	}
	var (
		df   Fetcher
		ctx  context.Context
		done func(error)
	)
	if ok {
		if df, ctx, done, ok = d.Detach(); !ok {
			e.ahead.Delete(key)
			close(wait)
			e.aheadN.Add(-1)
		}
	}
	cl, claims := e.walks().(liststore.AheadClaimer) // then c.Ahead is this instance's read
	if !ok {
		e.dropAhead(key.list, key.after)
		return
	}
	// The walk's page at the window's end starts with the window's last
	// records; the new window's first page is that page's rest.
	first := size - c.AheadHead
	if first < 1 {
		first = size
	}
	at := c.AheadAt
	var prev string // the record before c.Ahead, when the window cut holds it
	if w := c.Window; w != nil && len(w.IDs) > 1 && w.IDs[len(w.IDs)-1] == c.Ahead {
		prev = strings.Clone(w.IDs[len(w.IDs)-2])
	}
	e.aheadWG.Add(1)
	read := func() {
		var err error
		defer e.aheadWG.Done()
		defer func() {
			if v := recover(); v != nil { // a background read must not take the process down
				err = fmt.Errorf("read ahead: panic: %v", v)
			}
			if claims {
				cl.DoneAhead(context.WithoutCancel(ctx), key.list, key.after)
			}
			e.ahead.Delete(key)
			close(wait)
			e.aheadN.Add(-1)
			done(err)
		}()
		err = e.prefetch(ctx, df, key, prev, at, size, first, walk)
	}
	if e.spawn != nil {
		e.spawn(read)
		return
	}
	go read()
}

// dropAhead tells a store that claims reads ahead that the one it gave
// this instance after the cursor is not made, so that no walker waits for
// it.
func (e *Engine) dropAhead(list, after string) {
	if cl, ok := e.walks().(liststore.AheadClaimer); ok {
		go cl.DoneAhead(context.Background(), strings.Clone(list), strings.Clone(after))
	}
}

// prefetch reads the walk's next window after the cursor k.after (the
// last record of the window the walk is in, at offset at in the list,
// or -1, after prev when known), as a page there would with the
// read-ahead the walk asks, and
// records it as a page ending at that cursor would be: a chain entry
// whose time is the read's start (the store's clock, from a Cut made
// before its calls), and the window, its first page first records long.
// It reads nothing when a live chain entry is there already (a page of
// the walk ended there, or another instance read ahead): that entry's
// window or the walker's own read serves the walk.
func (e *Engine) prefetch(ctx context.Context, f Fetcher, k aheadKey, prev string, at, size, first int, walk liststore.Walk) error {
	walks := e.walks()
	now, ttl := e.now(), walks.TTL()
	// Fresh: the store's answer without a cut, so that asking moves
	// nothing (no page served, no entry written past it).
	c := walks.Cut(ctx, k.list, liststore.CutQuery{After: k.after, Size: size, Fresh: true, Now: now, Probe: true})
	if c.Continues || c.At.IsZero() {
		return nil
	}
	ahead := walk.Ahead(size, e.MaxPageSize, ttl)
	if ahead == 0 {
		return nil
	}
	if at >= 0 {
		// Where the window said its last record was: the read is planned
		// from there, as from an answer's edge, and its answer checks it.
		e.learn(k.list, []string{k.after}, at, false, nil)
	}
	ls := e.store().stateOf(k.list)
	// The page the read serves first is the rest of the walker's page at
	// the window's end: first records, which a backend that pages by
	// number can more often send in one answer with the read-ahead than a
	// whole page (a page stitched from two answers keeps only the last,
	// which holds no record at or below the cursor).
	req := Request{List: k.list, After: k.after, Size: first}
	_, run, err := e.ask(ctx, f, ls, req, ahead, head{}, prev)
	if err != nil || run == nil {
		return err
	}
	if !run.FromStart && e.Order.Compare(k.after, run.Floor) < 0 {
		return nil // a page stitched from two answers: the last holds no record at or below the cursor
	}
	e.keepBytes(f, run)
	walks.Walked(ctx, k.list, liststore.Walked{Last: k.after, More: true, Size: size, First: first,
		At: c.At, Now: now, Walk: walk, Window: run, Ahead: true})
	return nil
}

// headAhead serves a page that starts with a window's last records (h)
// from the window read ahead after them, when the walk rule admits it,
// instead of the backend: the head's last record is the cursor that
// window continues (prefetch), read no earlier than the head's window.
// It waits for that read when it is in flight here. It returns the page,
// the window its rest came from and the walk as that read left it (the
// size it grew to), or nil.
func (e *Engine) headAhead(ctx context.Context, ls *listState, req Request, h head, walk liststore.Walk, now time.Time) (*Page, *liststore.StoredWindow, liststore.Walk) {
	ids := h.ids()
	if len(ids) == 0 {
		return nil, nil, walk
	}
	x := ids[len(ids)-1]
	e.awaitAhead(ctx, req.List, x, ls.readTime.bound())
	walks := e.walks()
	q := liststore.CutQuery{After: x, Size: req.Size, Now: now, Probe: true}
	c := walks.Cut(ctx, req.List, q)
	if cl, ok := walks.(liststore.AheadClaimer); ok && !c.Continues && cl.AwaitAhead(ctx, req.List, x) {
		c = walks.Cut(ctx, req.List, q) // another instance read it ahead meanwhile
	}
	need := req.Size - len(ids)
	w := c.Window
	if w == nil || !w.Holds(c.From, need) || w.At.Before(h.w.At) {
		return nil, nil, walk
	}
	pg := &Page{Source: -1, Stored: w}
	h.start(pg)
	pg.add(w.IDs, w.Records, c.From, c.From+min(need, len(w.IDs)-c.From))
	pg.More = len(w.IDs)-c.From > need
	walk.Size = max(walk.Size, c.Walk.Size)
	return pg, w, walk
}

// WaitAhead waits for the reads ahead in flight (started before the
// call) to end: for tests, and for whatever stops using the engine and
// its store.
func (e *Engine) WaitAhead() { e.aheadWG.Wait() }

// awaitAhead waits for a read ahead in flight after the cursor after, if
// there is one, for at most bound: the walker got there first, and the
// read it would make is that one, unless the backend is slow to answer
// it. Past bound the page reads for itself.
func (e *Engine) awaitAhead(ctx context.Context, list, after string, bound time.Duration) {
	v, ok := e.ahead.Load(aheadKey{list, after})
	if !ok {
		return
	}
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case <-v.(chan struct{}):
	case <-ctx.Done():
	case <-t.C:
	}
}

// readTime is a list's backend read time (a page's or a read ahead's),
// smoothed, in nanoseconds: how long a page waits for a read ahead it did
// not start (bound) is four of them, from 20 ms to 1 s (1 s before any is
// seen). A read ahead slower than that is a backend slow on one answer,
// and the page's own read, which asks less, is no slower. Concurrent
// reads may lose one's share: it scales a bound, it measures nothing.
type readTime struct{ ns atomic.Int64 }

func (r *readTime) observe(d time.Duration) {
	if old := r.ns.Load(); old != 0 {
		d = time.Duration(old) + (d-time.Duration(old))/4
	}
	r.ns.Store(max(int64(d), 1))
}

func (r *readTime) bound() time.Duration {
	if ns := r.ns.Load(); ns != 0 {
		return min(max(4*time.Duration(ns), 20*time.Millisecond), time.Second)
	}
	return time.Second
}
