package html

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
)

// bar is one labelled value of a bar chart, in palette colour colour.
type bar struct {
	label    string
	value    float64
	colour   int
	decimals int // of the dollars shown
}

// Bar chart geometry, in pixels.
const (
	barHeight = 22
	barGap    = 8
	barLabelW = 300
	barPlotW  = 520
	barValueW = 120
	barTop    = 34
)

// bars draws a horizontal bar chart: one bar per item, its label on the
// left and its value on the right, longest bar = largest value. Colours
// follow the svg package's palette order.
func bars(id, title string, items []bar) template.HTML {
	peak := 0.0
	for _, b := range items {
		peak = max(peak, finiteOr(b.value, 0))
	}
	w := barLabelW + barPlotW + barValueW
	h := barTop + len(items)*(barHeight+barGap) + barGap
	var s strings.Builder
	fmt.Fprintf(&s, `<svg id="%s" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif">`+"\n", id, w, h, w, h)
	fmt.Fprintf(&s, "<title>%s</title>\n", template.HTMLEscapeString(title))
	fmt.Fprintf(&s, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", w, h)
	fmt.Fprintf(&s, `<text x="8" y="20" font-size="15" font-weight="bold" fill="#111111">%s</text>`+"\n", template.HTMLEscapeString(title))
	for i, b := range items {
		y := barTop + i*(barHeight+barGap)
		length := 0.0
		if peak > 0 {
			length = math.Max(0, finiteOr(b.value, 0)) / peak * barPlotW
		}
		fmt.Fprintf(&s, `<text x="%d" y="%d" font-size="12" fill="#333333" text-anchor="end">%s</text>`+"\n",
			barLabelW-8, y+barHeight-6, template.HTMLEscapeString(b.label))
		fmt.Fprintf(&s, `<rect x="%d" y="%d" width="%s" height="%d" fill="%s"><title>%s: %s</title></rect>`+"\n",
			barLabelW, y, strconv.FormatFloat(length, 'f', 2, 64), barHeight, barColours[b.colour%len(barColours)],
			template.HTMLEscapeString(b.label), dollarsTo(b.value, b.decimals))
		fmt.Fprintf(&s, `<text x="%s" y="%d" font-size="12" fill="#333333">%s</text>`+"\n",
			strconv.FormatFloat(barLabelW+length+6, 'f', 2, 64), y+barHeight-6, dollarsTo(b.value, b.decimals))
	}
	s.WriteString("</svg>\n")
	return template.HTML(s.String()) // every text above is escaped
}

// barColours is the Okabe-Ito order the svg package uses for series.
var barColours = []string{"#0072B2", "#D55E00", "#009E73", "#E69F00", "#CC79A7", "#56B4E9", "#000000", "#882255", "#999999"}

func dollars(v float64) string { return dollarsTo(v, 0) }

// dollarsTo formats v in dollars with the given decimals; "-" when v is
// not finite.
func dollarsTo(v float64, decimals int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return "$" + group(strconv.FormatFloat(v, 'f', decimals, 64))
}
