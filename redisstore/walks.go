package redisstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/helpdesk-gateway/gateway/translate"
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

// Cut implements translate.WalkStore: one round trip, the walk rule's
// checks on the store (cutScript) and the TTL again on this instance's
// clock. A store that fails answers as one that holds nothing.
func (s *Store) Cut(ctx context.Context, list string, q translate.CutQuery) (c translate.CutResult) {
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
	run, err := s.runID(ctx)
	if err != nil {
		s.failed("cut", err)
		return c
	}
	if !s.forgetLost(ctx) {
		return c
	}
	res, err := cutScript.Run(ctx, s.client, []string{base + "c:" + q.After, base},
		run, q.Size, fresh, s.cfg.TTL.Microseconds(), strconv.FormatInt(q.Now.UnixNano(), 10), s.cfg.TTL.Nanoseconds()).Slice()
	if err != nil {
		s.failed("cut", err)
		return c
	}
	s.answered()
	if *s.run.Load() != run {
		// The call reached another server than the run_id it was sent
		// with (a restart, a restore, a failover, learned by the new
		// connection it went through): its entries are not this run's.
		return translate.CutResult{}
	}
	c, ok := s.cut(res, q)
	if !ok {
		s.failed("cut", fmt.Errorf("unexpected answer to the cut script: %d values", len(res)))
	}
	return c
}

// cut reads cutScript's answer; false when it is not one.
func (s *Store) cut(res []any, q translate.CutQuery) (c translate.CutResult, ok bool) {
	now, ok := res[0].(int64)
	if !ok {
		return c, false
	}
	c.At = time.UnixMicro(now)
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
	if len(res) != 6 {
		return c, false
	}
	written, _ := res[5].(int64)
	w, err := s.view(res[2], res[3], res[4], e, q, written == 1)
	if err != nil {
		return c, false
	}
	if w != nil {
		c.Window = w
		s.served.Add(1)
	}
	return c, true
}

// view makes the part of a window after the cursor that cutScript read
// back (the page's records and the one after them, or fewer where the
// window ends) a window the engine cuts from at 0. nil when this
// instance's clock says the window is past its TTL or it holds nothing
// after the cursor.
func (s *Store) view(metaV, envV, entriesV any, e entry, q translate.CutQuery, written bool) (*translate.StoredWindow, error) {
	meta, _ := metaV.(string)
	env, _ := envV.(string)
	raw, _ := entriesV.([]any)
	m, err := parseMeta(meta)
	if err != nil {
		return nil, err
	}
	if q.Now.Sub(m.imade) >= s.cfg.TTL || len(raw) == 0 {
		return nil, nil
	}
	d := translate.WindowData{
		IDs:   make([]string, 0, len(raw)),
		Start: -1,
		Floor: m.floor,
		// The window's end is the view's only when the view reaches it.
		Ended: m.ended && len(raw) <= q.Size,
		At:    time.UnixMicro(m.at),
	}
	if m.records {
		d.Records = make([][]byte, 0, len(raw))
	}
	for _, v := range raw {
		b, _ := v.(string)
		n, k := binary.Uvarint([]byte(b[:min(len(b), binary.MaxVarintLen64)]))
		if k <= 0 || uint64(len(b)-k) < n {
			return nil, errors.New("a window entry is cut short")
		}
		d.IDs = append(d.IDs, b[k:k+int(n)])
		if m.records {
			d.Records = append(d.Records, []byte(b[k+int(n):]))
		}
	}
	if m.start >= 0 {
		d.Start = m.start + e.k
	}
	if e.k == 0 && m.fromStart {
		d.FromStart = true
	}
	// The view is the records after the cursor, or it is not this list's.
	o := s.cfg.Order
	if o.Compare(d.IDs[0], q.After) <= 0 || !m.fromStart && o.Compare(q.After, m.floor) < 0 {
		return nil, nil // not what the entry said: read from the backend
	}
	src := s.cfg.Decode([]byte(env))
	if src == nil {
		return nil, nil // an envelope this instance cannot read: from the backend
	}
	return translate.NewStoredWindow(d, src, ref{win: e.win, base: e.k, written: written}), nil
}

