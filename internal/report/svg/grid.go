package svg

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// WriteGrid renders several charts as one SVG document laid out in a grid with the given number of columns.
//
// Charts fill the grid row by row. Each column is as wide as its widest
// chart and each row as tall as its tallest; a chart sits at the top left
// of its cell. columns larger than len(charts) is the same as len(charts).
// Nothing is written when any chart is invalid.
func WriteGrid(w io.Writer, charts []Chart, columns int) error {
	if len(charts) == 0 {
		return fmt.Errorf("grid: %w", errNoCharts)
	}
	if columns < 1 {
		return fmt.Errorf("grid: %w: %d columns", errColumns, columns)
	}
	columns = min(columns, len(charts))
	layouts := make([]*layout, len(charts))
	charts = append([]Chart(nil), charts...)
	for i, c := range charts {
		c, l, err := prepare(c)
		charts[i] = c
		if err != nil {
			if c.Title == "" {
				return fmt.Errorf("chart %d: %w", i, err)
			}
			return fmt.Errorf("chart %d %q: %w", i, c.Title, err)
		}
		layouts[i] = l
	}
	xs, ys, width, height := cells(layouts, columns)
	var b bytes.Buffer
	header(&b, width, height, "")
	for i, c := range charts {
		fmt.Fprintf(&b, `<g transform="translate(%s,%s)">`+"\n", num(xs[i%columns]), num(ys[i/columns]))
		drawChart(&b, c, layouts[i], "c"+strconv.Itoa(i))
		b.WriteString("</g>\n")
	}
	b.WriteString("</svg>\n")
	return flush(w, &b)
}

var (
	errNoCharts = errors.New("no charts")
	errColumns  = errors.New("columns must be positive")
)

// cells returns the left edge of each column, the top edge of each row and
// the size of the whole grid.
func cells(layouts []*layout, columns int) (xs, ys []float64, width, height float64) {
	rows := (len(layouts) + columns - 1) / columns
	colW := make([]float64, columns)
	rowH := make([]float64, rows)
	for i, l := range layouts {
		colW[i%columns] = max(colW[i%columns], l.w)
		rowH[i/columns] = max(rowH[i/columns], l.h)
	}
	for _, cw := range colW {
		xs = append(xs, width)
		width += cw
	}
	for _, rh := range rowH {
		ys = append(ys, height)
		height += rh
	}
	return xs, ys, width, height
}
