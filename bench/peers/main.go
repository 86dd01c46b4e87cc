// Command peers-bench replays one workload on a real control plane whose
// nodes are fake (internal/peers: kube-apiserver, kube-controller-manager,
// KWOK) under the upstream kube-scheduler configured to pack GPUs, under
// Kueue in front of it, and under corral, each on a fresh control plane;
// replays the same workload through the models of internal/sim on the same
// fleet; and compares each model with its real system: rank correlation of
// start times, mean and p99 wait. run.sh runs it; RESULTS.md holds its
// numbers.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/peers"
	"github.com/corral-sched/corral/internal/sim"
	"github.com/corral-sched/corral/internal/workload"
)

// models maps each real system to the model of it in internal/sim.
var models = map[string]string{peers.KubePacked: "kube-packed", peers.Kueue: "kueue-like", peers.Corral: "corral", slurm: "slurm-like"}

// slurm is Slurm 22.05, replayed by slurm.sh (it needs root) into
// real-slurm.csv, which this command reads.
const slurm = "slurm"

type options struct {
	jobs, nodes        int
	span               time.Duration
	seed               uint64
	speedup            float64
	workload, out, tag string
	schedulers         []string
	reuse              bool
}

func main() {
	var o options
	var schedulers string
	flag.IntVar(&o.jobs, "jobs", 200, "jobs of the synthetic workload (peers.Synthetic)")
	flag.DurationVar(&o.span, "span", 200*time.Minute, "simulated time the synthetic jobs arrive over")
	flag.Uint64Var(&o.seed, "seed", 1, "seed of the synthetic workload")
	flag.StringVar(&o.workload, "workload", "", "a jobs file to replay instead of the synthetic workload")
	flag.IntVar(&o.nodes, "nodes", 16, "fake nodes of 8 H100 GPUs")
	flag.Float64Var(&o.speedup, "speedup", 60, "simulated seconds per real second")
	flag.StringVar(&o.out, "out", "bench/peers", "directory for the jobs files (real-<scheduler>.csv, model-<policy>.csv) and results JSON")
	flag.StringVar(&o.tag, "tag", "", "prefix of the files written (default none)")
	flag.StringVar(&schedulers, "schedulers", strings.Join(peers.Schedulers(), ","), "real systems to replay under, in order; slurm reads real-slurm.csv, which slurm.sh writes")
	flag.BoolVar(&o.reuse, "reuse", false, "read each real system's jobs file from an earlier run instead of replaying")
	flag.Parse()
	o.schedulers = strings.Split(schedulers, ",")
	if err := run(o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "peers-bench:", err)
		os.Exit(1)
	}
}

// row is one real system beside its model.
type row struct {
	System     string           `json:"system"`
	Model      string           `json:"model"`
	Real       stats            `json:"real"`
	Sim        stats            `json:"sim"`
	Validation peers.Validation `json:"validation"`
	Stops      int              `json:"stops"` // real pods preempted and replaced; -1: not known (read from a file)
}

// stats summarises one replay's outcomes; times are minutes.
type stats struct {
	Started, Ended int
	MeanWaitM      float64 `json:"mean_wait_min"`
	P99WaitM       float64 `json:"p99_wait_min"`
	MeanJCTM       float64 `json:"mean_jct_min"`
	// Usage is the fleet over time; for a real system from its pods'
	// holds (none when an older run's files lack them), for a model from
	// its fleet after every event, its gangs not counted (GangsWhole -1)
	// and its sibling wait the simulator's GPU-hours held idle.
	Usage *peers.Usage `json:"usage,omitempty"`
}

func run(o options, stdout io.Writer) error {
	w, label, err := input(o)
	if err != nil {
		return err
	}
	f, err := fleet.Synthetic{Nodes: o.nodes, MIG: fleet.MIGNone}.Build()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "# %s: %d jobs, %d nodes of 8 H100, %g simulated seconds per second\n", label, len(w.Arrivals), o.nodes, o.speedup)
	var rows []row
	for _, s := range o.schedulers {
		r, err := compareOne(o, f, w, s, stdout)
		if err != nil {
			return err
		}
		rows = append(rows, r)
	}
	writeTable(stdout, rows)
	data, err := json.MarshalIndent(map[string]any{"workload": label, "jobs": len(w.Arrivals), "nodes": o.nodes, "speedup": o.speedup, "rows": rows}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(o.out, o.tag+"results.json"), append(data, '\n'), 0o644)
}

func input(o options) (workload.Workload, string, error) {
	if o.workload == "" {
		return peers.Synthetic(o.jobs, o.span, o.seed), fmt.Sprintf("peers.Synthetic(%d jobs over %v, seed %d)", o.jobs, o.span, o.seed), nil
	}
	j, err := workload.ReadJobsFile(o.workload)
	if err != nil {
		return workload.Workload{}, "", err
	}
	return j.Workload, o.workload, nil
}

