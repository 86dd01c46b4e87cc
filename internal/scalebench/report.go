package scalebench

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteJSON writes r as indented JSON with a final newline.
func WriteJSON(w io.Writer, r *Result) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode json: %w", err)
	}
	if _, err := w.Write(append(data, '\n')); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

// WriteTable prints what was run and a table of the metrics against their
// targets, with pass or FAIL for each.
func WriteTable(w io.Writer, r *Result) error {
	writeHeader(w, r)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "metric\tmeasured\ttarget\t")
	row := func(metric, measured, target string, pass *bool) {
		verdict := ""
		if pass != nil {
			verdict = "FAIL"
			if *pass {
				verdict = "pass"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", metric, measured, target, verdict)
	}
	th := r.Thresholds
	row("pod decisions/s (with releases)", fmt.Sprintf("%.0f", r.DecisionsPerSec), fmt.Sprintf(">= %.0f", th.MinDecisionsPerSec), &r.Pass.DecisionsPerSec)
	row("pod decisions/s (Place only)", fmt.Sprintf("%.0f", r.DecisionsPerSecPlaceOnly), "", nil)
	row("pod decision p50 / p99", fmt.Sprintf("%.4f / %.4f ms", r.P50DecisionMs, r.P99DecisionMs), fmt.Sprintf("p99 <= %g ms", th.MaxP99DecisionMs), &r.Pass.P99Decision)
	row("pod decision p99.9 / max", fmt.Sprintf("%.3f / %.3f ms (%d over 1 ms)", r.P999DecisionMs, r.MaxDecisionMs, r.DecisionsOver1ms), "", nil)
	for _, k := range r.PodKinds {
		row(fmt.Sprintf("  %s (%s) p50 / p99", k.Kind, k.Policy), fmt.Sprintf("%.4f / %.4f ms (%.0f/s in Place)", k.P50Ms, k.P99Ms, k.PerSecPlaceOnly), "", nil)
	}
	row("release p99", fmt.Sprintf("%.4f ms", r.P99ReleaseMs), "", nil)
	row("gang512 p50 / p99", fmt.Sprintf("%.2f / %.2f ms", r.Gang512P50Ms, r.Gang512P99Ms), fmt.Sprintf("p99 <= %g ms", th.MaxGang512P99Ms), &r.Pass.Gang512P99)
	row(fmt.Sprintf("%d mixed gangs, time in Place", r.MixedGangs), fmt.Sprintf("%.3f s", r.MixedGangsSeconds), fmt.Sprintf("<= %g s", th.MaxMixedGangsSeconds), &r.Pass.MixedGangs)
	row("mixed gang p50 / p99", fmt.Sprintf("%.2f / %.2f ms", r.MixedGangsP50Ms, r.MixedGangsP99Ms), "", nil)
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	return nil
}

// writeHeader prints the fleet, the machine and each phase's counts.
func writeHeader(w io.Writer, r *Result) {
	fmt.Fprintf(w, "corral bench scale: %d nodes x %d GPUs = %d GPUs (pod stream: %d %s whole, %d %s dynamic MIG), seed %d\n",
		r.Nodes, r.GPUsPerNode, r.GPUs, r.WholeNodes, r.GPUModel, r.MIGNodes, r.MIGModel, r.Seed)
	fmt.Fprintf(w, "%s %s/%s, GOMAXPROCS %d, %d CPUs\n", r.GoVersion, r.GOOS, r.GOARCH, r.GOMAXPROCS, r.NumCPU)
	fmt.Fprintf(w, "build: fleet %.3f s, state %.3f s; heap %.1f MiB (fleet %.1f MiB, state %.1f MiB)\n",
		r.FleetBuildSeconds, r.StateBuildSeconds, mib(int64(r.HeapBytes)), mib(r.FleetHeapBytes), mib(r.StateHeapBytes))
	fmt.Fprintf(w, "pod stream (1-GPU pods by policy %s): %d decisions (%d placed, %d not placed, %d of them MIG), %d releases, occupancy %.0f-%.0f%% (mean %.0f%%)\n",
		r.PodPolicy, r.Decisions, r.DecisionsPlaced, r.DecisionsUnfit, r.DecisionsUnfitMIG, r.Releases,
		r.OccupancyMinPct, r.OccupancyMaxPct, r.OccupancyMeanPct)
	fmt.Fprintf(w, "gang512: %d trials at %.0f%% occupancy (%d nodes fully free, %d at least half free):",
		r.Gang512Trials, r.Gang512OccupancyPct, r.Gang512FreeNodes, r.Gang512HalfFreeNodes)
	for _, sh := range r.Gang512Shapes {
		fmt.Fprintf(w, " %dx%d placed %d/%d;", sh.Tasks, sh.GPUsPerTask, sh.Placed, sh.Trials)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "mixed gangs: %d gangs, %d placed (%d GPUs), %d not placed, %d released; whole loop %.3f s\n\n",
		r.MixedGangs, r.MixedGangsPlaced, r.MixedGangsGPUsPlaced, r.MixedGangsUnfit, r.MixedGangsReleased, r.MixedGangsLoopSeconds)
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
