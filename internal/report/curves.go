package report

import (
	"fmt"
	"io"

	"github.com/corral-sched/corral/internal/packbench"
	"github.com/corral-sched/corral/internal/report/svg"
)

// CurveFrom is the first arrived % the packing benchmark's curves draw:
// below it every policy places every pod and the curves coincide.
const CurveFrom = 70

// WriteFGDCurves draws, per trace, every policy's unallocated GPU % against
// arrived % (the median over seeds with the band between the quartiles)
// as one SVG document of charts two abreast, with each trace's LP bound
// at x = 100 as a horizontal line.
func WriteFGDCurves(w io.Writer, cells []packbench.Cell, bounds []Bound) error {
	var charts []svg.Chart
	for _, c := range cells {
		if len(charts) == 0 || charts[len(charts)-1].Title != c.Trace {
			charts = append(charts, newCurveChart(c.Trace, bounds))
		}
		from := min(CurveFrom, len(c.CurveMid))
		x := make([]float64, len(c.CurveMid)-from)
		for i := range x {
			x[i] = float64(from + i)
		}
		ch := &charts[len(charts)-1]
		ch.Series = append(ch.Series, svg.Series{Name: c.Policy, X: x,
			Mid: c.CurveMid[from:], Lo: c.CurveLo[from:], Hi: c.CurveHi[from:]})
	}
	if err := svg.WriteGrid(w, charts, min(len(charts), 2)); err != nil {
		return fmt.Errorf("draw curves: %w", err)
	}
	return nil
}

func newCurveChart(trace string, bounds []Bound) svg.Chart {
	ch := svg.Chart{
		Title: trace, XLabel: "arrived GPU demand, % of cluster", YLabel: "unallocated GPUs, %",
		XMin: CurveFrom, XMax: packbench.MaxArrived,
		Marks: []svg.Mark{{At: 100, Label: "x = 100"}, {At: packbench.MaxArrived, Label: "x = 130"}},
	}
	for _, b := range bounds {
		if b.Trace == trace && b.LP.N > 0 {
			ch.HLines = append(ch.HLines, svg.Mark{At: b.LP.Mean, Label: "LP bound at x = 100"})
		}
	}
	return ch
}
