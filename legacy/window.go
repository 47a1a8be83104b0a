package legacy

import (
	"strconv"

	"github.com/helpdesk-gateway/gateway/translate"
)

// AppendQuery appends the query of a backend list call for window w: the
// client's own parameters (already stripped of the gateway's), the sort
// that puts the list in id order, then _page and _perPage.
func AppendQuery(dst []byte, clientQuery, sort string, w translate.Window) []byte {
	for _, part := range [...]string{clientQuery, sort} {
		if part != "" {
			dst = append(dst, part...)
			dst = append(dst, '&')
		}
	}
	dst = append(dst, "_page="...)
	dst = strconv.AppendInt(dst, int64(w.Page), 10)
	dst = append(dst, "&_perPage="...)
	return strconv.AppendInt(dst, int64(w.Size), 10)
}
