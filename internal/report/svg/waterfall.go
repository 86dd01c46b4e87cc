package svg

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
)

// Step is one bar of a waterfall. A change (Total false) moves the running
// level by Value, up when positive and down when negative, and its bar
// spans from where the previous bar ended to the new level. A total
// (Total true) is a bar from zero to the running level; its Value, when
// it is the first step, sets the level (a starting total), and is
// otherwise ignored: a total shows the sum so far, it cannot contradict it.
type Step struct {
	Label string
	Value float64
	Total bool
}

// Waterfall is a chart of a starting total, the changes from it and the
// totals they add up to: a cost and the savings that bring it down, say.
type Waterfall struct {
	Title, YLabel string
	Steps         []Step
	Width, Height int // pixels; 0 means 720 x 440
}

// WaterfallBar is where one step's bar lies on the value axis: from From
// to To (To < From for a step down).
type WaterfallBar struct {
	Label    string
	From, To float64
	Total    bool
}

var errNoSteps = errors.New("no steps")

// WaterfallBars places the steps' bars: each change starts where the
// previous bar ended, each total runs from zero to the level so far.
func WaterfallBars(steps []Step) ([]WaterfallBar, error) {
	if len(steps) == 0 {
		return nil, errNoSteps
	}
	level := 0.0
	out := make([]WaterfallBar, 0, len(steps))
	for i, s := range steps {
		if !finite(s.Value) {
			return nil, fmt.Errorf("step %d %q: value %v is not finite", i, s.Label, s.Value)
		}
		if s.Total {
			if i == 0 {
				level = s.Value
			}
			out = append(out, WaterfallBar{Label: s.Label, From: 0, To: level, Total: true})
			continue
		}
		out = append(out, WaterfallBar{Label: s.Label, From: level, To: level + s.Value})
		level += s.Value
	}
	return out, nil
}

// Waterfall colours: totals blue, steps down bluish green, steps up
// vermillion (Okabe-Ito).
const (
	inkTotal = "#0072B2"
	inkDown  = "#009E73"
	inkUp    = "#D55E00"
)

// WriteWaterfall renders w as an SVG document: one vertical bar per step
// in order, a dotted connector from each bar's end to the next bar, the
// value above (or below) each bar and the step's label under it, on a
// value axis that always includes zero. Equal charts give byte-identical
// output; nothing is written when w is invalid.
func WriteWaterfall(out io.Writer, w Waterfall) error {
	bars, err := WaterfallBars(w.Steps)
	if err != nil {
		return fmt.Errorf("waterfall %q: %w", w.Title, err)
	}
	l, err := waterfallLayout(w, bars)
	if err != nil {
		return fmt.Errorf("waterfall %q: %w", w.Title, err)
	}
	var b bytes.Buffer
	header(&b, l.w, l.h, w.Title)
	if w.Title != "" {
		text(&b, pad, l.titleY, fmt.Sprintf(` font-size="%d" font-weight="bold" fill="%s"`, titleSize, inkTitle), w.Title)
	}
	fmt.Fprintf(&b, `<defs><clipPath id="c0-plot"><rect x="%s" y="%s" width="%s" height="%s"/></clipPath></defs>`+"\n",
		num(l.left), num(l.top), num(l.right-l.left), num(l.bottom-l.top))
	attrs := fmt.Sprintf(` stroke="%s" stroke-width="1" shape-rendering="crispEdges"`, inkGrid)
	for _, t := range l.y.ticks {
		line(&b, l.left, l.sy(t), l.right, l.sy(t), attrs)
	}
	drawWaterfallBars(&b, bars, l)
	drawWaterfallAxes(&b, w, bars, l)
	b.WriteString("</svg>\n")
	return flush(out, &b)
}

