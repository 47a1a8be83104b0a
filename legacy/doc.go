// Package legacy is the backend side of the gateway: a list window as a
// _page/_perPage query, records and ids sliced out of a backend body, and
// the reference legacy help-desk backend that the default Caddyfile and
// the tests run.
//
// The reference backend, Backend, behaves like the help-desk backend the
// gateway fronts. It serves five lists (see Lists) and single tickets at
// /tickets/{id}. It pages only with _page and _perPage and ignores
// _cursor; it sorts with _sortField and _sortDir, and lists newest first
// by default, not by id, so a client that wants id order must ask for it.
// The ticket list applies _filters. Errors are JSON, {"message": "..."}.
//
// Its data set is made from a seed, with dates in the two years before a
// fixed epoch, so the same seed always gives the same bytes. Each record
// is encoded once, when it is made: a page is its records' bytes joined.
// An optional churn inserts and deletes records while the backend runs,
// so that the gateway's guarantees can be seen under change.
package legacy
