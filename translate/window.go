package translate

// Window is one backend call: page Page (1-based) of size Size, holding
// the records at offsets [Start(), Start()+Size).
type Window struct{ Page, Size int }

// Start is the offset of the window's first record.
func (w Window) Start() int { return (w.Page - 1) * w.Size }

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
			return Window{Page: from/s + 1, Size: s}
		}
	}
	best, bestCover := 1, 0
	for s := 1; s <= maxSize; s++ {
		if cover := s - from%s; cover > bestCover {
			best, bestCover = s, cover
		}
	}
	return Window{Page: from/best + 1, Size: best}
}
