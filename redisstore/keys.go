package redisstore

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
)

// keyPrefix starts every key the store writes, so that an operator can
// tell them apart in a shared Redis (and SCAN or ACL them as one).
const keyPrefix = "hdgw:"

// listKey returns the hash-tagged name of a list identity's keys:
// hdgw:{H}:, H the HMAC-SHA256 of the identity under the secret, 128
// bits of it in hex. The identity holds the caller's own parameters
// (credentials among them) and a hash of its headers; the hash keeps all
// of that out of the store, and the secret keeps anyone who reads the
// store from testing guesses of a credential against its keys. Two
// callers never share a key: their identities differ, and a collision of
// 128 bits of HMAC is not a thing to plan for.
func (s *Store) listKey(list string) string {
	m := hmac.New(sha256.New, s.cfg.Secret)
	m.Write([]byte(list))
	var sum [sha256.Size]byte
	h := m.Sum(sum[:0])
	b := make([]byte, 0, len(keyPrefix)+2+32+1)
	b = append(b, keyPrefix...)
	b = append(b, '{')
	b = hex.AppendEncode(b, h[:16])
	return string(append(b, '}', ':'))
}

// windowName returns a name for a new window, unique among the list's:
// 64 random bits.
func windowName() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
