// Package translate holds the gateway's pure paging logic: the
// keyset-over-offset engine that serves cursor pages from a backend that
// only pages by offset (or, where it can filter by id, by keyset). What a
// cursor id is, the _cursor codec and the id order, is package cursor's.
// What it keeps per list identity (the learned page sizes and keyset trust,
// the position samples, the walks it served and the read-ahead windows that
// serve their next pages from memory) is kept in package liststore, under
// one bound in bytes (liststore.go here names its types). run.go cuts pages
// from the span, the one kind of answer: a backend call's or a read-ahead
// window's. Where a cursor's records start in a list paged by offset is
// found by package locate's search, which leaps where package estimate puts
// the cursor from ids read as numbers; both keep no state of the engine.
// The ticket-filter grammar lives apart, in package ticketfilter: it shares
// nothing with paging.
//
// It imports no Caddy code, so everything here can be tested and fuzzed
// without a server, against an in-memory Fetcher.
package translate
