package verify

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

// describeCost reports what the gateway's walks of the list cost a
// backend that it reads by offset (no backend_keyset): rows stepped over
// per record served, for windows of the backend walk's page size (the
// gateway's are at most backend_max_per_page, and read-ahead makes them
// that large), or the smaller page the backend clamps to; and, for a
// large list, that backend_keyset would make them linear.
func (v *verifier) describeCost(d *backendWalk) {
	if v.cfg.BackendPaging.Keysets() || !d.complete || len(d.ids) == 0 {
		return
	}
	window := v.cfg.BackendPerPage
	if d.largest > 0 && (d.fixed || d.largest < window && d.pages > 1) {
		window = d.largest
	}
	if advice := KeysetAdvice(len(d.ids), window); advice != "" {
		fmt.Fprintln(v.out, "  cost: "+advice)
		return
	}
	fmt.Fprintf(v.out, "  cost: this list's walks step over %.1f rows per record served (%d records read by offset in windows of %d)\n",
		OffsetStepped(len(d.ids), window), len(d.ids), window)
}
