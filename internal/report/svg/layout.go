package svg

import (
	"fmt"
	"math"
)

// Sizes, in pixels, of the text and of the space around the plot.
const (
	pad        = 12 // between the chart's edge and anything in it
	titleSize  = 15
	labelSize  = 12 // axis labels and legend
	tickSize   = 11 // tick labels and reference-line labels
	legendRow  = 18
	swatchSize = 18
)

// axis is one axis's range and its ticks, labelled.
type axis struct {
	lo, hi float64
	ticks  []float64
	labels []string
}

// newAxis picks about n nice ticks (at least 2, at most 10) over [lo, hi].
func newAxis(lo, hi float64, n int) axis {
	t, exp := niceTicks(lo, hi, max(2, min(n, 10)))
	return axis{lo: lo, hi: hi, ticks: t, labels: tickLabels(t, exp)}
}

// legendItem places one series's entry: x is the swatch's left edge, y the
// middle of its row.
type legendItem struct {
	x, y  float64
	label string
	area  bool // a filled area's swatch, without a line across
}

// layout is where everything of one chart goes, in the chart's own pixels.
type layout struct {
	w, h                     float64
	left, top, right, bottom float64 // edges of the plot area
	titleY                   float64 // baseline of the title
	x, y                     axis
	legend                   []legendItem
}

// newLayout checks c and places its title, legend, axes and plot area.
func newLayout(c Chart) (*layout, error) {
	w, h, err := chartSize(c)
	if err != nil {
		return nil, err
	}
	if err := validate(c); err != nil {
		return nil, err
	}
	xe, ye := dataExtents(c)
	xlo, xhi, err := axisRange(c.XMin, c.XMax, xe)
	if err != nil {
		return nil, fmt.Errorf("x axis: %w", err)
	}
	ylo, yhi, err := axisRange(c.YMin, c.YMax, ye)
	if err != nil {
		return nil, fmt.Errorf("y axis: %w", err)
	}
	l := &layout{w: float64(w), h: float64(h)}
	l.top = l.placeHeader(c)
	l.bottom = l.h - 28
	if c.XLabel != "" {
		l.bottom -= 18
	}
	l.y = newAxis(ylo, yhi, int((l.bottom-l.top)/45))
	l.left = pad + widest(l.y.labels, tickSize) + 8
	if c.YLabel != "" {
		l.left += 20
	}
	l.right = l.w - 16
	l.x = newAxis(xlo, xhi, int((l.right-l.left)/80))
	if c.XLog {
		l.x = newLogAxis(xlo, xhi, int((l.right-l.left)/80))
	}
	l.fitLastXLabel()
	if l.right-l.left < minPlot || l.bottom-l.top < minPlot {
		return nil, fmt.Errorf("%w: %dx%d px leaves a %.0fx%.0f px plot, want at least %d px each way",
			errTooSmall, w, h, l.right-l.left, l.bottom-l.top, minPlot)
	}
	return l, nil
}

// placeHeader places the title and the legend rows under it, wrapping the
// legend to the chart's width, and returns where the plot area may start.
func (l *layout) placeHeader(c Chart) float64 {
	y := float64(pad)
	if c.Title != "" {
		l.titleY = y + titleSize
		y = l.titleY + 8
	}
	x, row := float64(pad), y+legendRow/2
	for i, s := range c.Series {
		name := seriesName(s, i)
		width := swatchSize + 6 + textWidth(name, labelSize)
		if x > pad && x+width > l.w-pad {
			x, row = pad, row+legendRow
		}
		l.legend = append(l.legend, legendItem{x: x, y: row, label: name})
		x += width + 18
	}
	for _, a := range c.Areas {
		width := swatchSize + 6 + textWidth(a.Name, labelSize)
		if x > pad && x+width > l.w-pad {
			x, row = pad, row+legendRow
		}
		l.legend = append(l.legend, legendItem{x: x, y: row, label: a.Name, area: true})
		x += width + 18
	}
	return row + legendRow/2 + 10
}

// fitLastXLabel narrows the plot so that the last x tick label, centred on
// its tick, stays inside the chart.
func (l *layout) fitLastXLabel() {
	n := len(l.x.ticks)
	if n == 0 {
		return
	}
	frac := (l.x.ticks[n-1] - l.x.lo) / (l.x.hi - l.x.lo)
	room := l.w - 4 - textWidth(l.x.labels[n-1], tickSize)/2 - l.left
	if frac > 0 && float64(frac*(l.right-l.left)) > room {
		l.right = l.left + room/frac
	}
}

// widest returns the estimated width of the longest of labels.
func widest(labels []string, size float64) float64 {
	w := 0.0
	for _, s := range labels {
		w = math.Max(w, textWidth(s, size))
	}
	return w
}

// limit keeps pixel coordinates of far-away points small enough to print;
// they lie outside the clipped plot area either way.
const limit = 1e5

// sx maps a data x to a pixel column.
func (l *layout) sx(v float64) float64 {
	// The explicit conversions round each product, so that no platform
	// fuses it into a multiply-add and output is the same everywhere.
	p := l.left + float64((v-l.x.lo)/(l.x.hi-l.x.lo)*(l.right-l.left))
	return math.Max(-limit, math.Min(limit, p))
}

// sy maps a data y to a pixel row; y grows upwards.
func (l *layout) sy(v float64) float64 {
	p := l.bottom - float64((v-l.y.lo)/(l.y.hi-l.y.lo)*(l.bottom-l.top))
	return math.Max(-limit, math.Min(limit, p))
}

// inX and inY tell whether v lies within an axis's range.
func (l *layout) inX(v float64) bool { return finite(v) && v >= l.x.lo && v <= l.x.hi }
func (l *layout) inY(v float64) bool { return finite(v) && v >= l.y.lo && v <= l.y.hi }
