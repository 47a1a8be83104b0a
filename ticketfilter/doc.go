// Package ticketfilter validates the _filters parameter of GET /tickets
// against the API spec's tables (sections 2 and 4.3): which parameters may
// be filtered, with which operators, and what their values look like, with
// LiveAgent's status, channel and period codes.
//
// The tables are data in filter_grammar.go and codes.go; the validator in
// filter.go and the scanner in filter_scan.go only interpret them, and
// filter_export.go hands them, as they are, to the OpenAPI generator and the
// reference backend. Nothing here pages or knows about cursors (that is
// package translate), and nothing imports Caddy.
package ticketfilter
