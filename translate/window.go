package translate

// Window is one backend call: the records at offsets [Start, Start+Size).
// A backend that pages by number serves only windows that start on a
// multiple of their size (Aligned), as page Page of size Size; one that
// takes an offset and a limit serves any.
type Window struct {
	Start, Size int
	// After, when set, makes a keyset window: the Size records with id
	// above After, in id order, asked by id instead of by offset; Start
	// is then -1. A cursor id is never empty, so "" means an offset or a
	// page window.
	After string
}

// Keyset reports whether the window is asked by id (records above After).
func (w Window) Keyset() bool { return w.After != "" }

// Page is the 1-based number of the window as a page of size Size; it
// names the window only when it is Aligned.
func (w Window) Page() int { return w.Start/max(w.Size, 1) + 1 }

// Aligned reports whether the window is a whole page of its size, the
// only windows a page-numbered backend can be asked for.
func (w Window) Aligned() bool { return w.Size > 0 && w.Start%w.Size == 0 }

// PlanOffsetWindow returns the call that covers offsets [from, to) on a
// backend that takes any offset: exactly that range, cut to maxSize, so
// that no record is fetched without need. The engine stitches on what a
// cut leaves out.
func PlanOffsetWindow(from, to, maxSize int) Window {
	from = max(from, 0)
	return Window{Start: from, Size: min(max(to-from, 1), max(maxSize, 1))}
}

// PlanReadahead returns the backend page that covers offsets [from, to)
// and, as far as one page up to maxSize can, the offsets up to far: the
// window of a walk read ahead. A page must start on a multiple of its
// size, so the records between that start and from are fetched for
// nothing; among the sizes that cover [from, to) and stay within far, it
// takes the largest whose waste is at most 1/32 of the page, else the one
// wasting the least share of its page. It looks at a bounded number of
// sizes, so a plan costs microseconds at any offset.
func PlanReadahead(from, to, far, maxSize int) Window {
	from = max(from, 0)
	to = max(to, from+1)
	width := to - from
	hi := min(far-from, maxSize)
	if hi <= width {
		return PlanWindow(from, to, maxSize)
	}
	best, bestWaste := Window{}, 2.0
	for s, looked := hi, 0; s >= width && looked < readaheadSizes; s, looked = s-1, looked+1 {
		r := from % s
		if r+width > s {
			continue
		}
		if r*32 <= s {
			return Window{Start: from - r, Size: s}
		}
		if waste := float64(r) / float64(s); waste < bestWaste {
			best, bestWaste = Window{Start: from - r, Size: s}, waste
		}
	}
	if best.Size == 0 {
		return PlanWindow(from, to, maxSize)
	}
	return best
}

// readaheadSizes bounds the page sizes PlanReadahead looks at.
const readaheadSizes = 4096

// PlanWindow returns the backend page that covers offsets [from, to) in one
// call with the smallest page size up to maxSize, so that no record is
// fetched without need. When no page size up to maxSize covers the whole
// range, it returns the page that covers offset from and as many of the
// offsets after it as possible; the engine stitches the rest on.
func PlanWindow(from, to, maxSize int) Window {
	if from < 0 {
		from = 0
	}
	if to <= from {
		to = from + 1
	}
	if maxSize < 1 {
		maxSize = 1
	}
	width := to - from
	// A page of size s covers the range when from's place in its page leaves
	// room for the whole width. Past small offsets a fitting size lies
	// within a few steps of width, so this loop is short.
	for s := width; s <= maxSize; s++ {
		if from%s+width <= s {
			return Window{Start: from / s * s, Size: s}
		}
	}
	best, bestCover := 1, 0
	for s := 1; s <= maxSize; s++ {
		if cover := s - from%s; cover > bestCover {
			best, bestCover = s, cover
		}
	}
	return Window{Start: from / best * best, Size: best}
}
