package svg

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Series is one line: a median (Mid) with a band from Lo to Hi, all indexed like X.
// NaN values in Mid/Lo/Hi are gaps (the line breaks there).
//
// Points are joined in slice order, so X should be increasing. A NaN or
// infinite X is a gap in both the line and the band; a non-finite Lo or Hi
// breaks only the band, a non-finite Mid only the line.
type Series struct {
	Name           string
	X, Mid, Lo, Hi []float64
}

// Chart is a titled plot of several series.
type Chart struct {
	Title, XLabel, YLabel string
	Series                []Series
	// Optional fixed axis ranges; when Min == Max the range is taken from the data with a little padding.
	// A range taken from the data also covers Marks (x) and HLines (y).
	XMin, XMax, YMin, YMax float64
	// Optional vertical reference lines (for example at x=100 and x=130), drawn dashed with a label.
	Marks []Mark
	// Optional horizontal reference lines (for example a lower bound), drawn dotted with a label.
	HLines []Mark
	// XLog draws x on a log scale (logx.go): values that are not positive
	// are gaps, and a fixed range must be positive.
	XLog bool
	// Optional filled areas from Lo to Hi, drawn under the series (to
	// shade what a level is made of, say), each with a legend swatch.
	Areas         []Area
	Width, Height int // pixels; 0 means 720 x 440
}

// Area is a region between Lo and Hi over X, filled with Fill (a colour;
// "" takes the palette's colour after the series'). Points where X, Lo or
// Hi is not finite are gaps.
type Area struct {
	Name      string
	Fill      string
	X, Lo, Hi []float64
}

// areaOpacity lets lines drawn over an area stand out from it.
const areaOpacity = "0.35"

// areaFill is area i's colour in chart c.
func areaFill(c Chart, i int) string {
	if c.Areas[i].Fill != "" {
		return c.Areas[i].Fill
	}
	return colour(len(c.Series) + i)
}

// Mark is a reference line at At on one axis, labelled with Label. A mark
// whose At is not finite or lies outside the axis range is not drawn.
type Mark struct {
	At    float64
	Label string
}

const (
	defaultWidth  = 720
	defaultHeight = 440
	minPlot       = 40 // smallest plot area, in pixels, on either side
)

// palette is Okabe and Ito's colour-blind-safe set, ordered so that the
// first series get the colours that read best on white, with Tol's wine and
// grey added so that nine or ten series stay distinct; yellow is last.
var palette = [...]string{
	"#0072B2", // blue
	"#D55E00", // vermillion
	"#009E73", // bluish green
	"#E69F00", // orange
	"#CC79A7", // reddish purple
	"#56B4E9", // sky blue
	"#000000", // black
	"#882255", // wine
	"#999999", // grey
	"#F0E442", // yellow
}

var (
	errNoSeries = errors.New("no series")
	errLength   = errors.New("length mismatch")
	errSize     = errors.New("size must be positive")
	errTooSmall = errors.New("size too small")
	errRange    = errors.New("invalid axis range")
)

// Write renders c as an SVG document. Equal charts give byte-identical output.
// Nothing is written when c is invalid.
func Write(w io.Writer, c Chart) error {
	c, l, err := prepare(c)
	if err != nil {
		if c.Title == "" {
			return fmt.Errorf("chart: %w", err)
		}
		return fmt.Errorf("chart %q: %w", c.Title, err)
	}
	var b bytes.Buffer
	header(&b, l.w, l.h, c.Title)
	drawChart(&b, c, l, "c0")
	b.WriteString("</svg>\n")
	return flush(w, &b)
}

// prepare maps a log axis's values to logarithms and lays the chart out.
func prepare(c Chart) (Chart, *layout, error) {
	c, err := logX(c)
	if err != nil {
		return c, nil, err
	}
	l, err := newLayout(c)
	return c, l, err
}

// header opens the document: a white page of w x h pixels.
func header(b *bytes.Buffer, w, h float64, title string) {
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %s %s" font-family="sans-serif">`+"\n",
		num(w), num(h), num(w), num(h))
	if title != "" {
		fmt.Fprintf(b, "<title>%s</title>\n", esc(title))
	}
	fmt.Fprintf(b, `<rect width="%s" height="%s" fill="#ffffff"/>`+"\n", num(w), num(h))
}

func flush(w io.Writer, b *bytes.Buffer) error {
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("write svg: %w", err)
	}
	return nil
}

