package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/corral-sched/corral/internal/example"
	"github.com/corral-sched/corral/internal/openb"
	"github.com/corral-sched/corral/internal/packbench"
	"github.com/corral-sched/corral/internal/placement"
	"github.com/corral-sched/corral/internal/report"
)

// fgdOptions are the flags of corral bench fgd.
type fgdOptions struct {
	nodes, pods, policies, seeds string
	jsonPath, svgPath            string
	workers                      int
	bound, timing, quiet         bool
	replicas                     int
}

func (o *fgdOptions) flags(stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("corral bench fgd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.nodes, "nodes", "", "node list CSV (sn,cpu_milli,memory_mib,gpu,model); empty: the built-in example cluster")
	fs.StringVar(&o.pods, "pods", "", "pod list CSV(s), comma-separated, 11- or 5-column openb form; empty: the built-in example workload")
	fs.StringVar(&o.policies, "policies", strings.Join(packbench.Policies(), ","), "policies to compare, comma-separated")
	fs.StringVar(&o.seeds, "seeds", "42-51", "seeds: a range 42-51, a list 42,43, or both 42-45,50")
	fs.StringVar(&o.jsonPath, "json", "", "write every run as JSON to this file")
	fs.StringVar(&o.svgPath, "svg", "", "draw unallocated GPU % vs arrived % per trace (median, 50% band) to this SVG file")
	fs.IntVar(&o.workers, "workers", runtime.NumCPU(), "runs in parallel")
	fs.BoolVar(&o.bound, "bound", true, "compute the LP bound and an offline packing at x = 100 for each trace and seed")
	fs.BoolVar(&o.timing, "timing", true, "record seconds per run (false: byte-identical JSON between runs)")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress on stderr")
	fs.IntVar(&o.replicas, "replicas", 0, "round every GPU share up to whole 1/N GPUs, as pods ask for time-sliced replicas on Kubernetes (0: each pod's own milli)")
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: corral bench fgd [flags]

Fills a cluster with pods one at a time under each policy and reports how many
GPUs stay unallocated when the pods that arrived request 100% and 130% of the
cluster's GPUs. This is the static-fill protocol of the ATC'23 paper "Beware of
Fragmentation" (no departures; the workload is tuned to 1.3x the cluster's GPUs
with synthetic clones). With no flags it runs the built-in example in seconds.

Example:
  corral bench fgd --nodes openb_node_list_gpu_node.csv \
    --pods openb_pod_list_default.csv,openb_pod_list_gpushare40.csv \
    --policies fgd,corral --seeds 42-51 --json out.json --svg out.svg

Policies:
`)
		for _, p := range packbench.Policies() {
			fmt.Fprintf(stderr, "  %-14s %s\n", p, packbench.DescribePolicy(p))
		}
		fmt.Fprint(stderr, "\nFlags:\n")
		fs.PrintDefaults()
	}
	return fs
}

func runBenchFGD(args []string, stdout, stderr io.Writer) error {
	var o fgdOptions
	fs := o.flags(stderr)
	if err := parseFlags(fs, "", args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return unexpected(fs)
	}
	specs, err := o.specs()
	if err != nil {
		return err
	}
	progress := newProgress(stderr, o.quiet, "runs")
	runs, err := packbench.Grid(specs, o.workers, o.timing, progress.update)
	progress.finish()
	if err != nil {
		return err
	}
	var bounds []report.Bound
	if o.bound {
		bar := newProgress(stderr, o.quiet, "bounds")
		bounds, err = packbench.Bounds(specs, o.workers, bar.update)
		bar.finish()
		if err != nil {
			return err
		}
	}
	cells := packbench.Aggregate(runs)
	fmt.Fprintln(stdout, clusterLine(specs))
	if err := report.WriteFGDTable(stdout, cells, bounds, len(specs[0].Nodes) == packbench.AuthorsNodes); err != nil {
		return err
	}
	if slices.ContainsFunc(specs, func(s packbench.Spec) bool { return s.Policy == packbench.LivePolicy }) {
		fmt.Fprintf(stdout, "\n%s is the policy corral server and corral kube-scheduler run (gang.State.Place, learning the mix as pods arrive).\n", packbench.LivePolicy)
	}
	return o.writeFiles(stdout, runs, cells, bounds)
}

// clusterLine says what is packed: the cluster's nodes and GPUs by
// model, and the pods of each trace (tuned to 1.3x the GPUs with clones).
func clusterLine(specs []packbench.Spec) string {
	if len(specs) == 0 {
		return ""
	}
	gpus, byModel := 0, map[string]int{}
	for _, n := range specs[0].Nodes {
		gpus += n.GPUs
		if n.GPUs > 0 {
			byModel[n.Model] += n.GPUs
		}
	}
	var models []string
	for _, m := range slices.Sorted(maps.Keys(byModel)) {
		models = append(models, fmt.Sprintf("%d %s", byModel[m], m))
	}
	pods := map[string]int{}
	for _, s := range specs {
		pods[s.Trace] = len(s.Pods)
	}
	var traces []string
	for _, t := range slices.Sorted(maps.Keys(pods)) {
		traces = append(traces, fmt.Sprintf("%s %d pods", t, pods[t]))
	}
	return fmt.Sprintf("cluster: %d nodes, %d GPUs (%s); workload: %s, cloned until they ask 1.3x the GPUs\n",
		len(specs[0].Nodes), gpus, strings.Join(models, ", "), strings.Join(traces, "; "))
}

// specs loads the inputs and lists every (trace, policy, seed) run.
func (o *fgdOptions) specs() ([]packbench.Spec, error) {
	if o.replicas < 0 || o.replicas > placement.MilliPerGPU {
		return nil, fmt.Errorf("--replicas %d: want 0 (keep each share's milli) to %d", o.replicas, placement.MilliPerGPU)
	}
	policies := splitList(o.policies)
	for _, p := range policies {
		if err := packbench.CheckPolicy(p); err != nil {
			return nil, err
		}
	}
	seeds, err := parseSeeds(o.seeds)
	if err != nil {
		return nil, err
	}
	nodes, traces, err := o.load()
	if err != nil {
		return nil, err
	}
	var specs []packbench.Spec
	for _, t := range traces {
		for _, p := range policies {
			for _, s := range seeds {
				specs = append(specs, packbench.Spec{Trace: t.name, Nodes: nodes, Pods: placement.RoundShares(t.pods, o.replicas), Policy: p, Seed: s})
			}
		}
	}
	return specs, nil
}

type trace struct {
	name string
	pods []placement.Pod
}

func (o *fgdOptions) load() ([]placement.Node, []trace, error) {
	if o.nodes == "" && o.pods == "" {
		nodes, pods, err := example.Load()
		return nodes, []trace{{example.Trace, pods}}, err
	}
	if o.nodes == "" || o.pods == "" {
		return nil, nil, errors.New("give both --nodes and --pods, or neither for the built-in example")
	}
	nodes, err := openb.ReadNodesFile(o.nodes)
	if err != nil {
		return nil, nil, err
	}
	var traces []trace
	for _, path := range splitList(o.pods) {
		pods, err := openb.ReadPodsFile(path)
		if err != nil {
			return nil, nil, err
		}
		traces = append(traces, trace{openb.TraceName(path), pods})
	}
	return nodes, traces, nil
}

// parseSeeds reads "42-51", "42,43" or a mix of both.
func parseSeeds(s string) ([]int64, error) {
	var seeds []int64
	for _, part := range splitList(s) {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.ParseInt(lo, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("seed %q is not an integer", lo)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseInt(hi, 10, 64); err != nil {
				return nil, fmt.Errorf("seed %q is not an integer", hi)
			}
		}
		if b < a || b-a > 10000 {
			return nil, fmt.Errorf("seed range %q must go up, by at most 10000 seeds", part)
		}
		for v := a; v <= b; v++ {
			seeds = append(seeds, v)
		}
	}
	if len(seeds) == 0 {
		return nil, errors.New("no seeds given")
	}
	return seeds, nil
}

func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// fgdJSON is the stable machine-readable output of corral bench fgd.
type fgdJSON struct {
	Runs   []packbench.Summary `json:"runs"`
	Bounds []boundJSON         `json:"bounds,omitempty"`
}

type boundJSON struct {
	Trace                string  `json:"trace"`
	MinUnallocatedPct    float64 `json:"lp_min_unallocated_pct_at_100"`
	PackedUnallocatedPct float64 `json:"offline_packed_unallocated_pct_at_100"`
	Seeds                int     `json:"seeds"`
}

func (o *fgdOptions) writeFiles(stdout io.Writer, runs []packbench.Summary, cells []packbench.Cell, bounds []report.Bound) error {
	if o.jsonPath != "" {
		out := fgdJSON{Runs: runs}
		for _, b := range bounds {
			out.Bounds = append(out.Bounds, boundJSON{b.Trace, b.LP.Mean, b.Packed.Mean, b.LP.N})
		}
		data, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			return fmt.Errorf("encode json: %w", err)
		}
		if err := os.WriteFile(o.jsonPath, append(data, '\n'), 0o644); err != nil {
			return fmt.Errorf("write json: %w", err)
		}
		fmt.Fprintf(stdout, "\nwrote %s\n", o.jsonPath)
	}
	if o.svgPath != "" {
		var b bytes.Buffer
		if err := report.WriteFGDCurves(&b, cells, bounds); err != nil {
			return err
		}
		if err := os.WriteFile(o.svgPath, b.Bytes(), 0o644); err != nil {
			return fmt.Errorf("write svg: %w", err)
		}
		fmt.Fprintf(stdout, "wrote %s\n", o.svgPath)
	}
	return nil
}
