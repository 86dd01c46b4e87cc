package packbench

import (
	"math"
	"sort"
)

// Stat is a mean with its range over seeds.
type Stat struct {
	Mean, Min, Max float64
	N              int
}

// StatOf is the mean and range of the non-NaN values.
func StatOf(values []float64) Stat {
	s := Stat{Min: math.Inf(1), Max: math.Inf(-1)}
	for _, v := range values {
		if math.IsNaN(v) {
			continue
		}
		s.Mean += v
		s.Min = math.Min(s.Min, v)
		s.Max = math.Max(s.Max, v)
		s.N++
	}
	if s.N == 0 {
		return Stat{Mean: math.NaN(), Min: math.NaN(), Max: math.NaN()}
	}
	s.Mean /= float64(s.N)
	return s
}

// Cell is one (trace, policy) over all its seeds.
type Cell struct {
	Trace, Policy string
	At100         Stat
	At130         Stat
	First         Stat
	Seconds       Stat
	// Curve over arrived % 0..MaxArrived: median and quartiles over seeds.
	CurveMid, CurveLo, CurveHi []float64
}

// Aggregate groups summaries by (trace, policy), keeping the order in which
// each pair first appears.
func Aggregate(runs []Summary) []Cell {
	type key struct{ trace, policy string }
	index := map[key]int{}
	var groups [][]Summary
	var cells []Cell
	for _, r := range runs {
		k := key{r.Trace, r.Policy}
		i, ok := index[k]
		if !ok {
			i = len(cells)
			index[k] = i
			cells = append(cells, Cell{Trace: r.Trace, Policy: r.Policy})
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], r)
	}
	for i, g := range groups {
		cells[i].fill(g)
	}
	return cells
}

func (c *Cell) fill(runs []Summary) {
	pick := func(f func(Summary) float64) []float64 {
		v := make([]float64, len(runs))
		for i, r := range runs {
			v[i] = f(r)
		}
		return v
	}
	c.At100 = StatOf(pick(func(s Summary) float64 { return s.UnallocatedAt100 }))
	c.At130 = StatOf(pick(func(s Summary) float64 { return s.UnallocatedAt130 }))
	c.First = StatOf(pick(func(s Summary) float64 { return s.UnallocatedFirst }))
	c.Seconds = StatOf(pick(func(s Summary) float64 { return s.Seconds }))
	n := MaxArrived + 1
	c.CurveMid, c.CurveLo, c.CurveHi = make([]float64, n), make([]float64, n), make([]float64, n)
	for x := 0; x < n; x++ {
		v := pick(func(s Summary) float64 {
			if x < len(s.Curve) {
				return s.Curve[x]
			}
			return math.NaN()
		})
		c.CurveLo[x], c.CurveMid[x], c.CurveHi[x] = quantile(v, 0.25), quantile(v, 0.5), quantile(v, 0.75)
	}
}

// quantile is the q-quantile of the non-NaN values, interpolating linearly.
func quantile(values []float64, q float64) float64 {
	v := make([]float64, 0, len(values))
	for _, x := range values {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return math.NaN()
	}
	sort.Float64s(v)
	pos := q * float64(len(v)-1)
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	return v[lo] + (v[hi]-v[lo])*(pos-float64(lo))
}
