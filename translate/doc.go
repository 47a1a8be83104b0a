// Package translate holds the gateway's pure logic: the cursor codec, the
// id order, the ticket-filter grammar and its validator, and the
// keyset-over-offset engine that serves cursor pages from a backend that
// only pages by offset.
//
// It imports no Caddy code, so everything here can be tested and fuzzed
// without a server, against an in-memory Fetcher.
package translate
