package report

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/corral-sched/corral/internal/packbench"
)

// Bound is, for one trace, how well any placement could do at x = 100
// (LP bound) and what an offline heuristic packing achieved, over seeds, as
// packbench.Bounds computes it.
type Bound = packbench.Bound

// WriteFGDTable prints one block per trace: every policy's unallocated GPU %
// at x = 100, at x = 130 and at the first failed pod (mean [min-max] over
// seeds), the authors' published x = 100 figures for a trace they
// published when the cells were run on the authors' cluster (a column
// only then: on another fleet their figure compares with nothing), the gap
// to fgd, and the bound rows.
func WriteFGDTable(w io.Writer, cells []packbench.Cell, bounds []Bound, authorsCluster bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	trace, paper := "", false
	for _, c := range cells {
		if c.Trace != trace {
			if trace != "" {
				writeBound(tw, trace, bounds)
				fmt.Fprintln(tw)
			}
			trace = c.Trace
			fmt.Fprintf(tw, "%s\t(%d seeds)\n", trace, c.At100.N)
			paper = authorsCluster && published(trace, cells)
			header := "policy\tunalloc% @100\tunalloc% @130\t@first failure\t"
			if paper {
				header += "paper @100\t"
			}
			fmt.Fprintln(tw, header+"vs fgd @100\ts/run")
		}
		row := fmt.Sprintf("%s\t%s\t%s\t%s\t", c.Policy, statText(c.At100), statText(c.At130), statText(c.First))
		if paper {
			row += paperText(c.Trace, c.Policy) + "\t"
		}
		fmt.Fprintf(tw, "%s%s\t%.2f\n", row, gapText(c, cells), c.Seconds.Mean)
	}
	if trace != "" {
		writeBound(tw, trace, bounds)
	}
	return tw.Flush()
}

func writeBound(w io.Writer, trace string, bounds []Bound) {
	for _, b := range bounds {
		if b.Trace == trace {
			fmt.Fprintf(w, "bound (LP, any placement)\t>= %s\n", statText(b.LP))
			fmt.Fprintf(w, "offline packing (heuristic)\t%s\n", statText(b.Packed))
		}
	}
}

func statText(s packbench.Stat) string {
	if s.N == 0 || math.IsNaN(s.Mean) {
		return "-"
	}
	if s.N == 1 {
		return fmt.Sprintf("%.2f", s.Mean)
	}
	return fmt.Sprintf("%.2f [%.2f-%.2f]", s.Mean, s.Min, s.Max)
}

// published reports whether the authors published an x = 100 figure for
// any policy of trace.
func published(trace string, cells []packbench.Cell) bool {
	for _, c := range cells {
		if _, ok := packbench.PublishedAt100(trace, c.Policy); ok && c.Trace == trace {
			return true
		}
	}
	return false
}

func paperText(trace, policy string) string {
	p, ok := packbench.PublishedAt100(trace, policy)
	switch {
	case !ok:
		return "-"
	case p.Min == 0 && p.Max == 0:
		return fmt.Sprintf("%.2f", p.Mean)
	default:
		return fmt.Sprintf("%.2f [%.2f-%.2f]", p.Mean, p.Min, p.Max)
	}
}

// gapText is c's mean at x = 100 minus fgd's on the same trace.
func gapText(c packbench.Cell, cells []packbench.Cell) string {
	for _, f := range cells {
		if f.Trace == c.Trace && f.Policy == "fgd" && f.At100.N > 0 {
			if c.Policy == "fgd" {
				return "0"
			}
			return fmt.Sprintf("%+.2f", c.At100.Mean-f.At100.Mean)
		}
	}
	return "-"
}