// compareOne replays w under the real system s and under its model.
func compareOne(o options, f *fleet.Fleet, w workload.Workload, s string, stdout io.Writer) (row, error) {
	real, err := realReplay(o, w, s, stdout)
	if err != nil {
		return row{}, err
	}
	policy := models[s]
	p, err := sim.NewPolicy(policy)
	if err != nil {
		return row{}, err
	}
	// corral kube-scheduler preempts lower-priority pods by default
	// (--no-preemption turns it off): the model's --priority-preemption.
	// Preempted pods go at once here (KWOK deletes them), so no grace.
	meter := peers.NewMeter(o.nodes, gpusPerNode, w.Horizon, usageBin)
	res, err := sim.RunWith(f, modelInput(w, s), p, sim.Options{Backfill: sim.EasyBackfill, PriorityPreemption: s == peers.Corral,
		Observe: meter.Observe})
	if err != nil {
		return row{}, fmt.Errorf("model %s: %w", policy, err)
	}
	model := &workload.Jobs{Workload: w, Outcomes: simOutcomes(res)}
	modelUsage := meter.ModelUsage(res.Summary.IdleHeldGPUH)
	if err := workload.WriteJobsFile(filepath.Join(o.out, o.tag+"model-"+policy+".csv"), model); err != nil {
		return row{}, err
	}
	stops := -1 // unknown: read from a jobs file, which does not keep them
	if real.Stops != nil {
		stops = 0
		for _, n := range real.Stops {
			stops += n
		}
	}
	r := row{System: s, Model: policy, Real: summarise(w, real.Outcomes), Sim: summarise(w, model.Outcomes),
		Validation: peers.Compare(w, model.Outcomes, real.Outcomes), Stops: stops}
	r.Sim.Usage = &modelUsage
	if real.Holds != nil {
		u := peers.MeasureHolds(real.Holds, o.nodes, gpusPerNode, taskCounts(w), w.Horizon, usageBin)
		r.Real.Usage = &u
	}
	return r, nil
}

// realReplay replays w under the real system s and writes what it saw
// beside the script (real-<s>.csv, real-<s>-holds.csv); with -reuse, and
// for Slurm, whose replay slurm.sh runs, it reads those files instead. An
// older run without a holds file has no holds.
func realReplay(o options, w workload.Workload, s string, stdout io.Writer) (*peers.Result, error) {
	path := filepath.Join(o.out, o.tag+"real-"+s+".csv")
	holdsPath := filepath.Join(o.out, o.tag+"real-"+s+"-holds.csv")
	if o.reuse || s == slurm {
		j, err := workload.ReadJobsFile(path)
		if err != nil {
			return nil, err
		}
		holds, err := peers.ReadHoldsFile(holdsPath)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return &peers.Result{Jobs: j, Holds: holds}, nil
	}
	start := time.Now()
	real, err := replayReal(o, w, s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s, err)
	}
	fmt.Fprintf(stdout, "# %s: replayed in %.0f s\n", s, time.Since(start).Seconds())
	if err := workload.WriteJobsFile(path, real.Jobs); err != nil {
		return nil, err
	}
	return real, peers.WriteHoldsFile(holdsPath, real.Holds)
}

// gpusPerNode is the fake nodes' GPUs; usageBin the width of the usage
// series' samples.
const (
	gpusPerNode = 8
	usageBin    = 30 * time.Minute
)

func taskCounts(w workload.Workload) map[string]int {
	out := make(map[string]int, len(w.Arrivals))
	for _, a := range w.Arrivals {
		out[a.Job.Name] = a.Job.Tasks()
	}
	return out
}

// modelInput is w as the model of s sees it. Every pod is a preemption
// victim for a pod of higher priority in Kubernetes, and every workload
// of lower priority in its ClusterQueue for Kueue (peers.Synthetic marks
// its jobs preemptible); slurm.sh configures no PreemptType, so under
// slurm-like no job is.
func modelInput(w workload.Workload, s string) workload.Workload {
	if s != slurm {
		return w
	}
	c := w
	c.Arrivals = make([]workload.Arrival, len(w.Arrivals))
	for i, a := range w.Arrivals {
		j := *a.Job
		j.Preemptible = false
		a.Job = &j
		c.Arrivals[i] = a
	}
	return c
}

