package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/corral-sched/corral/internal/cpuprofile"
	"github.com/corral-sched/corral/internal/scalebench"
)

// scaleFlags are the flags of corral bench scale: the run's options and
// what to do with its result.
type scaleFlags struct {
	opt                  scalebench.Options
	jsonPath, cpuProfile string
	quiet                bool
}

func (o *scaleFlags) flags(stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("corral bench scale", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&o.opt.Nodes, "nodes", 10000, "nodes in the synthetic fleet")
	fs.IntVar(&o.opt.GPUsPerNode, "gpus-per-node", 8, "GPUs per node, 1 to 64")
	fs.IntVar(&o.opt.MIGPct, "mig-pct", 20, "percent of racks of "+scalebench.MIGModel+" in dynamic MIG mode in the pod stream (0 to 100)")
	fs.BoolVar(&o.opt.PinWhole, "pin-whole", true, "1-GPU pods ask for "+scalebench.GPUModel+" (false: they may take MIG nodes' GPUs whole)")
	fs.Uint64Var(&o.opt.Seed, "seed", 1, "seed of the PCG streams; one seed gives the same decisions every run")
	fs.IntVar(&o.opt.Decisions, "decisions", 0, "pod decisions in the steady-state stream; 0: 20 per node")
	fs.IntVar(&o.opt.GangTrials, "gang-trials", 200, "512-GPU gang decisions on the fragmented fleet")
	fs.IntVar(&o.opt.Gangs, "gangs", 1000, "gangs in the mixed-gang run")
	fs.StringVar(&o.jsonPath, "json", "", "write the results as JSON to this file")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file (go tool pprof)")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress on stderr")
	fs.Usage = func() {
		fmt.Fprintf(stderr, scaleUsage, scalebench.MinDecisionsPerSec, scalebench.MaxP99DecisionMs,
			scalebench.MaxGang512P99Ms, scalebench.MaxMixedGangsSec)
		fs.PrintDefaults()
	}
	return fs
}

const scaleUsage = `Usage: corral bench scale [flags]

Measures how fast corral decides on a large synthetic fleet: zone > block >
rack, 16 nodes a rack, 32 racks (512 nodes) a block, 4 blocks a zone, each
node 192 cores, 2 TiB and --gpus-per-node GPUs (G below). In the pod stream
--mig-pct of the racks (racks 0, 5, 10, ... at 20%%) hold A100-80GB in
dynamic MIG mode (slices made on demand) and the others H100-80GB given
whole; the gang phases use a fresh fleet of --nodes H100-80GB nodes.
Every decision is one gang.State.Place, the call corral server and corral
kube-scheduler make, so the pod stream measures the live policy, what they
run: its 1-GPU pods are placed by corral's fragmentation-aware packing,
learning the mix online (corral bench fgd --policies live measures how well
it packs), its MIG pods by the MIG search; gangs keep the topology-first
search.
Only Place and Release calls are timed (time.Now around each call), not
building jobs or the benchmark's bookkeeping. It runs on one goroutine, and
one seed gives the same decisions on every run; only the times differ.

Example:
  corral bench scale --nodes 10000 --gpus-per-node 8 --json results.json

Phases and metrics (JSON field names):
  build        fleet_build_seconds, state_build_seconds: making the fleet
               and gang.New over it. heap_bytes: HeapAlloc after a GC with
               the fleet and its empty state live; fleet_heap_bytes and
               state_heap_bytes are their shares above the baseline.
  pod stream   1-GPU pods (50%%, asking for H100 unless --pin-whole=false)
               and MIG pods 1g.10gb / 2g.20gb / 3g.40gb (25/15/10%%; only
               the kinds the fleet has nodes for). Each
               pod is one Place: a decision, by the live policy for 1-GPU
               pods (pod_policy). A warm-up (untimed) fills the
               fleet to 50%%; then a target occupancy rises to 80%% and falls
               back to 50%% twice, and random running pods are released
               whenever occupancy is above it. Occupancy counts GPU eighths:
               a whole GPU is 8, a MIG pod its memory slices (1, 2 or 4).
               decisions_per_sec: decisions / wall time of the stream loop,
               releases included; decisions_per_sec_place_only: decisions /
               time inside Place. p50/p90/p99/p999/max_decision_ms: latency
               of each Place, placed or not; decisions_over_1ms counts the
               slow ones. Releases are not decisions: releases and
               p99_release_ms report them apart. pod_kinds splits the
               decisions by kind of pod and the policy that placed it (live
               for 1-GPU pods, mig for each MIG profile): decisions, placed,
               place_seconds, decisions_per_sec_place_only, p50_ms, p99_ms.
  gang512      A fresh state is filled with random 1..G-GPU one-task jobs
               until one does not fit, then random jobs are released down to
               70%%, which scatters the free GPUs over nodes and blocks. Each
               trial places one 512-GPU gang with a required block
               constraint (even trials 512/G tasks of G GPUs, odd trials
               512/(G/2) tasks of G/2), releases it if placed, then churns 16
               fill jobs (untimed). gang512_p50/p99/max_ms: latency of each
               Place, placed or proven not to fit; gang512_placed and
               gang512_unfit count each; gang512_shapes splits them by shape.
  mixed gangs  A fresh state gets a background of 1..G-GPU jobs (to 30%%,
               then released at random to 20%%), then --gangs gangs of
               1..512/G tasks of G GPUs: 40%% unconstrained, 40%% with a
               required block, 20%% with a required rack (at most 16 tasks).
               Before each, the oldest gangs are released while occupancy
               plus the new gang would pass 80%%. mixed_gangs_seconds: time
               inside Place only (what the target bounds);
               mixed_gangs_loop_seconds: the whole loop, releases included.

Targets (the "pass" object), at 10,000 nodes x 8 GPUs: decisions_per_sec
>= %d, p99_decision_ms <= %g, gang512_p99_ms <= %g, mixed_gangs_seconds
<= %g per 1,000 gangs.

Flags:
`

func runBenchScale(args []string, stdout, stderr io.Writer) (err error) {
	var o scaleFlags
	fs := o.flags(stderr)
	if err := parseFlags(fs, "", args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return unexpected(fs)
	}
	if err := o.opt.Check(); err != nil {
		return err
	}
	o.opt.Progress = phaseProgress(stderr, o.quiet)
	if o.cpuProfile != "" {
		stop, err := cpuprofile.Start(o.cpuProfile)
		if err != nil {
			return err
		}
		defer func() {
			if serr := stop(); err == nil {
				err = serr
			}
		}()
	}
	res, err := scalebench.Run(o.opt)
	if err != nil {
		return err
	}
	if err := scalebench.WriteTable(stdout, res); err != nil {
		return err
	}
	if o.jsonPath == "" {
		return nil
	}
	var b bytes.Buffer
	if err := scalebench.WriteJSON(&b, res); err != nil {
		return err
	}
	if err := os.WriteFile(o.jsonPath, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	fmt.Fprintf(stdout, "\nwrote %s\n", o.jsonPath)
	return nil
}

// phaseProgress draws one progress bar per phase of a run.
func phaseProgress(stderr io.Writer, quiet bool) func(phase string, done, total int) {
	bars := map[string]*progress{}
	return func(phase string, done, total int) {
		bar := bars[phase]
		if bar == nil {
			bar = newProgress(stderr, quiet, phase)
			bars[phase] = bar
		}
		bar.update(done, total)
		if done == total {
			bar.finish()
		}
	}
}
