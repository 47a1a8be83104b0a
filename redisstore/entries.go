package redisstore

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/helpdesk-gateway/gateway/liststore"
)

// What Cut reads back of the store's values (see scripts.go for how
// they are written).

// entry is a chain entry as read back.
type entry struct {
	win   string
	k     int
	imade time.Time
	walk  liststore.Walk
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
