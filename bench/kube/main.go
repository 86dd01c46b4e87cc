// Command kube-bench runs the upstream kube-scheduler and corral, one after
// the other, against one real API server with the same GPU nodes and the
// same pods, and reports pods bound per second, nodes used, GPUs stranded
// and pod groups partly started. run.sh runs it; RESULTS.md holds its
// numbers.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/corral-sched/corral/internal/cpuprofile"
	"github.com/corral-sched/corral/internal/kube/kubetest"
)

type options struct {
	nodes, gpusPerNode, racks int
	pods, groups              int
	groupPods, groupGPUs      int
	fill                      float64
	trace, out                string
	schedulers                []string
	settle                    time.Duration
	qps                       float64
	drain                     bool
	replicas                  int
	dra                       bool
	corralLog                 string
	plain                     bool
}

func main() {
	var o options
	var schedulers string
	flag.IntVar(&o.nodes, "nodes", 500, "GPU nodes")
	flag.IntVar(&o.gpusPerNode, "gpus-per-node", 8, "H100 GPUs per node")
	flag.IntVar(&o.racks, "racks", 50, "racks the nodes are spread over (label corral.sh/rack)")
	flag.IntVar(&o.pods, "pods", 5000, "single GPU pods, the first ones of the trace that ask for GPUs")
	flag.IntVar(&o.groups, "groups", 50, "pod groups (gangs) added to the pods")
	flag.IntVar(&o.groupPods, "group-pods", 0, "pods per group; 0: 2 + i%4 for group i")
	flag.IntVar(&o.groupGPUs, "group-gpus", 0, "GPUs per group pod; 0: 1 << (i%4) for group i")
	flag.Float64Var(&o.fill, "fill", 0, "instead of -pods: take trace pods until they and the groups ask for this share of the GPUs (0.95)")
	flag.StringVar(&o.trace, "trace", "../shared/data/alibaba-gpu-v2023/openb_pod_list_default.csv", "openb pod list")
	flag.StringVar(&o.out, "json", "", "write the results as JSON to this file")
	flag.StringVar(&schedulers, "schedulers", "kube-scheduler,corral", "schedulers to run, in order: kube-scheduler (default profile), kube-packed (MostAllocated weighting nvidia.com/gpu), corral, ceiling (a client binding precomputed placements as fast as the API server takes them; always drains)")
	flag.Float64Var(&o.qps, "qps", 1000, "each scheduler's own client: requests per second (burst twice that)")
	flag.BoolVar(&o.drain, "drain", false, "create every pod before starting the scheduler, and time from its first binding to its last")
	flag.IntVar(&o.replicas, "replicas", 0, "keep the trace's fractional pods fractional: they ask for time-sliced replicas (this many a GPU, rounded up) of nodes that offer them, in proportion to the GPU they ask for (0: they ask for a whole GPU)")
	flag.BoolVar(&o.dra, "dra", false, "keep the trace's fractional pods fractional by DRA consumable capacity: each claims its share of one GPU's memory (a ResourceClaim for one device asking part of its \"memory\" capacity) on nodes whose GPUs a DRA driver publishes for several allocations, in proportion to the GPU they ask for (instead of -replicas)")
	flag.DurationVar(&o.settle, "settle", 15*time.Second, "a run ends when no pod is bound for this long")
	flag.BoolVar(&o.plain, "plain", false, "instead of the trace's pods: -pods plain pods of one GPU, one CPU and 4 GiB each")
	flag.StringVar(&o.corralLog, "corral-log", "", "append corral's log, at debug level (a line per cycle), to this file")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of this process (corral's scheduler runs in it) to this file")
	flag.Parse()
	o.schedulers = strings.Split(schedulers, ",")
	if o.dra && o.replicas > 0 {
		fmt.Fprintln(os.Stderr, "kube-bench: -dra and -replicas are two ways to keep fractional pods fractional: choose one")
		os.Exit(2)
	}
	if err := profiled(*cpuProfile, func() error { return run(o) }); err != nil {
		fmt.Fprintln(os.Stderr, "kube-bench:", err)
		os.Exit(1)
	}
}

// profiled runs fn, under a CPU profile written to path unless path is
// empty.
func profiled(path string, fn func() error) error {
	if path == "" {
		return fn()
	}
	stop, err := cpuprofile.Start(path)
	if err != nil {
		return err
	}
	err = fn()
	return errors.Join(err, stop())
}

func run(o options) error {
	ctx := context.Background()
	work, err := loadWork(o)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "corral-kube-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	c, err := kubetest.Start(ctx, dir)
	if err != nil {
		return err
	}
	defer c.Stop()
	if o.dra {
		if err := createGPUClass(ctx, c); err != nil {
			return err
		}
	}
	if err := addNodes(ctx, c, o, work.sharedNodes); err != nil {
		return err
	}
	from := o.trace
	if o.plain {
		from = "plain pods of 1 GPU"
	}
	fmt.Printf("# %d nodes x %d GPUs; %d pods (%d GPUs) from %s and %d pod groups (%d pods, %d GPUs)\n",
		o.nodes, o.gpusPerNode, work.singles, work.podGPUs, from, len(work.groups), work.groupPods, work.groupGPUs)
	switch {
	case o.replicas > 0:
		fmt.Printf("# %d fractional pods ask for %.1f GPUs as replicas (%d a GPU) of %d nodes' time-sliced GPUs\n",
			work.shares, float64(work.shareMilli)/1000, o.replicas, work.sharedNodes)
	case o.dra:
		fmt.Printf("# %d fractional pods claim %.1f GPUs of memory of %d nodes' DRA GPUs shared by consumable capacity\n",
			work.shares, float64(work.shareMilli)/1000, work.sharedNodes)
	}
	if o.dra || o.replicas > 0 {
		fmt.Printf("# their thousandths packed offline, first fit decreasing, fill %d GPUs\n", work.packedOffline())
	}
	var results []result
	for _, name := range o.schedulers {
		r, err := runOne(ctx, c, dir, name, work, o)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		results = append(results, r)
	}
	printTable(os.Stdout, results)
	if o.out != "" {
		data, err := json.MarshalIndent(results, "", "  ")
		if err != nil {
			return err
		}
		return os.WriteFile(o.out, append(data, '\n'), 0o644)
	}
	return nil
}

func printTable(w io.Writer, rs []result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scheduler\tpods bound\tpending\tGPUs bound\tGPUs free\tseconds\tpods/s\tnodes used\tGPUs stranded\tgangs whole\tgangs partial\tgangs none\t")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%.1f\t%.0f\t%d\t%d\t%d\t%d\t%d\t\n", r.Scheduler, r.PodsBound, r.Pods-r.PodsBound, r.GPUsBound, r.GPUsFree,
			r.Seconds, r.PodsPerSecond, r.NodesUsed, r.GPUsStranded, r.GangsWhole, r.GangsPartial, r.GangsNone)
	}
	tw.Flush()
	if rs[0].ShareMilliAsked == 0 && rs[len(rs)-1].ShareMilliAsked == 0 {
		return
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scheduler\tshares bound\tGPU asked\tGPU given\trounding lost\tshared GPUs occupied\tpacking lost\t")
	for _, r := range rs {
		given := float64(r.ShareMilliGiven) / 1000
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%.1f\t%d\t%.1f\t\n", r.Scheduler, r.SharesBound, float64(r.ShareMilliAsked)/1000, given,
			given-float64(r.ShareMilliAsked)/1000, r.SharedGPUsOccupied, float64(r.SharedGPUsOccupied)-given)
	}
	tw.Flush()
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// corralLogger is where corral's log goes: nowhere, or with -corral-log
// to that file at debug level (a line per cycle: its pods, binds and
// time).
func corralLogger(path string) (*slog.Logger, error) {
	if path == "" {
		return quietLogger(), nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("corral's log: %w", err)
	}
	return slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug})), nil
}