// validate checks what newLayout cannot repair: the series and their lengths.
func validate(c Chart) error {
	if len(c.Series) == 0 {
		return errNoSeries
	}
	for i, s := range c.Series {
		for _, f := range []struct {
			name string
			v    []float64
		}{{"mid", s.Mid}, {"lo", s.Lo}, {"hi", s.Hi}} {
			if len(f.v) != len(s.X) {
				return fmt.Errorf("series %d %q: %w: %s has %d values, x has %d",
					i, s.Name, errLength, f.name, len(f.v), len(s.X))
			}
		}
	}
	for i, a := range c.Areas {
		if len(a.Lo) != len(a.X) || len(a.Hi) != len(a.X) {
			return fmt.Errorf("area %d %q: %w: lo has %d values, hi %d, x %d", i, a.Name, errLength, len(a.Lo), len(a.Hi), len(a.X))
		}
	}
	return nil
}

// chartSize applies the 720 x 440 default to a zero width or height.
func chartSize(c Chart) (w, h int, err error) {
	if c.Width < 0 || c.Height < 0 {
		return 0, 0, fmt.Errorf("%w: width %d, height %d", errSize, c.Width, c.Height)
	}
	w, h = c.Width, c.Height
	if w == 0 {
		w = defaultWidth
	}
	if h == 0 {
		h = defaultHeight
	}
	return w, h, nil
}

// extent is the smallest interval holding the finite values added to it.
type extent struct {
	lo, hi float64
	ok     bool
}

func (e *extent) add(v float64) {
	if !finite(v) {
		return
	}
	if !e.ok {
		e.lo, e.hi, e.ok = v, v, true
		return
	}
	e.lo, e.hi = math.Min(e.lo, v), math.Max(e.hi, v)
}

// dataExtents returns what the data and reference lines span on each axis.
// Y values count only where X is finite, as only those are drawn.
func dataExtents(c Chart) (x, y extent) {
	for _, s := range c.Series {
		for i, xv := range s.X {
			if !finite(xv) {
				continue
			}
			x.add(xv)
			y.add(s.Mid[i])
			y.add(s.Lo[i])
			y.add(s.Hi[i])
		}
	}
	for _, a := range c.Areas {
		for i, xv := range a.X {
			if finite(xv) {
				x.add(xv)
				y.add(a.Lo[i])
				y.add(a.Hi[i])
			}
		}
	}
	for _, m := range c.Marks {
		x.add(m.At)
	}
	for _, m := range c.HLines {
		y.add(m.At)
	}
	return x, y
}

// axisRange returns [lo, hi] fixed by the caller or, when lo == hi, taken
// from e and padded by 4% of its span on each side.
func axisRange(lo, hi float64, e extent) (float64, float64, error) {
	switch {
	case !finite(lo) || !finite(hi):
		return 0, 0, fmt.Errorf("%w: min %v, max %v", errRange, lo, hi)
	case lo > hi:
		return 0, 0, fmt.Errorf("%w: min %v > max %v", errRange, lo, hi)
	case lo < hi:
		return lo, hi, nil
	case !e.ok:
		return 0, 1, nil
	}
	pad := float64((e.hi - e.lo) * 0.04) // rounded: see layout.sx
	if pad == 0 || !finite(pad) {
		pad = math.Max(math.Abs(e.lo)*0.1, 1)
	}
	if !finite(e.lo-pad) || !finite(e.hi+pad) {
		return e.lo, e.hi, nil
	}
	return e.lo - pad, e.hi + pad, nil
}

// num formats a pixel coordinate with two decimals, dropping trailing zeros.
func num(v float64) string {
	s := strconv.FormatFloat(v, 'f', 2, 64)
	s = strings.TrimRight(s, "0")
	s = strings.TrimSuffix(s, ".")
	if s == "-0" {
		return "0"
	}
	return s
}

// esc escapes s for XML text and attribute values; characters XML forbids
// become U+FFFD.
func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // a strings.Builder never fails
	return b.String()
}

// textWidth estimates the width of s in a sans-serif font of the given size.
func textWidth(s string, size float64) float64 {
	return float64(float64(len([]rune(s))) * size * 0.6) // rounded: see layout.sx
}

// seriesName labels series i in the legend.
func seriesName(s Series, i int) string {
	if s.Name == "" {
		return "series " + strconv.Itoa(i+1)
	}
	return s.Name
}
