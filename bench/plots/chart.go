package main

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// chart is a line chart: axes with ticks, one polyline with markers per
// series, a legend. Only what the performance page needs.
type chart struct {
	title, xLabel, yLabel string
	logY                  bool
}

const (
	width, height         = 940, 420
	left, right, top, bot = 70, 240, 40, 60
)

// palette: colours that stay apart for common colour blindness (Okabe-Ito).
var palette = []string{"#000000", "#E69F00", "#0072B2", "#009E73", "#D55E00", "#CC79A7"}

func (c chart) svg(lines []series) string {
	xmin, xmax := math.Inf(1), math.Inf(-1)
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for _, s := range lines {
		for _, p := range s.points {
			xmin, xmax = min(xmin, p[0]), max(xmax, p[0])
			if !c.logY || p[1] > 0 {
				ymin, ymax = min(ymin, p[1]), max(ymax, p[1])
			}
		}
	}
	if c.logY {
		// Whole decades, with room, so that a line on a decade (keyset's
		// ten records a page) is drawn inside the frame, not on it.
		ymin, ymax = math.Pow(10, math.Floor(math.Log10(ymin*0.8))), math.Pow(10, math.Ceil(math.Log10(ymax*1.25)))
	} else {
		ymin, ymax = 0, niceCeil(ymax*1.1)
	}
	if xmax == xmin {
		xmax = xmin + 1
	}
	plotW, plotH := float64(width-left-right), float64(height-top-bot)
	px := func(x float64) float64 { return left + (x-xmin)/(xmax-xmin)*plotW }
	py := func(y float64) float64 {
		f := (y - ymin) / (ymax - ymin)
		if c.logY {
			f = (math.Log10(max(y, ymin)) - math.Log10(ymin)) / (math.Log10(ymax) - math.Log10(ymin))
		}
		return top + plotH*(1-f)
	}

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="14" font-weight="bold">%s</text>`+"\n", left, html.EscapeString(c.title))
	// Grid and ticks.
	for _, y := range c.yTicks(ymin, ymax) {
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", left, width-right, py(y), py(y))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", left-6, py(y), label(y))
	}
	for _, x := range xTicks(lines) {
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#ddd"/>`+"\n", px(x), px(x), top, height-bot)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", px(x), height-bot+16, label(x))
	}
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.0f" height="%.0f" fill="none" stroke="#333"/>`+"\n", left, top, plotW, plotH)
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", left+plotW/2, height-14, html.EscapeString(c.xLabel))
	fmt.Fprintf(&b, `<text transform="translate(16 %.1f) rotate(-90)" text-anchor="middle">%s</text>`+"\n", top+plotH/2, html.EscapeString(c.yLabel))
	// Series, each drawn wider than the ones after it, so that lines
	// which coincide (a gateway costing exactly what a _page walk costs)
	// show as nested stripes of their colours instead of hiding each other.
	for i, s := range lines {
		colour, w := palette[i%len(palette)], strokeWidth(i, len(lines))
		var pts []string
		for _, p := range s.points {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(p[0]), py(p[1])))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="%.1f" stroke-linejoin="round" points="%s"/>`+"\n", colour, w, strings.Join(pts, " "))
		for _, p := range s.points {
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="%.1f" fill="%s"><title>%s: %s</title></circle>`+"\n",
				px(p[0]), py(p[1]), w/2+1.5, colour, html.EscapeString(s.label), label(p[1]))
		}
	}
	// The legend, right of the frame, so that it hides no line.
	lx := width - right + 12
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="white" stroke="#ccc"/>`+"\n",
		lx-6, top, legendWidth(lines), 18*len(lines)+8)
	for i, s := range lines {
		colour, w := palette[i%len(palette)], strokeWidth(i, len(lines))
		ly := top + 13 + 18*i
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="%.1f"/>`+"\n", lx, lx+24, ly, ly, colour, w)
		fmt.Fprintf(&b, `<text x="%d" y="%d" dominant-baseline="middle">%s</text>`+"\n", lx+30, ly, html.EscapeString(s.label))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// strokeWidth is the width of series i of n: the last is 2 px, each
// before it 1.5 px wider, so any line drawn over it leaves its edges showing.
func strokeWidth(i, n int) float64 { return 2 + 1.5*float64(n-1-i) }

// legendWidth is a width for the legend's box: the longest label at
// about 6.2 px a character, after the sample line.
func legendWidth(lines []series) int {
	longest := 0
	for _, s := range lines {
		longest = max(longest, len(s.label))
	}
	return 42 + longest*62/10
}

// yTicks are powers of ten on a log axis, else five even steps.
func (c chart) yTicks(lo, hi float64) []float64 {
	var t []float64
	if c.logY {
		for v := lo; v <= hi*1.0001; v *= 10 {
			t = append(t, v)
		}
		return t
	}
	for i := range 6 {
		t = append(t, lo+(hi-lo)*float64(i)/5)
	}
	return t
}

// xTicks are the x values the series hold.
func xTicks(lines []series) []float64 {
	seen := map[float64]bool{}
	var t []float64
	for _, s := range lines {
		for _, p := range s.points {
			if !seen[p[0]] {
				seen[p[0]] = true
				t = append(t, p[0])
			}
		}
	}
	return t
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// label writes a number as short as it reads.
func label(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e9 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2g", v)
}
