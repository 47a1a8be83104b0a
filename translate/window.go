package translate

import "math"

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

// PlanReadahead returns the backend call that reads a walk ahead: it
// covers offsets [from, to) (the cursor's record, a page and the one
// after it) and reaches toward far, never past it. Every record after the
// cursor's that the window holds is served: in pages cut from it, and
// what is left past its last whole page as the head of the page after,
// whose rest the engine reads with the next window. With offsets the
// window starts at from. A backend that pages by number can only be asked
// for a page that starts on a multiple of its size, so the records
// between that start and from are read for nothing: among the page sizes
// up to maxSize that reach at least half way to far, it takes the one
// that reads the most after the cursor for the least before it. It looks
// at a bounded number of sizes.
func PlanReadahead(from, to, far, maxSize int, offsets bool) Window {
	from = max(from, 0)
	to = max(to, from+1)
	width := to - from // the cursor's record, a page, and one more
	reach := min(far-from, maxSize)
	if reach <= width {
		if offsets {
			return PlanOffsetWindow(from, to, maxSize)
		}
		return PlanWindow(from, to, maxSize)
	}
	if offsets {
		return Window{Start: from, Size: reach}
	}
	best, bestScore := Window{}, math.Inf(-1)
	for s, looked := min(maxSize, far), 0; s >= width && looked < readaheadSizes; s, looked = s-1, looked+1 {
		r := from % s
		cover := s - r // from the cursor's record to the page's end
		if cover < width || cover > reach || 2*cover < reach {
			continue
		}
		// Records after the cursor's count for the window; those read
		// for nothing (before it, and the cursor's own) against it,
		// twice: a record read for nothing costs the backend, and so
		// does each call more, which steps through every record before
		// it again.
		if score := float64(cover-1) - 2*float64(r+1); score > bestScore {
			best, bestScore = Window{Start: from - r, Size: s}, score
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
