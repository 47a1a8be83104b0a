package estimate

import "fmt"

// What a page-dialect list's walks cost the backend (docs/performance.md,
// "Cost as the list grows"). A backend that pages by offset steps over
// every row before the window it sends, as SQL's LIMIT/OFFSET does: a
// whole walk of n records read in windows of w steps over w, 2w, ... n
// rows, about n/(2w) per record served on top of the record itself, so
// the walk's cost grows with the square of the list. A keyset condition
// (backend_keyset, "ids above X") is a seek on the id's index: a walk by
// it steps over none, whatever n.

// LargeListStepped is the rows stepped over per record served from which
// the rollout check and the admin endpoint suggest backend_keyset: 50,
// a list of 100,000 read in windows of 1,000. That is where the page
// dialect at 100 a page cost PocketBase on SQLite as much CPU as its own
// keyset walk (issue 40: 0.99x at 100,000 records, 1.19x at 300,000).
const LargeListStepped = 50

// OffsetStepped returns the rows a whole walk of records records, read in
// windows of window records by offset, steps over per record served:
// records/(2*window). It is 0 when either is unknown (below 1).
func OffsetStepped(records, window int) float64 {
	if records < 1 || window < 1 {
		return 0
	}
	return float64(records) / float64(2*window)
}

// KeysetAdvice returns the line that suggests backend_keyset for a list
// of records records paged by offset in windows of window records, or ""
// when its walks step over fewer than LargeListStepped rows per record
// served.
func KeysetAdvice(records, window int) string {
	stepped := OffsetStepped(records, window)
	if stepped < LargeListStepped {
		return ""
	}
	return fmt.Sprintf("this list's walks step over %.0f rows per record served (%d records read by offset in windows of %d); "+
		"if the backend can filter by id, backend_keyset \"id_gt={id}\" (in its own form) makes them linear", stepped, records, window)
}