// Walked implements translate.WalkStore: the page's chain entry and the
// window it read, if any, in one script. A chain entry that cannot be
// written (the store failing, or off for its back-off) is deleted before
// this instance next reads or writes the store (forgetLost): an entry of
// an older walk through the same record, left in place, would let this
// walk's next page be cut from that walk's window, read before this walk
// began. What remains is a store that fails this instance's write and at
// once answers another instance's read of the same entry, with an older
// walk of the same caller through the same record within the TTL: that
// gap is stated in SECURITY.md. A page the store never hears of costs
// only calls.
func (s *Store) Walked(ctx context.Context, list string, p translate.Walked) {
	if s.cfg.TTL <= 0 {
		return
	}
	base := s.listKey(list)
	chainKey := base // none: see walkedScript
	if p.More && p.Last != "" {
		chainKey = base + "c:" + p.Last
	}
	if !s.usable(time.Now()) {
		s.lose(chainKey, p.Now)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	run, err := s.runID(ctx)
	if err != nil {
		s.lose(chainKey, p.Now)
		s.failed("walked", err)
		return
	}
	if !s.forgetLost(ctx) {
		s.lose(chainKey, p.Now)
		return
	}
	keys := []string{chainKey, base, base}
	args := make([]any, 6, 6+windowLen(p.Window))
	args[0] = run
	if !p.At.IsZero() {
		args[1] = strconv.FormatInt(p.At.UnixMicro(), 10)
	} else {
		args[1] = ""
	}
	args[3] = s.cfg.TTL.Milliseconds()
	args[4], args[5] = "", ""
	win, k := "-", 0
	if w := p.Window; w != nil && !p.At.IsZero() {
		// A window needs the time of the Cut before its call.
		if name, ok := s.window(&args, w, p); ok {
			keys[1] = base + "w:" + name
			win, k = name, after(s.cfg.Order, w.Data().IDs, p.Last)
		} else {
			// Read for nothing: as a window dropped unread, back off.
			p.Walk.Size, p.Walk.Backoff = max(p.Walk.Size/2, 1), true
		}
	} else if r, ok := fromRef(p.From); ok && p.Window == nil {
		ids := p.From.Data().IDs
		i := after(s.cfg.Order, ids, p.Last)
		if r.written && i == len(ids)-1 {
			return // the page cut whole from the view: cutScript wrote its entry
		}
		win, k = r.win, r.base+i
	}
	args[2] = fmt.Sprintf("%s %d %d %d %s %d", win, k, p.Now.UnixNano(), p.Walk.Size,
		strconv.FormatFloat(p.Walk.Rate, 'g', 6, 64), b2i(p.Walk.Backoff))
	if chainKey == base && keys[1] == base {
		return
	}
	if err := walkedScript.Run(ctx, s.client, keys, args...).Err(); err != nil {
		s.lose(chainKey, p.Now)
		s.failed("walked", err)
		return
	}
	if keys[1] != base {
		s.kept.Add(1)
	}
	s.answered()
}

// lose remembers a chain entry a page could not write, to delete it once
// the store answers (see Walked); a key without an id is none.
func (s *Store) lose(key string, made time.Time) {
	if strings.Contains(key, "}:c:") {
		s.remember([]lostEntry{{key, made}})
	}
}

// window appends the window's meta, envelope and entries to args, and
// returns the name it is written under; false when it is not kept (too
// large, or the source cannot be encoded).
func (s *Store) window(args *[]any, w *translate.StoredWindow, p translate.Walked) (string, bool) {
	env, ok := s.cfg.Encode(w.Source())
	if !ok {
		return "", false
	}
	d := w.Data()
	size := int64(len(env))
	for i, id := range d.IDs {
		size += int64(len(id)) + 2
		if d.Records != nil {
			size += int64(len(d.Records[i]))
		}
	}
	if s.cfg.MaxWindowBytes > 0 && size > s.cfg.MaxWindowBytes {
		return "", false
	}
	a := *args
	a[4] = fmt.Sprintf("%d %d %d %d %d %s", p.Now.UnixNano(), d.Start, b2i(d.FromStart), b2i(d.Ended), b2i(d.Records != nil), d.Floor)
	a[5] = env
	for i, id := range d.IDs {
		b := make([]byte, 0, binary.MaxVarintLen64+len(id)+recordLen(d.Records, i))
		b = binary.AppendUvarint(b, uint64(len(id)))
		b = append(b, id...)
		if d.Records != nil {
			b = append(b, d.Records[i]...)
		}
		a = append(a, b)
	}
	*args = a
	return windowName(), true
}

// after returns the index in ids of the first id above last.
func after(o translate.Order, ids []string, last string) int {
	return sort.Search(len(ids), func(i int) bool { return o.Compare(ids[i], last) > 0 })
}

func fromRef(w *translate.StoredWindow) (ref, bool) {
	if w == nil {
		return ref{}, false
	}
	r, ok := w.Ref().(ref)
	return r, ok
}

func windowLen(w *translate.StoredWindow) int {
	if w == nil {
		return 0
	}
	return len(w.Data().IDs)
}

func recordLen(records [][]byte, i int) int {
	if records == nil {
		return 0
	}
	return len(records[i])
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// entry is a chain entry as read back.
type entry struct {
	win   string
	k     int
	imade time.Time
	walk  translate.Walk
}

// parseEntry reads a chain entry's value (see scripts.go).
func parseEntry(v any) (e entry, err error) {
	s, _ := v.(string)
	f := strings.Fields(s)
	if len(f) != 9 {
		return e, fmt.Errorf("a chain entry of %d fields", len(f))
	}
	var imade int64
	var backoff int
	e.win = f[3]
	if e.k, err = strconv.Atoi(f[4]); err != nil {
		return e, err
	}
	if imade, err = strconv.ParseInt(f[5], 10, 64); err != nil {
		return e, err
	}
	if e.walk.Size, err = strconv.Atoi(f[6]); err != nil {
		return e, err
	}
	if e.walk.Rate, err = strconv.ParseFloat(f[7], 64); err != nil {
		return e, err
	}
	if backoff, err = strconv.Atoi(f[8]); err != nil {
		return e, err
	}
	e.imade, e.walk.Backoff = time.Unix(0, imade), backoff == 1
	return e, nil
}

// meta is a window's meta as read back.
type meta struct {
	at                        int64
	imade                     time.Time
	start                     int
	fromStart, ended, records bool
	floor                     string
}

// parseMeta reads a window's meta (see scripts.go).
func parseMeta(s string) (m meta, err error) {
	f := strings.SplitN(s, " ", 8)
	if len(f) != 8 {
		return m, fmt.Errorf("a window's meta of %d fields", len(f))
	}
	var n [6]int64
	for i := range n {
		if n[i], err = strconv.ParseInt(f[1+i], 10, 64); err != nil {
			return m, err
		}
	}
	m.at, m.imade, m.start = n[0], time.Unix(0, n[1]), int(n[2])
	m.fromStart, m.ended, m.records, m.floor = n[3] == 1, n[4] == 1, n[5] == 1, f[7]
	return m, nil
}
