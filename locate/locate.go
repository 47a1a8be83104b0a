// Package locate finds where a cursor's records start in a list that a
// backend pages only by offset and sorts by id: the first offset whose id
// is above the cursor id, the boundary. A Search keeps a bracket of
// offsets around it, from a Hint of where ids were seen before (the
// engine's position index makes it) and from the backend's answers
// (Search.Observe), and plans each next call (Search.Window): the page
// itself once the boundary is known, else a gallop, a leap to where the
// density of ids puts the cursor (package estimate), an interpolation or
// a bisection.
//
// It makes no call and keeps nothing past one page: the paging engine
// (package translate) reads, checks and counts the answers, and gives the
// search only what they prove.
package locate

import "github.com/helpdesk-gateway/gateway/estimate"

// Sample is a record seen at an offset of the list.
type Sample struct {
	Off int
	ID  string
}

// Hint is what is known, before a page's first call, of the neighbourhood
// of an id: where ids were seen, as hints that answers verify.
type Hint struct {
	Lo, Hi       Sample // the nearest samples at or below, and above, the id
	HasLo, HasHi bool
	End          int             // an offset at or past the list's end; -1 when unknown
	Spread       estimate.Spread // how irregular the list's gaps are

	// What places an id not seen: the list's lowest sample (base, below
	// Lo) and the samples just below Lo (near, ascending), to measure the
	// density of ids far and near. See Below.
	base    Sample
	hasBase bool
	near    [nearSamples]Sample
	nNear   int
}

// nearSamples is how many samples below Lo a hint carries, for the
// density near the cursor at several distances.
const nearSamples = 8

// Below gives the hint the samples at and below the id, ascending by
// offset, the last of them Lo: the lowest, and a ladder of those near Lo
// at distances that grow by half at least, which reaches from a few
// records to many pages below Lo however densely they lie there. It looks
// at a bounded number of samples.
func (h *Hint) Below(below []Sample) {
	if len(below) < 2 {
		return
	}
	h.base, h.hasBase = below[0], true
	lo := below[len(below)-1].Off
	var rev [nearSamples]Sample
	n, dist := 0, 8
	for k := len(below) - 2; k >= 0 && k >= len(below)-1-nearScan && n < nearSamples; k-- {
		if d := lo - below[k].Off; d >= dist {
			rev[n] = below[k]
			n++
			dist = d + d/2
		}
	}
	for k := range n {
		h.near[k] = rev[n-1-k]
	}
	h.nNear = n
}

// nearScan bounds the samples Below looks at.
const nearScan = 256
