package translate

import "github.com/helpdesk-gateway/gateway/liststore"

// Read-ahead, its window sizes and the walk rule that keeps the
// consistency guarantee for pages cut from windows are the store's
// (liststore's walk.go): the engine asks the store whether a cursor
// continues a walk and which window holds its page (Engine.Page), reads
// ahead as much as the walk's state says (Walk.Readahead), and gives the
// store the answer to keep, counted here.

// keepBytes readies the answer a page was read ahead in to be kept as a
// window, once the fetcher has let go of its memory, and counts what it
// keeps alive: what the Keeper says it holds, or the ids and records with
// their headers. A liststore.WindowCopier is only lent the answer
// (Lender): it copies what it keeps in Walked, and the answer's memory
// goes back to the fetcher's pool with the request.
func (e *Engine) keepBytes(f Fetcher, w *liststore.StoredWindow) {
	var (
		source any
		bytes  int64
	)
	if l, ok := f.(Lender); ok {
		if _, copies := e.walks().(liststore.WindowCopier); copies {
			w.SetSource(l.Lend(w.Call), 0) // copied by Walked, before the page is written
			return
		}
	}
	if k, ok := f.(Keeper); ok {
		var n int
		source, n = k.Keep(w.Call)
		bytes = int64(n)
	} else {
		const header = int64(16 + 24) // a string's and a slice's
		for i, id := range w.IDs {
			bytes += int64(len(id)) + header
			if w.Records != nil {
				bytes += int64(len(w.Records[i]))
			}
		}
	}
	w.SetSource(source, bytes+int64(len(w.Floor)))
}
