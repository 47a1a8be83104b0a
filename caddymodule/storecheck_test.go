package caddymodule

import (
	"net"
	"sync/atomic"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestValidateAsksNothingOfTheStore: `caddy validate` provisions the
// config but never runs it, so the store is not asked (the check waits
// for the config to run: TestSharedStoreCheckedAtLoad), and a store down
// or out of reach of the machine that validates passes as it did.
func TestValidateAsksNothingOfTheStore(t *testing.T) {
	// 127.0.0.3: no client of another test's store, closing, dials it.
	ln, err := net.Listen("tcp", "127.0.0.3:0")
	if err != nil {
		t.Skipf("no loopback address 127.0.0.3 to listen on: %v", err)
	}
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			_ = c.Close()
		}
	}()
	text := "http://:0 {\n\thelpdesk_gateway {\n\t\treadahead_store redis://" + ln.Addr().String() + "/0\n\t\treadahead_store_key 0123456789abcdef-secret\n\t}\n\treverse_proxy 127.0.0.1:9\n}\n"
	cfg, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(text), map[string]any{"filename": "Caddyfile"})
	require.NoError(t, err)
	require.NoError(t, caddy.Validate(mustConfig(t, cfg)))
	require.NoError(t, ln.Close()) // every connection Validate made is accepted by now, or refused
	assert.Zero(t, accepted.Load(), "caddy validate connected to the store")
}
