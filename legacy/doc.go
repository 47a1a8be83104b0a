// Package legacy is the backend side of the gateway: a list window as a
// _page/_perPage query, records and ids sliced out of a backend body, and
// the reference legacy help-desk backend that the default Caddyfile and
// the tests run.
//
// The reference backend behaves like the help-desk backend the gateway
// fronts: it pages only with _page and _perPage (it ignores _cursor), sorts
// with _sortField and _sortDir, and lists newest first by default, not by
// id. Its data set is made from a seed, and an optional churn inserts and
// deletes records while it runs, so the gateway's guarantee can be seen
// under change.
package legacy
