package reference

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"

	"github.com/helpdesk-gateway/gateway/legacy"
)

// Keyset reading. With Config.Paging.Keyset set, the backend reads a
// condition on the id in that form, as the backend it plays does:
// "id_gt={id}" (records with id above), json-server's "id_gte={id}" (at
// or above, with Config.KeysetInclusive), PostgREST's "id=gt.{id}",
// PocketBase's "filter=(id>'{id}')". The condition filters the list
// before the page or offset applies, as a WHERE clause does, and costs a
// binary search in the id-sorted list: no record is stepped through to
// find where the records above the id start.

// keysetCond is a condition on the id read from a list query.
type keysetCond struct {
	set       bool
	after     int64 // the records with id above it (or at it, inclusive)
	inclusive bool
	none      bool // an id above any int64: no record matches
}

// parseKeysetTemplate takes the configured template apart; New panics on
// a template referencemodule.Handler.Validate would refuse.
func parseKeysetTemplate(tmpl string) legacy.KeysetTemplate {
	t, err := legacy.ParseKeysetTemplate(tmpl, func(name string) error {
		if name == "" {
			return errors.New("empty parameter name")
		}
		return nil
	})
	if err != nil {
		panic(fmt.Sprintf("reference: Paging.Keyset: %v", err))
	}
	return t
}

// keyset reads the keyset condition of q, if the backend has one and q
// sets it. A value not of the template's form, or an id that is not a
// whole number, is refused, as a typed id column refuses it.
func (b *Backend) keyset(q url.Values) (keysetCond, error) {
	t := b.keysetTmpl
	if t == nil {
		return keysetCond{}, nil
	}
	v, ok := q[t.Param]
	if !ok || len(v) == 0 {
		return keysetCond{}, nil
	}
	s := v[0]
	if len(s) < len(t.Prefix)+len(t.Suffix) || s[:len(t.Prefix)] != t.Prefix || s[len(s)-len(t.Suffix):] != t.Suffix {
		return keysetCond{}, fmt.Errorf("%s %q: write %s<id>%s", t.Param, s, t.Prefix, t.Suffix)
	}
	raw := s[len(t.Prefix) : len(s)-len(t.Suffix)]
	c := keysetCond{set: true, inclusive: b.cfg.KeysetInclusive}
	n, err := strconv.ParseInt(raw, 10, 64)
	switch {
	case errors.Is(err, strconv.ErrRange) && raw[0] != '-':
		c.none = true
	case errors.Is(err, strconv.ErrRange):
		c.after, c.inclusive = math.MinInt64, true
	case err != nil:
		return keysetCond{}, fmt.Errorf("%s %q: %q is not a whole number; ids here are whole numbers", t.Param, s, raw)
	default:
		c.after = n
	}
	return c, nil
}

// from returns the position in recs, ascending by id, of the first record
// the condition keeps.
func (c keysetCond) from(recs []*record) int {
	if !c.set {
		return 0
	}
	if c.none {
		return len(recs)
	}
	lo, hi := 0, len(recs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if id := recs[m].id; id > c.after || c.inclusive && id == c.after {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}
