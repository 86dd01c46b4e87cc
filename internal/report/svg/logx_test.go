package svg

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// A log x axis puts decades equally apart, labels them in the data's
// units, and leaves out values that have no logarithm.
func TestLogXAxis(t *testing.T) {
	c := Chart{Title: "waits", XLog: true, Width: 900, Height: 380, Series: []Series{
		flatSeries("a", []float64{0, 0.01, 1, 10, 1000}, []float64{0.1, 0.2, 0.5, 0.9, 1}),
	}}
	lc, l, err := prepare(c)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(l.x.labels, []string{"0.01", "0.1", "1", "10", "100", "1000"}) {
		t.Errorf("labels %v", l.x.labels)
	}
	x1, x10, x100 := l.sx(0), l.sx(1), l.sx(2)
	if math.Abs((x10-x1)-(x100-x10)) > 1e-9 {
		t.Errorf("decades not equally apart: 1 at %g, 10 at %g, 100 at %g", x1, x10, x100)
	}
	if !math.IsNaN(lc.Series[0].X[0]) || c.Series[0].X[0] != 0 {
		t.Errorf("0 on a log axis: %g (the caller's series changed: %v)", lc.Series[0].X[0], c.Series[0].X)
	}
	svg := string(render(t, c))
	if !strings.Contains(svg, ">1000</text>") || !strings.Contains(svg, ">0.01</text>") {
		t.Error("tick labels not drawn")
	}
}

// Within a decade or two, ticks at 2 and 5 times the powers of ten give
// the axis enough labels; over many decades, every other decade or fewer.
func TestLogTicks(t *testing.T) {
	a := newLogAxis(math.Log10(0.5), math.Log10(30), 8)
	if !slices.Equal(a.labels, []string{"0.5", "1", "2", "5", "10", "20"}) {
		t.Errorf("0.5 to 30: %v", a.labels)
	}
	a = newLogAxis(-2, 8, 6)
	if !slices.Equal(a.labels, []string{"0.01", "1", "100", "10000", "1M", "100M"}) {
		t.Errorf("1e-2 to 1e8 in 6 ticks: %v", a.labels)
	}
}

func TestLogXRangeMustBePositive(t *testing.T) {
	c := Chart{XLog: true, XMin: 0, XMax: 10, Series: []Series{flatSeries("a", []float64{1, 2}, []float64{1, 2})}}
	if err := Write(&strings.Builder{}, c); err == nil || !strings.Contains(err.Error(), "want both positive") {
		t.Errorf("got %v", err)
	}
}

func flatSeries(name string, x, y []float64) Series {
	return Series{Name: name, X: x, Mid: y, Lo: y, Hi: y}
}
