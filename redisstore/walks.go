package redisstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/redis/go-redis/v9"

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
	claim := int64(0)
	if q.Ahead {
		claim = max(s.cfg.TTL.Milliseconds(), 1) // a read ahead takes no longer than the window would serve
	}
	res, page, err := s.cutCall(ctx, []string{base + "c:" + q.After, base, base + "q:" + s.callName()},
		run, q.Size, fresh, s.cfg.TTL.Microseconds(), strconv.FormatInt(q.Now.UnixNano(), 10), s.cfg.TTL.Nanoseconds(), claim)
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
	c, ok := s.cut(list, res, page, q)
	if !ok {
		s.failed("cut", fmt.Errorf("unexpected answer to the cut script: %d values", len(res)))
		return translate.CutResult{}
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
func (s *Store) cutCall(ctx context.Context, keys []string, args ...any) ([]any, string, error) {
	for try := 0; ; try++ {
		pipe := s.client.Pipeline()
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
func (s *Store) cut(list string, res []any, page string, q translate.CutQuery) (c translate.CutResult, ok bool) {
	if len(res) == 0 {
		return c, false // not what the script returns: another server's idea of EVALSHA
	}
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
	if len(res) != 9 {
		return c, false
	}
	written, _ := res[4].(int64)
	skip, _ := res[5].(int64)
	reaches, _ := res[6].(int64)
	w, m, err := s.view(res[2], res[3], page, int(skip), reaches == 1, e, q, written == 1)
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
func (s *Store) view(metaV, envV any, raw string, skip int, reaches bool, e entry, q translate.CutQuery, written bool) (*translate.StoredWindow, meta, error) {
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
	d := translate.WindowData{
		Start: -1,
		Floor: m.floor,
		At:    time.UnixMicro(m.at),
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
	return translate.NewStoredWindow(d, src, ref{win: e.win, base: e.k, written: written}), m, nil
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
	if s.cfg.TTL <= 0 || cutWhole(s.cfg.Order, p) {
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
	args := make([]any, 6, 8)
	args[0] = run
	if !p.At.IsZero() {
		args[1] = strconv.FormatInt(p.At.UnixMicro(), 10)
	} else {
		args[1] = ""
	}
	args[3] = s.cfg.TTL.Milliseconds()
	args[4], args[5] = "", ""
	win, k := "-", 0
	var pages [][]byte
	if w := p.Window; w != nil && !p.At.IsZero() {
		// A window needs the time of the Cut before its call.
		if name, buf, ok := s.window(&args, &pages, w, p); ok {
			defer putEntries(buf) // the client has written it when the pipeline returns
			keys[1] = base + "w:" + name
			for j := range pages {
				keys = append(keys, keys[1]+":p:"+strconv.Itoa(j))
			}
			win, k = name, after(s.cfg.Order, w.Data().IDs, p.Last)
		} else {
			// Read for nothing: as a window dropped unread, back off.
			p.Walk.Size, p.Walk.Backoff = max(p.Walk.Size/2, 1), true
		}
	} else if r, ok := fromRef(p.From); ok && p.Window == nil {
		win, k = r.win, r.base+after(s.cfg.Order, p.From.Data().IDs, p.Last)
	}
	args[2] = fmt.Sprintf("%s %d %d %d %s %d", win, k, p.Now.UnixNano(), p.Walk.Size,
		strconv.FormatFloat(p.Walk.Rate, 'g', 6, 64), b2i(p.Walk.Backoff))
	if chainKey == base && keys[1] == base {
		return
	}
	if err := s.walkedCall(ctx, keys, pages, args); err != nil {
		s.lose(chainKey, p.Now)
		s.failed("walked", err)
		return
	}
	if keys[1] != base {
		s.kept.Add(1)
	}
	s.answered()
}

// walkedCall writes a window's pages (keys[3:]) and runs walkedScript
// after them, in one pipeline.
func (s *Store) walkedCall(ctx context.Context, keys []string, pages [][]byte, args []any) error {
	for try := 0; ; try++ {
		pipe := s.client.Pipeline()
		if try == 0 {
			for j, pg := range pages {
				pipe.Set(ctx, keys[3+j], pg, s.cfg.TTL)
			}
		}
		script := walkedScript.EvalSha(ctx, pipe, keys, args...)
		if try > 0 {
			script = walkedScript.Eval(ctx, pipe, keys, args...) // loads it too
		}
		_, _ = pipe.Exec(ctx)
		if err := script.Err(); err != nil {
			if try == 0 && redis.HasErrorPrefix(err, "NOSCRIPT") {
				continue // the pages are written: the script again, loaded
			}
			return err
		}
		return nil
	}
}

// cutWhole reports whether p is a page cut whole from a view whose next
// chain entry cutScript wrote already: most pages of a walk, which then
// cost the store nothing more.
func cutWhole(o translate.Order, p translate.Walked) bool {
	r, ok := fromRef(p.From)
	if !ok || !r.written || p.Window != nil {
		return false
	}
	ids := p.From.Data().IDs
	return after(o, ids, p.Last) == len(ids)-1
}

// lose remembers a chain entry a page could not write, to delete it once
// the store answers (see Walked); a key without an id is none.
func (s *Store) lose(key string, made time.Time) {
	if strings.Contains(key, "}:c:") {
		s.remember([]lostEntry{{key, made}})
	}
}

// window appends the window's meta, envelope and pages' last ids to args
// and sets pages to its pages (see scripts.go), each a slice of one
// pooled buffer, and returns the name it is written under; false when it
// is not kept (too large, too many pages, nothing after the page, or a
// source that cannot be encoded).
func (s *Store) window(args *[]any, pages *[][]byte, w *translate.StoredWindow, p translate.Walked) (string, *[]byte, bool) {
	d := w.Data()
	k0, size, first := after(s.cfg.Order, d.IDs, p.Last), p.Size, p.First
	if first < 1 || first > size {
		first = size
	}
	if size < 1 || k0 >= len(d.IDs) || (len(d.IDs)-k0-first+size-1)/size+1 > maxPages {
		return "", nil, false
	}
	env, ok := s.cfg.Encode(w.Source())
	if !ok {
		return "", nil, false
	}
	bytes := len(env)
	for i := k0; i < len(d.IDs); i++ {
		bytes += len(d.IDs[i]) + 2*binary.MaxVarintLen32
		if d.Records != nil {
			bytes += len(d.Records[i])
		}
	}
	if s.cfg.MaxWindowBytes > 0 && int64(bytes) > s.cfg.MaxWindowBytes {
		return "", nil, false
	}
	// The entries from k0 on, each page a slice of them: page j holds
	// records k0+j*size to k0+(j+1)*size, the last the next page's first,
	// so that the engine knows a record follows the page.
	buf := getEntries(bytes - len(env))
	entries := (*buf)[:0]
	starts := make([]int, 0, len(d.IDs)-k0+1)
	for i := k0; i < len(d.IDs); i++ {
		starts = append(starts, len(entries))
		entries = binary.AppendUvarint(entries, uint64(len(d.IDs[i])))
		entries = append(entries, d.IDs[i]...)
		var r []byte
		if d.Records != nil {
			r = d.Records[i]
		}
		entries = binary.AppendUvarint(entries, uint64(len(r)))
		entries = append(entries, r...)
	}
	starts = append(starts, len(entries))
	n := len(d.IDs) - k0
	for a, plen := 0, first; a < n; a, plen = a+plen, size {
		b := min(a+plen+1, n)
		*pages = append(*pages, entries[starts[a]:starts[b]:starts[b]])
		last := ""
		if a+plen < n {
			last = d.IDs[k0+a+plen-1]
		}
		*args = append(*args, last)
	}
	*args = append(*args, d.IDs[len(d.IDs)-1]) // the window's last id: a read ahead starts after it
	(*args)[4] = fmt.Sprintf("%d %d %d %d %d %d %d %d %d %s", p.Now.UnixNano(), len(d.IDs), d.Start,
		b2i(d.FromStart), b2i(d.Ended), b2i(d.Records != nil), k0, size, first, d.Floor)
	(*args)[5] = env
	return windowName(), buf, true
}

// maxPages bounds a window's pages: each is a key, and the script that
// writes the window names them all. A window of more is not kept, and the
// walk's next one is half as large.
const maxPages = 1024

// entriesPool keeps the buffers windows are written from: a window is
// written once and its buffer is free as soon as the client has sent it.
var entriesPool = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledEntries is the largest buffer kept for reuse.
const maxPooledEntries = 4 << 20

// getEntries returns a buffer of at least n bytes from the pool.
func getEntries(n int) *[]byte {
	b := entriesPool.Get().(*[]byte)
	if cap(*b) < n {
		*b = make([]byte, 0, n)
	}
	return b
}

func putEntries(b *[]byte) {
	if cap(*b) <= maxPooledEntries {
		entriesPool.Put(b)
	}
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
	n, start                  int
	fromStart, ended, records bool
	floor                     string
}

// parseMeta reads a window's meta (see scripts.go); its page fields (k0
// and size) are the script's alone.
func parseMeta(s string) (m meta, err error) {
	f := strings.SplitN(s, " ", 12)
	if len(f) != 12 {
		return m, fmt.Errorf("a window's meta of %d fields", len(f))
	}
	var n [10]int64
	for i := range n {
		if n[i], err = strconv.ParseInt(f[1+i], 10, 64); err != nil {
			return m, err
		}
	}
	m.at, m.imade, m.n, m.start = n[0], time.Unix(0, n[1]), int(n[2]), int(n[3])
	m.fromStart, m.ended, m.records, m.floor = n[4] == 1, n[5] == 1, n[6] == 1, f[11]
	return m, nil
}

// field reads one length-prefixed field of a window entry off b.
func field(b []byte) (f, rest []byte, ok bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < n {
		return nil, nil, false
	}
	return b[k : k+int(n)], b[k+int(n):], true
}