// replayReal runs w under s on a fresh control plane.
func replayReal(o options, w workload.Workload, s string) (*peers.Result, error) {
	dir, err := os.MkdirTemp("", "corral-peers-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	rig, err := peers.Start(ctx, dir, peers.Fleet{Nodes: o.nodes, GPUs: 8, Product: "NVIDIA-H100-80GB-HBM3"})
	if err != nil {
		return nil, err
	}
	defer rig.Stop()
	res, err := rig.Replay(ctx, w, peers.Options{Scheduler: s, Speedup: o.speedup, GPUs: 8 * o.nodes, Dir: dir})
	if err != nil {
		return nil, err
	}
	return res, rig.DeployedErr()
}

// simOutcomes are a model's job records as outcomes.
func simOutcomes(r *sim.Result) map[string]workload.Outcome {
	out := map[string]workload.Outcome{}
	for _, j := range r.Jobs {
		out[j.Name] = workload.Outcome{Start: j.Start, End: j.End, Started: j.Started, Ended: j.Finished}
	}
	return out
}

func summarise(w workload.Workload, out map[string]workload.Outcome) stats {
	var s stats
	var waits []time.Duration
	var jct time.Duration
	for _, a := range w.Arrivals {
		o := out[a.Job.Name]
		if !o.Started {
			continue
		}
		s.Started++
		waits = append(waits, o.Start-a.At)
		if o.Ended {
			s.Ended++
			jct += o.End - a.At
		}
	}
	var sum time.Duration
	for _, d := range waits {
		sum += d
	}
	if len(waits) > 0 {
		s.MeanWaitM = sum.Minutes() / float64(len(waits))
	}
	s.P99WaitM = peers.Quantile(waits, 0.99).Minutes()
	if s.Ended > 0 {
		s.MeanJCTM = jct.Minutes() / float64(s.Ended)
	}
	return s
}

func writeTable(w io.Writer, rows []row) {
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "system\tstarted\tmean wait\tp99 wait\tmean JCT\tstops\tmodel\tstarted\tmean wait\tp99 wait\tmean JCT\tSpearman\tmean err\tp99 err\t")
	for _, r := range rows {
		v := r.Validation
		stops := "n/a"
		if r.Stops >= 0 {
			stops = fmt.Sprint(r.Stops)
		}
		fmt.Fprintf(tw, "%s\t%d\t%.1fm\t%.1fm\t%.1fm\t%s\t%s\t%d\t%.1fm\t%.1fm\t%.1fm\t%.2f\t%s\t%s\t\n", r.System, r.Real.Started,
			r.Real.MeanWaitM, r.Real.P99WaitM, r.Real.MeanJCTM, stops, r.Model, r.Sim.Started, r.Sim.MeanWaitM, r.Sim.P99WaitM,
			r.Sim.MeanJCTM, v.Spearman, pct(v.MeanErr), pct(v.P99Err))
	}
	tw.Flush()
	fmt.Fprintln(w, "\nwaits and JCT in simulated minutes, of the jobs each replay started; Spearman: rank correlation of the")
	fmt.Fprintln(w, "start times of the jobs both started; err: (model - real) / real of the wait. stops: real pods preempted.")
	writeUsage(w, rows)
}

// writeUsage prints the fleet's use, real beside model, and allocation
// over time.
func writeUsage(w io.Writer, rows []row) {
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "system\tallocated\tstranded\tsibling wait\tgangs whole\tmodel\tallocated\tstranded\tsibling wait\t")
	for _, r := range rows {
		ru, mu := r.Real.Usage, r.Sim.Usage
		if ru == nil {
			fmt.Fprintf(tw, "%s\tn/a\tn/a\tn/a\tn/a\t", r.System)
		} else {
			fmt.Fprintf(tw, "%s\t%.1f%%\t%.1f\t%.0f\t%d/%d\t", r.System, ru.AllocatedPct, ru.StrandedGPUs, ru.SiblingGPUMin, ru.GangsWhole, ru.Gangs)
		}
		fmt.Fprintf(tw, "%s\t%.1f%%\t%.1f\t%.0f\t\n", r.Model, mu.AllocatedPct, mu.StrandedGPUs, mu.SiblingGPUMin)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nallocated: mean share of the GPUs bound to tasks while jobs arrive; stranded: mean free GPUs on nodes\n")
	fmt.Fprintf(w, "in partial use then; sibling wait: GPU-minutes held by tasks of multi-task jobs before the last task was\n")
	fmt.Fprintf(w, "bound (the model's: GPU-hours held idle); gangs whole: first bindings within %v of each other.\n", peers.GangTolerance)
	fmt.Fprintln(w, "\nGPUs allocated over time (mean of each bin, simulated minutes from the first arrival):")
	tw = tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	bins := 0
	for _, r := range rows {
		bins = max(bins, len(r.Sim.Usage.Series))
		if r.Real.Usage != nil {
			bins = max(bins, len(r.Real.Usage.Series))
		}
	}
	fmt.Fprint(tw, "replay\t")
	for i := range bins {
		fmt.Fprintf(tw, "%.0f\t", float64(i)*usageBin.Minutes())
	}
	fmt.Fprintln(tw)
	line := func(name string, u *peers.Usage) {
		fmt.Fprintf(tw, "%s\t", name)
		for i := range bins {
			if i < len(u.Series) {
				fmt.Fprintf(tw, "%.1f\t", u.Series[i].Allocated)
			} else {
				fmt.Fprint(tw, "0\t")
			}
		}
		fmt.Fprintln(tw)
	}
	for _, r := range rows {
		if r.Real.Usage != nil {
			line(r.System, r.Real.Usage)
		}
		line("model "+r.Model, r.Sim.Usage)
	}
	tw.Flush()
}

func pct(x float64) string {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return "n/a"
	}
	return fmt.Sprintf("%+.0f%%", 100*x)
}
