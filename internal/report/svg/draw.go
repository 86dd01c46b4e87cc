package svg

import (
	"bytes"
	"fmt"
	"math"
	"strings"
)

// Colours of everything that is not a series.
const (
	inkTitle = "#111111"
	inkText  = "#333333"
	inkTick  = "#555555"
	inkAxis  = "#888888"
	inkGrid  = "#e6e6e6"
	inkRef   = "#666666"
	// bandOpacity keeps the bands of overlapping series distinguishable.
	bandOpacity = "0.18"
	// halo outlines reference-line labels in white so that they read over lines.
	halo = ` paint-order="stroke" stroke="#ffffff" stroke-width="3" stroke-linejoin="round"`
)

// colour returns series i's colour, cycling through the palette.
func colour(i int) string { return palette[i%len(palette)] }

// drawChart draws c as laid out by l. id prefixes the ids of the chart's
// elements, so that several charts can share one document.
func drawChart(b *bytes.Buffer, c Chart, l *layout, id string) {
	drawHeader(b, c, l)
	fmt.Fprintf(b, `<defs><clipPath id="%s-plot"><rect x="%s" y="%s" width="%s" height="%s"/></clipPath></defs>`+"\n",
		id, num(l.left), num(l.top), num(l.right-l.left), num(l.bottom-l.top))
	drawGrid(b, l)
	fmt.Fprintf(b, `<g clip-path="url(#%s-plot)">`+"\n", id)
	for i, a := range c.Areas {
		drawPolygons(b, a.X, a.Lo, a.Hi, areaFill(c, i), areaOpacity, l)
	}
	drawRefLines(b, c, l)
	for i, s := range c.Series {
		drawBand(b, s, colour(i), l)
	}
	for i, s := range c.Series {
		drawLine(b, s, colour(i), l)
	}
	b.WriteString("</g>\n")
	drawRefLabels(b, c, l)
	drawAxes(b, c, l)
}

// text writes s at (x, y) with the given extra attributes.
func text(b *bytes.Buffer, x, y float64, attrs, s string) {
	fmt.Fprintf(b, `<text x="%s" y="%s"%s>%s</text>`+"\n", num(x), num(y), attrs, esc(s))
}

// line writes a straight line from (x1, y1) to (x2, y2).
func line(b *bytes.Buffer, x1, y1, x2, y2 float64, attrs string) {
	fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s"%s/>`+"\n", num(x1), num(y1), num(x2), num(y2), attrs)
}

// drawHeader draws the title and the legend: per series a swatch of its
// band with its line across, then its name.
func drawHeader(b *bytes.Buffer, c Chart, l *layout) {
	if c.Title != "" {
		text(b, pad, l.titleY, fmt.Sprintf(` font-size="%d" font-weight="bold" fill="%s"`, titleSize, inkTitle), c.Title)
	}
	for i, it := range l.legend {
		if it.area {
			fmt.Fprintf(b, `<rect x="%s" y="%s" width="%d" height="10" fill="%s" fill-opacity="%s"/>`+"\n",
				num(it.x), num(it.y-5), swatchSize, areaFill(c, i-len(c.Series)), areaOpacity)
			text(b, it.x+swatchSize+6, it.y+4, fmt.Sprintf(` font-size="%d" fill="%s"`, labelSize, inkText), it.label)
			continue
		}
		col := colour(i)
		fmt.Fprintf(b, `<rect x="%s" y="%s" width="%d" height="10" fill="%s" fill-opacity="%s"/>`+"\n",
			num(it.x), num(it.y-5), swatchSize, col, bandOpacity)
		line(b, it.x, it.y, it.x+swatchSize, it.y, fmt.Sprintf(` stroke="%s" stroke-width="2"`, col))
		text(b, it.x+swatchSize+6, it.y+4, fmt.Sprintf(` font-size="%d" fill="%s"`, labelSize, inkText), it.label)
	}
}

// drawGrid draws light lines at every tick, under everything else.
func drawGrid(b *bytes.Buffer, l *layout) {
	attrs := fmt.Sprintf(` stroke="%s" stroke-width="1" shape-rendering="crispEdges"`, inkGrid)
	for _, t := range l.y.ticks {
		line(b, l.left, l.sy(t), l.right, l.sy(t), attrs)
	}
	for _, t := range l.x.ticks {
		line(b, l.sx(t), l.top, l.sx(t), l.bottom, attrs)
	}
}

// drawAxes draws the left and bottom axes with their ticks, tick labels and
// axis labels.
func drawAxes(b *bytes.Buffer, c Chart, l *layout) {
	axisAttrs := fmt.Sprintf(` stroke="%s" stroke-width="1" shape-rendering="crispEdges"`, inkAxis)
	line(b, l.left, l.top, l.left, l.bottom, axisAttrs)
	line(b, l.left, l.bottom, l.right, l.bottom, axisAttrs)
	tickAttrs := fmt.Sprintf(` font-size="%d" fill="%s"`, tickSize, inkTick)
	for i, t := range l.y.ticks {
		y := l.sy(t)
		line(b, l.left-4, y, l.left, y, axisAttrs)
		text(b, l.left-7, y+4, tickAttrs+` text-anchor="end"`, l.y.labels[i])
	}
	for i, t := range l.x.ticks {
		x := l.sx(t)
		line(b, x, l.bottom, x, l.bottom+4, axisAttrs)
		text(b, x, l.bottom+17, tickAttrs+` text-anchor="middle"`, l.x.labels[i])
	}
	labelAttrs := fmt.Sprintf(` font-size="%d" fill="%s" text-anchor="middle"`, labelSize, inkText)
	if c.XLabel != "" {
		text(b, (l.left+l.right)/2, l.bottom+36, labelAttrs, c.XLabel)
	}
	if c.YLabel != "" {
		x, y := float64(pad+labelSize), (l.top+l.bottom)/2
		fmt.Fprintf(b, `<text transform="translate(%s,%s) rotate(-90)"%s>%s</text>`+"\n",
			num(x), num(y), labelAttrs, esc(c.YLabel))
	}
}

