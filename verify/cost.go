package verify

import (
	"fmt"

	"github.com/helpdesk-gateway/gateway/estimate"
)

// describeCost reports what the gateway's walks of the list cost a
// backend that it reads by offset (no backend_keyset): rows stepped over
// per record served, for windows of the backend walk's page size (the
// gateway's are at most backend_max_per_page, and read-ahead makes them
// that large), or the smaller page the backend clamps to; and, for a
// large list, that backend_keyset would make them linear (estimate's
// KeysetAdvice, which the admin endpoint gives at run time too).
func (v *verifier) describeCost(d *backendWalk) {
	if v.cfg.BackendPaging.Keysets() || !d.complete || len(d.ids) == 0 {
		return
	}
	window := v.cfg.BackendPerPage
	if d.largest > 0 && (d.fixed || d.largest < window && d.pages > 1) {
		window = d.largest
	}
	if advice := estimate.KeysetAdvice(len(d.ids), window); advice != "" {
		fmt.Fprintln(v.out, "  cost: "+advice)
		return
	}
	fmt.Fprintf(v.out, "  cost: this list's walks step over %.1f rows per record served (%d records read by offset in windows of %d)\n",
		estimate.OffsetStepped(len(d.ids), window), len(d.ids), window)
}
