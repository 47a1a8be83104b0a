package redisstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/helpdesk-gateway/gateway/liststore"
)

// Walked implements liststore.WalkStore: the page's chain entry and the
// window it read, if any, in one script, which the list's fence may
// refuse (see fence.go). When the page makes a chain entry and the
// store's answer is not had (the call failed or timed out, or the store
// is off for its back-off), the list's fence is moved before the page is
// sent, so that an older walk's entry for the same record cannot decide
// the page's next one.
func (s *Store) Walked(ctx context.Context, list string, p liststore.Walked) {
	if s.cfg.TTL <= 0 || cutWhole(s.cfg.Order, p) {
		return
	}
	base := s.listKey(list)
	if s.write(ctx, base, p) || !p.More || p.Last == "" {
		return
	}
	s.fence(ctx, base, p.Now)
}

// write runs Walked's script: false when the store's answer is not had.
func (s *Store) write(ctx context.Context, base string, p liststore.Walked) bool {
	chainKey := base // none: see walkedScript
	if p.More && p.Last != "" {
		chainKey = base + "c:" + p.Last
	}
	if !s.usable(time.Now()) {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	n, run, err := s.nodeFor(ctx, base)
	if err != nil {
		s.failed("walked", err)
		return false
	}
	if !s.fenceLost(ctx) {
		return false
	}
	keys := []string{chainKey, base, base, base + "f"}
	args := make([]any, 6, 8)
	args[0] = run.id
	if runEpoch(p.At) != run.epoch {
		// A time off another server's clock, or another run's (the
		// list's slot moved, or the store failed over, since the page's
		// Cut): as no time (nodes.go).
		p.At = time.Time{}
	}
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
		return true
	}
	if err := s.walkedCall(ctx, n.client, keys, pages, args); err != nil {
		s.failed("walked", err)
		return false
	}
	if keys[1] != base {
		s.kept.Add(1)
	}
	s.answered()
	return true
}

// walkedCall writes a window's pages (keys[4:]) and runs walkedScript
// after them, in one pipeline.
func (s *Store) walkedCall(ctx context.Context, client *redis.Client, keys []string, pages [][]byte, args []any) error {
	for try := 0; ; try++ {
		pipe := client.Pipeline()
		if try == 0 {
			for j, pg := range pages {
				pipe.Set(ctx, keys[4+j], pg, s.cfg.TTL)
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
func cutWhole(o cursor.Order, p liststore.Walked) bool {
	r, ok := fromRef(p.From)
	if !ok || !r.written || p.Window != nil {
		return false
	}
	ids := p.From.Data().IDs
	return after(o, ids, p.Last) == len(ids)-1
}

// window appends the window's meta, envelope and pages' last ids to args
// and sets pages to its pages (see scripts.go), each a slice of one
// pooled buffer, and returns the name it is written under; false when it
// is not kept (too large, too many pages, nothing after the page, or a
// source that cannot be encoded).
func (s *Store) window(args *[]any, pages *[][]byte, w *liststore.StoredWindow, p liststore.Walked) (string, *[]byte, bool) {
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
func after(o cursor.Order, ids []string, last string) int {
	return sort.Search(len(ids), func(i int) bool { return o.Compare(ids[i], last) > 0 })
}

func fromRef(w *liststore.StoredWindow) (ref, bool) {
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
