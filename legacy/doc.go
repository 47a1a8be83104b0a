// Package legacy is the gateway's side of the backend protocol: a list
// window as a query in the backend's paging dialect (page and page size by
// its own names, or offset and limit), and records and ids sliced out of a
// backend body by a one-pass scanner that keeps each record's raw bytes.
//
// The reference legacy help-desk backend that the default Caddyfile and the
// tests run is its own package, legacy/reference.
package legacy
