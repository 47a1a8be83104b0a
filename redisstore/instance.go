package redisstore

import (
	"crypto/rand"
	"encoding/hex"
	"os"
)

// NewInstanceID names one gateway instance in the store's registry and
// the admin endpoint: the host's name, and random bits that tell apart
// the gateways of one host and of one process (and a gateway from
// itself before a reload).
func NewInstanceID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "gateway"
	}
	var b [3]byte
	_, _ = rand.Read(b[:])
	return host + "-" + hex.EncodeToString(b[:])
}
