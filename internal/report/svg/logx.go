package svg

import (
	"fmt"
	"math"
	"strconv"
)

// A chart with XLog draws x on a log scale: its x values, marks and fixed
// range are mapped to their base-10 logarithms before layout, and the
// ticks are placed and labelled in the original units (decades, with 2
// and 5 between them when the range spans few decades). Values that are
// not positive have no logarithm: they are gaps.

// logX returns c with x mapped to log10, or c itself without XLog.
func logX(c Chart) (Chart, error) {
	if !c.XLog {
		return c, nil
	}
	if c.XMin != c.XMax && (c.XMin <= 0 || c.XMax <= 0) {
		return c, fmt.Errorf("%w: log x axis from %v to %v, want both positive", errRange, c.XMin, c.XMax)
	}
	out := c
	out.XMin, out.XMax = log10OrNaN(c.XMin), log10OrNaN(c.XMax)
	if c.XMin == c.XMax {
		out.XMin, out.XMax = 0, 0
	}
	out.Series = make([]Series, len(c.Series))
	for i, s := range c.Series {
		s.X = logs(s.X)
		out.Series[i] = s
	}
	out.Marks = make([]Mark, len(c.Marks))
	for i, m := range c.Marks {
		out.Marks[i] = Mark{At: log10OrNaN(m.At), Label: m.Label}
	}
	return out, nil
}

func logs(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = log10OrNaN(x)
	}
	return out
}

// log10OrNaN is log10(v), NaN for v <= 0.
func log10OrNaN(v float64) float64 {
	if !(v > 0) {
		return math.NaN()
	}
	return math.Log10(v)
}

// newLogAxis places ticks over [lo, hi], given as log10 of the range: at
// every power of ten, every second or fifth when there are more than n,
// and at 2 and 5 times them when fewer than three fall inside.
func newLogAxis(lo, hi float64, n int) axis {
	a := axis{lo: lo, hi: hi}
	first, last := int(math.Ceil(lo-1e-9)), int(math.Floor(hi+1e-9))
	every := 1
	for _, e := range []int{1, 2, 5, 10, 20, 50, 100} {
		if every = e; (last-first)/e+1 <= max(n, 2) {
			break
		}
	}
	steps := []float64{1}
	if last-first < 2 {
		steps = []float64{1, 2, 5}
	}
	for k := first - 1; k <= last; k++ {
		if (k%every+every)%every != 0 {
			continue
		}
		for _, m := range steps {
			t := float64(k) + math.Log10(m)
			if t >= lo-1e-9 && t <= hi+1e-9 {
				a.ticks = append(a.ticks, t)
				a.labels = append(a.labels, logLabel(k, m))
			}
		}
	}
	return a
}

// logLabel writes m x 10^k plainly: 0.01, 0.5, 20, 1000, 2M.
func logLabel(k int, m float64) string {
	switch {
	case k >= 9:
		return strconv.FormatFloat(m*math.Pow10(k-9), 'f', -1, 64) + "G"
	case k >= 6:
		return strconv.FormatFloat(m*math.Pow10(k-6), 'f', -1, 64) + "M"
	case k >= 0:
		return strconv.FormatFloat(m*math.Pow10(k), 'f', 0, 64)
	}
	return strconv.FormatFloat(m/math.Pow10(-k), 'f', -k, 64)
}
