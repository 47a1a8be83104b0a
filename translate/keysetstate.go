package translate

import (
	"hash/maphash"
	"sync"
)

// keyset is what a list identity found of its backend's keyset answers
// (read and written by keysetRead, keysetread.go). It is shared by the
// list's concurrent pages, and each of its methods takes its lock.
type keyset struct {
	mu        sync.Mutex
	inclusive bool // answers hold the cursor's own record first
	misread   bool // an answer broke the condition: read by offset
	confirmed bool // an answer agreed with an offset read at its cursor

	// marks are the records the last pages served by keyset ended at
	// (and the last of the windows read with them), a ring.
	marks [keysetMarks]keysetMark
	ring  int
}

// keysetMark is a record a page served by keyset ended at: the record
// after it, which the next page's answer must hold first unless records
// changed there since (an offset read tells), and its offset, counted
// from an offset read through the keyset answers since, or -1. The offset
// is a hint: where the call that shows the walk's end looks (endsThere),
// or where an offset read that confirms a page starts its search.
//
// Ids are kept as keyed hashes (markHash), not text: a mark is then a
// fixed size, counted whole in the list's object (ListStore's bound),
// whatever the ids' length. Two ids that share a hash cost an offset read
// at most; the key is random per process, so a client cannot aim for that.
type keysetMark struct {
	id, next uint64 // markHash of the ids; next 0 when not known
	off      int
}

// keysetMarks is how many marks a list identity keeps: a few walks' at
// once.
const keysetMarks = 4

// markSeed keys markHash.
var markSeed = maphash.MakeSeed()

// markHash is id's hash for a keysetMark, never 0.
func markHash(id string) uint64 {
	return max(maphash.String(markSeed, id), 1)
}

// isMisread reports whether an answer of the list broke the condition.
func (k *keyset) isMisread() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.misread
}

// setMisread records that an answer broke the condition, and reports
// whether it is the first to.
func (k *keyset) setMisread() (first bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	first = !k.misread
	k.misread = true
	return first
}

// isInclusive reports whether answers were seen to hold their anchor.
func (k *keyset) isInclusive() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.inclusive
}

// setInclusive records an answer that held its anchor.
func (k *keyset) setInclusive() {
	k.mu.Lock()
	k.inclusive = true
	k.mu.Unlock()
}

// setConfirmed records whether the list's last offset read agreed with
// the keyset answers (false: the next keyset page is confirmed too).
func (k *keyset) setConfirmed(c bool) {
	k.mu.Lock()
	k.confirmed = c
	k.mu.Unlock()
}

// recall returns whether an answer of the list was confirmed yet, and the
// mark of the record id, if any.
func (k *keyset) recall(id string) (confirmed bool, m keysetMark, marked bool) {
	h := markHash(id)
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, mk := range k.marks {
		if mk.id == h {
			return k.confirmed, mk, true
		}
	}
	return k.confirmed, keysetMark{}, false
}

// remember keeps ms, the oldest marks making room.
func (k *keyset) remember(ms []keysetMark) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, m := range ms {
		k.marks[k.ring] = m
		k.ring = (k.ring + 1) % keysetMarks
	}
}
