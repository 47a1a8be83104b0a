package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"unsafe"

	"github.com/redis/go-redis/v9"

	"github.com/helpdesk-gateway/gateway/liststore"
)

// ref is a window's reference in this store: the window's name and the
// index in it of the first record a view read back holds, so that the
// chain entry of a page cut from the view points past the page; written
// says cutScript wrote that entry already.
type ref struct {
	win     string
	base    int
	written bool
}

// Cut implements liststore.WalkStore: one round trip, the walk rule's
// checks on the store (cutScript) and the TTL again on this instance's
// clock. A store that fails answers as one that holds nothing.
func (s *Store) Cut(ctx context.Context, list string, q liststore.CutQuery) (c liststore.CutResult) {
	if s.cfg.TTL <= 0 || q.After == "" || !s.usable(q.Now) {
		return c
	}
	base := s.listKey(list)
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	fresh := "0"
	if q.Fresh {
		fresh = "1"
	}
	n, run, err := s.nodeFor(ctx, base)
	if err != nil {
		s.failed("cut", err)
		return c
	}
	if !s.fenceLost(ctx) {
		return c
	}
	claim := int64(0)
	if q.Ahead {
		claim = max(s.cfg.TTL.Milliseconds(), 1) // a read ahead takes no longer than the window would serve
	}
	res, page, err := s.cutCall(ctx, n.client, []string{base + "c:" + q.After, base, base + "q:" + s.callName(), base + "f"},
		run.id, q.Size, fresh, s.cfg.TTL.Microseconds(), strconv.FormatInt(q.Now.UnixNano(), 10), s.cfg.TTL.Nanoseconds(), claim)
	if err != nil {
		s.failed("cut", err)
		return c
	}
	s.answered()
	if n.run.Load() != run {
		// The call reached another server than the run_id it was sent
		// with (a restart, a restore, a failover, learned by the new
		// connection it went through): its entries are not this run's.
		return liststore.CutResult{}
	}
	c, ok := s.cut(list, res, page, q, run)
	if !ok {
		s.failed("cut", fmt.Errorf("unexpected answer to the cut script: %d values", len(res)))
		return liststore.CutResult{}
	}
	return c
}

// callName returns a name for one cut's page on its way, unique among
// every instance's: this store's random name and a count.
func (s *Store) callName() string {
	return s.name + strconv.FormatUint(s.calls.Add(1), 36)
}

// cutCall runs cutScript and the GETDEL of the page it copies, in one
// pipeline: the script's answer, and the page's entries ("" when the
// script copied none).
func (s *Store) cutCall(ctx context.Context, client *redis.Client, keys []string, args ...any) ([]any, string, error) {
	for try := 0; ; try++ {
		pipe := client.Pipeline()
		script := cutScript.EvalSha(ctx, pipe, keys, args...)
		if try > 0 {
			script = cutScript.Eval(ctx, pipe, keys, args...) // loads it too
		}
		page := pipe.GetDel(ctx, keys[2])
		_, _ = pipe.Exec(ctx)
		if err := script.Err(); err != nil {
			if try == 0 && redis.HasErrorPrefix(err, "NOSCRIPT") {
				continue // a store that restarted, or never ran it
			}
			return nil, "", err
		}
		if err := page.Err(); err != nil && err != redis.Nil {
			return nil, "", err
		}
		res, err := script.Slice()
		return res, page.Val(), err
	}
}

