package redisstore

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// keyPrefix starts every key the store writes, so that an operator can
// tell them apart in a shared Redis (and SCAN or ACL them as one).
const keyPrefix = "hdgw:"

// listKey returns the hash-tagged name of a list identity's keys:
// hdgw:{H}:, H the HMAC-SHA256 under the secret of the deployment
// (framed by its length) and the list identity, 128 bits of it in hex.
// The identity holds the caller's own parameters (credentials among
// them) and a hash of its headers; the hash keeps all of that out of the
// store, and the secret keeps anyone who reads the store from testing
// guesses of a credential against its keys. Two callers never share a
// key: their identities differ, and a collision of 128 bits of HMAC is
// not a thing to plan for. Two deployments never share one either,
// whatever secret they hold: their Deployment differs (see Config), and
// it goes into the hash before the identity.
func (s *Store) listKey(list string) string {
	m := hmac.New(sha256.New, s.cfg.Secret)
	var d []byte
	if p := s.deployment.Load(); p != nil {
		d = *p
	}
	var n [binary.MaxVarintLen64]byte
	m.Write(n[:binary.PutUvarint(n[:], uint64(len(d)))])
	m.Write(d)
	m.Write([]byte(list))
	var sum [sha256.Size]byte
	h := m.Sum(sum[:0])
	b := make([]byte, 0, len(keyPrefix)+2+32+1)
	b = append(b, keyPrefix...)
	b = append(b, '{')
	b = hex.AppendEncode(b, h[:16])
	return string(append(b, '}', ':'))
}

// SetDeployment replaces Config.Deployment, for a program that learns
// its deployment only after the store is made (the gateway reads the
// handlers after it once its config runs). Entries written under the old
// one are not found under the new one: they cost calls, and expire.
func (s *Store) SetDeployment(d []byte) {
	d = append([]byte(nil), d...)
	s.deployment.Store(&d)
}

// windowName returns a name for a new window, unique among the list's:
// 64 random bits.
func windowName() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
