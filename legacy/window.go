package legacy

import (
	"strconv"

	"github.com/helpdesk-gateway/gateway/translate"
)

// Dialect is how a backend names the window of a list call: by a page
// number and a page size (LiveAgent's _page/_perPage from 1, Zendesk's and
// Zammad's page/per_page, pages counted from 0), or by an offset and a
// limit (Jira's startAt/maxResults). The zero value is LiveAgent's: _page
// and _perPage, pages from 1.
//
// The names are the backend's, never the clients': clients always page
// with the help-desk API's _page, _perPage and _cursor, and the gateway
// writes the backend's names into its own calls only.
type Dialect struct {
	// Page names the page number; "" means _page. Unused with Offset.
	Page string
	// PerPage names the page size, or the limit with Offset; "" means
	// _perPage.
	PerPage string
	// FromZero numbers pages from 0 instead of 1. Unused with Offset.
	FromZero bool
	// Offset, when set, names the offset of a window's first record: the
	// backend is asked for windows by offset and limit, with no page
	// number, so a window may start anywhere.
	Offset string
	// Keyset, when set, is the backend's query for the records with id
	// above a cursor, {id} standing for the cursor id, such as
	// "id_gt={id}" (see keyset.go): a keyset window is asked with it, the
	// sort and the page size, with no page number or offset.
	Keyset string
}

// PageParam is the name of the page number.
func (d Dialect) PageParam() string {
	if d.Page == "" {
		return "_page"
	}
	return d.Page
}

// PerPageParam is the name of the page size (the limit, with an offset).
func (d Dialect) PerPageParam() string {
	if d.PerPage == "" {
		return "_perPage"
	}
	return d.PerPage
}

// Offsets reports whether the backend takes windows by offset, so that a
// window need not start on a multiple of its size.
func (d Dialect) Offsets() bool { return d.Offset != "" }

// Params are the names the dialect writes into a backend query: the ones
// a client must not send, in any spelling, since they select the window.
// The keyset template's names come after the page's (or offset's) and
// the page size's.
func (d Dialect) Params() []string {
	out := []string{d.PageParam(), d.PerPageParam()}
	if d.Offsets() {
		out[0] = d.Offset
	}
	return append(out, d.KeysetParams()...)
}

// AppendQuery appends the query of a backend list call for window w: the
// client's own parameters (already stripped of the gateway's), the sort
// that puts the list in id order, then the window in the backend's names.
// A page-numbered dialect can only ask for a window that starts on a
// multiple of its size (translate.Window.Aligned), as translate.PlanWindow
// plans them; callers check. A keyset window (w.After set) is asked with
// the keyset template instead, the id query-escaped, and the page size:
// callers checked w.After with KeysetCheck.
func (d Dialect) AppendQuery(dst []byte, clientQuery, sort string, w translate.Window) []byte {
	for _, part := range [...]string{clientQuery, sort} {
		if part != "" {
			dst = append(dst, part...)
			dst = append(dst, '&')
		}
	}
	if w.Keyset() {
		dst = d.appendKeyset(dst, w.After)
	} else if d.Offsets() {
		dst = append(dst, d.Offset...)
		dst = append(dst, '=')
		dst = strconv.AppendInt(dst, int64(w.Start), 10)
	} else {
		page := w.Page()
		if d.FromZero {
			page--
		}
		dst = append(dst, d.PageParam()...)
		dst = append(dst, '=')
		dst = strconv.AppendInt(dst, int64(page), 10)
	}
	dst = append(dst, '&')
	dst = append(dst, d.PerPageParam()...)
	dst = append(dst, '=')
	return strconv.AppendInt(dst, int64(w.Size), 10)
}