// drawBand draws s's band as one translucent polygon per run of points
// where X, Lo and Hi are all finite: along Hi, then back along Lo.
func drawBand(b *bytes.Buffer, s Series, col string, l *layout) {
	drawPolygons(b, s.X, s.Lo, s.Hi, col, bandOpacity, l)
}

// drawPolygons fills the region from lo to hi over x, one polygon per run
// of points where all three are finite.
func drawPolygons(b *bytes.Buffer, x, lo, hi []float64, col, opacity string, l *layout) {
	start := -1
	for i := 0; i <= len(x); i++ {
		ok := i < len(x) && finite(x[i]) && finite(lo[i]) && finite(hi[i])
		if ok && start < 0 {
			start = i
		}
		if ok || start < 0 {
			continue
		}
		if i-start >= 2 {
			var pts []string
			for j := start; j < i; j++ {
				pts = append(pts, num(l.sx(x[j]))+","+num(l.sy(hi[j])))
			}
			for j := i - 1; j >= start; j-- {
				pts = append(pts, num(l.sx(x[j]))+","+num(l.sy(lo[j])))
			}
			fmt.Fprintf(b, `<polygon points="%s" fill="%s" fill-opacity="%s" stroke="none"/>`+"\n",
				strings.Join(pts, " "), col, opacity)
		}
		start = -1
	}
}

// drawLine draws s's median as one path, starting a new subpath after each
// gap. A point alone between gaps becomes a dot (a zero-length segment
// with round caps). A series with nothing to draw gets no path.
func drawLine(b *bytes.Buffer, s Series, col string, l *layout) {
	var d strings.Builder
	run := 0
	for i := range s.X {
		if !finite(s.X[i]) || !finite(s.Mid[i]) {
			if run == 1 {
				d.WriteString("h0")
			}
			run = 0
			continue
		}
		cmd := "L"
		if run == 0 {
			cmd = "M"
		}
		d.WriteString(cmd + num(l.sx(s.X[i])) + "," + num(l.sy(s.Mid[i])))
		run++
	}
	if run == 1 {
		d.WriteString("h0")
	}
	if d.Len() == 0 {
		return
	}
	fmt.Fprintf(b, `<path d="%s" fill="none" stroke="%s" stroke-width="2" stroke-linejoin="round" stroke-linecap="round"/>`+"\n",
		d.String(), col)
}

// drawRefLines draws the marks (dashed, vertical) and the horizontal lines
// (dotted) that lie within the axes' ranges.
func drawRefLines(b *bytes.Buffer, c Chart, l *layout) {
	for _, m := range c.Marks {
		if l.inX(m.At) {
			line(b, l.sx(m.At), l.top, l.sx(m.At), l.bottom,
				fmt.Sprintf(` stroke="%s" stroke-width="1.2" stroke-dasharray="6 4"`, inkRef))
		}
	}
	for _, m := range c.HLines {
		if l.inY(m.At) {
			line(b, l.left, l.sy(m.At), l.right, l.sy(m.At),
				fmt.Sprintf(` stroke="%s" stroke-width="1.5" stroke-dasharray="2 3"`, inkRef))
		}
	}
}

// drawRefLabels labels the reference lines: a mark's label at the top of
// the plot beside its line, moved down a row when it would overlap the
// previous mark's; a horizontal line's label at the right, above the line
// (below it when the line runs along the top).
func drawRefLabels(b *bytes.Buffer, c Chart, l *layout) {
	attrs := fmt.Sprintf(` font-size="%d" fill="%s"`, tickSize, inkText) + halo
	var rowEnd []float64 // right end of the last label in each row
	for _, m := range c.Marks {
		if !l.inX(m.At) || m.Label == "" {
			continue
		}
		x, w, anchor := l.sx(m.At)+4, textWidth(m.Label, tickSize), ""
		if x+w > l.right {
			x, anchor = x-8, ` text-anchor="end"`
		}
		from := x
		if anchor != "" {
			from = x - w
		}
		row := 0
		for row < len(rowEnd) && from < rowEnd[row]+4 {
			row++
		}
		if row == len(rowEnd) {
			rowEnd = append(rowEnd, 0)
		}
		rowEnd[row] = from + w
		text(b, x, l.top+12+float64(row)*14, attrs+anchor, m.Label)
	}
	var placed []float64 // baselines of the horizontal lines' labels
	for _, m := range c.HLines {
		if !l.inY(m.At) || m.Label == "" {
			continue
		}
		y := l.sy(m.At) - 5
		if y-tickSize < l.top || collides(placed, y) {
			y = l.sy(m.At) + tickSize + 3 // below the line
		}
		placed = append(placed, y)
		text(b, l.right-4, y, attrs+` text-anchor="end"`, m.Label)
	}
}

// collides tells whether a label on baseline y would overlap one of the
// labels on the placed baselines.
func collides(placed []float64, y float64) bool {
	for _, p := range placed {
		if math.Abs(p-y) < tickSize+2 {
			return true
		}
	}
	return false
}
