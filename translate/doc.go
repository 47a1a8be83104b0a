// Package translate holds the gateway's pure paging logic: the cursor
// codec, the id order, and the keyset-over-offset engine that serves cursor
// pages from a backend that only pages by offset (or, where it can filter by
// id, by keyset), with what it learns per list identity (lists.go) and the
// read-ahead windows that serve a walk's next pages from memory
// (readahead.go, windows.go). The ticket-filter grammar lives apart, in
// package ticketfilter: it shares nothing with paging.
//
// It imports no Caddy code, so everything here can be tested and fuzzed
// without a server, against an in-memory Fetcher.
package translate