// waterfallLayout places the title, the value axis (covering zero and
// every bar's ends, padded by 8% above and below) and the plot area.
func waterfallLayout(w Waterfall, bars []WaterfallBar) (*layout, error) {
	width, height, err := chartSize(Chart{Width: w.Width, Height: w.Height})
	if err != nil {
		return nil, err
	}
	e := extent{}
	e.add(0)
	for _, b := range bars {
		e.add(b.From)
		e.add(b.To)
	}
	span := e.hi - e.lo
	if span == 0 {
		span = 1
	}
	lo, hi := e.lo, e.hi+0.08*span
	if lo < 0 {
		lo -= 0.08 * span
	}
	l := &layout{w: float64(width), h: float64(height), top: pad + 8}
	if w.Title != "" {
		l.titleY = pad + titleSize
		l.top = l.titleY + 18
	}
	l.bottom = l.h - 40
	l.y = newAxis(lo, hi, int((l.bottom-l.top)/45))
	l.left = pad + widest(l.y.labels, tickSize) + 8
	if w.YLabel != "" {
		l.left += 20
	}
	l.right = l.w - 16
	l.x = axis{lo: 0, hi: float64(len(bars))}
	if l.right-l.left < minPlot || l.bottom-l.top < minPlot {
		return nil, fmt.Errorf("%w: %dx%d px leaves a %.0fx%.0f px plot, want at least %d px each way",
			errTooSmall, width, height, l.right-l.left, l.bottom-l.top, minPlot)
	}
	return l, nil
}

// drawWaterfallBars draws each bar, its value and the connector to the next.
func drawWaterfallBars(b *bytes.Buffer, bars []WaterfallBar, l *layout) {
	slot := (l.right - l.left) / float64(len(bars))
	barW := slot * 0.6
	valueAttrs := fmt.Sprintf(` font-size="%d" fill="%s" text-anchor="middle"`, tickSize, inkText)
	for i, bar := range bars {
		x := l.left + float64(i)*slot + (slot-barW)/2
		top, bottom := l.sy(math.Max(bar.From, bar.To)), l.sy(math.Min(bar.From, bar.To))
		col := inkTotal
		switch {
		case bar.Total:
		case bar.To < bar.From:
			col = inkDown
		default:
			col = inkUp
		}
		fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s: %s</title></rect>`+"\n",
			num(x), num(top), num(barW), num(math.Max(bottom-top, 1)), col, esc(bar.Label), esc(stepValue(bar)))
		y := top - 4
		if !bar.Total && bar.To < bar.From || bar.Total && bar.To < 0 {
			y = bottom + tickSize + 2
		}
		text(b, x+barW/2, y, valueAttrs, stepValue(bar))
		if i+1 < len(bars) {
			line(b, x+barW, l.sy(bar.To), x+slot, l.sy(bar.To),
				fmt.Sprintf(` stroke="%s" stroke-width="1" stroke-dasharray="2 2"`, inkRef))
		}
	}
}

// drawWaterfallAxes draws the value axis with its ticks, the zero line and
// the bars' labels under the plot.
func drawWaterfallAxes(b *bytes.Buffer, w Waterfall, bars []WaterfallBar, l *layout) {
	axisAttrs := fmt.Sprintf(` stroke="%s" stroke-width="1" shape-rendering="crispEdges"`, inkAxis)
	line(b, l.left, l.top, l.left, l.bottom, axisAttrs)
	line(b, l.left, l.sy(0), l.right, l.sy(0), axisAttrs)
	tickAttrs := fmt.Sprintf(` font-size="%d" fill="%s"`, tickSize, inkTick)
	for i, t := range l.y.ticks {
		y := l.sy(t)
		line(b, l.left-4, y, l.left, y, axisAttrs)
		text(b, l.left-7, y+4, tickAttrs+` text-anchor="end"`, l.y.labels[i])
	}
	slot := (l.right - l.left) / float64(len(bars))
	labelAttrs := fmt.Sprintf(` font-size="%d" fill="%s" text-anchor="middle"`, labelSize, inkText)
	for i, bar := range bars {
		text(b, l.left+(float64(i)+0.5)*slot, l.bottom+20, labelAttrs, bar.Label)
	}
	if w.YLabel != "" {
		x, y := float64(pad+labelSize), (l.top+l.bottom)/2
		fmt.Fprintf(b, `<text transform="translate(%s,%s) rotate(-90)"%s>%s</text>`+"\n",
			num(x), num(y), labelAttrs, esc(w.YLabel))
	}
}

// stepValue is a bar's figure: a total's level, a change's signed size.
func stepValue(bar WaterfallBar) string {
	if bar.Total {
		return group0(bar.To)
	}
	d := bar.To - bar.From
	if d < 0 {
		return "−" + group0(-d)
	}
	return "+" + group0(d)
}

// group0 formats v with no decimals and thousands separators.
func group0(v float64) string {
	s := fmt.Sprintf("%.0f", math.Abs(v))
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if v < 0 && s != "0" {
		return "-" + string(out)
	}
	return string(out)
}