// cut reads cutScript's answer and the page it copied; false when it is
// not one.
func (s *Store) cut(list string, res []any, page string, q liststore.CutQuery, r *run) (c liststore.CutResult, ok bool) {
	if len(res) == 0 {
		return c, false // not what the script returns: another server's idea of EVALSHA
	}
	now, ok := res[0].(int64)
	if !ok {
		return c, false
	}
	c.At = stamp(now, r)
	if len(res) == 1 {
		return c, true
	}
	e, err := parseEntry(res[1])
	if err != nil {
		return c, false
	}
	if q.Now.Sub(e.imade) >= s.cfg.TTL {
		return c, true // past the TTL on this instance's clock
	}
	c.Continues, c.Walk, c.Made = true, e.walk, e.imade
	if len(res) == 2 {
		return c, true
	}
	if len(res) == 3 {
		if v, _ := res[2].(string); v == "" && !c.Walk.Backoff {
			// Its window went before the walk read it (expired, evicted
			// or flushed): as a window dropped unread, back off.
			c.Walk.Size, c.Walk.Backoff = max(c.Walk.Size/2, 1), true
		}
		return c, true
	}
	if len(res) != 9 {
		return c, false
	}
	written, _ := res[4].(int64)
	skip, _ := res[5].(int64)
	reaches, _ := res[6].(int64)
	w, m, err := s.view(res[2], res[3], page, int(skip), reaches == 1, e, q, written == 1, r)
	ahead, _ := res[7].(string)
	if err != nil || w == nil {
		if ahead != "" { // the script claimed a read this instance will not make
			go s.DoneAhead(context.Background(), list, ahead)
		}
		return c, err == nil
	}
	c.Window = w
	s.served.Add(1)
	if ahead != "" {
		// The window's marker: the engine reads the walk's next window
		// after the window's last record, at its offset when known.
		head, _ := res[8].(int64)
		c.Ahead, c.AheadHead, c.AheadAt = ahead, int(head), -1
		if m.start >= 0 {
			c.AheadAt = m.start + m.n - 1
		}
	}
	return c, true
}

// view makes the window page that cutScript copied, less its first skip
// records (those up to the cursor), a window the engine cuts from at 0;
// reaches says the page is the window's last. nil when this instance's
// clock says the window is past its TTL or it holds nothing after the
// cursor.
func (s *Store) view(metaV, envV any, raw string, skip int, reaches bool, e entry, q liststore.CutQuery, written bool, r *run) (*liststore.StoredWindow, meta, error) {
	meta, _ := metaV.(string)
	env, _ := envV.(string)
	m, err := parseMeta(meta)
	if err != nil {
		return nil, m, err
	}
	if q.Now.Sub(m.imade) >= s.cfg.TTL {
		return nil, m, nil
	}
	if len(raw) == 0 {
		return nil, m, errors.New("an empty window page") // the script copies none
	}
	d := liststore.WindowData{
		Start: -1,
		Floor: m.floor,
		At:    stamp(m.at, r), // the script checked the window is of this run
	}
	if m.records {
		d.Records = make([][]byte, 0, q.Size+1)
	}
	// One string of entries: the ids and records are slices of it, so
	// that a page costs two allocations, not two a record.
	// The string is the client's, read for this call alone: its bytes
	// are only read, as a window's always are (the page is composed in
	// a buffer of its own), so they are used in place.
	b := unsafe.Slice(unsafe.StringData(raw), len(raw))
	d.IDs = make([]string, 0, q.Size+1)
	for len(b) > 0 {
		id, rest, ok := field(b)
		if !ok {
			return nil, m, errors.New("a window entry is cut short")
		}
		rec, rest, ok := field(rest)
		if !ok {
			return nil, m, errors.New("a window entry is cut short")
		}
		b = rest
		if skip > 0 {
			skip--
			continue
		}
		d.IDs = append(d.IDs, unsafe.String(unsafe.SliceData(id), len(id)))
		if m.records {
			d.Records = append(d.Records, rec[:len(rec):len(rec)])
		}
	}
	if len(d.IDs) == 0 {
		return nil, m, nil
	}
	// The window's end is the view's only when the view reaches it.
	d.Ended = m.ended && reaches
	if m.start >= 0 {
		d.Start = m.start + e.k
	}
	if e.k == 0 && m.fromStart {
		d.FromStart = true
	}
	// The view is the records after the cursor, or it is not this list's.
	o := s.cfg.Order
	if o.Compare(d.IDs[0], q.After) <= 0 || !m.fromStart && o.Compare(q.After, m.floor) < 0 {
		return nil, m, nil // not what the entry said: read from the backend
	}
	src := s.cfg.Decode([]byte(env))
	if src == nil {
		return nil, m, nil // an envelope this instance cannot read: from the backend
	}
	return liststore.NewStoredWindow(d, src, ref{win: e.win, base: e.k, written: written}), m, nil
}
