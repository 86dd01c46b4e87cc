package scalebench

import (
	"fmt"

	"github.com/corral-sched/corral/internal/fleet"
)

// The scale targets of issue 13, met on a 10,000-node fleet of 8-GPU nodes
// with the live policy placing single tasks.
const (
	MinDecisionsPerSec = 50_000
	MaxP99DecisionMs   = 0.2
	MaxGang512P99Ms    = 5.0
	MaxMixedGangsSec   = 5.0 // for 1,000 gangs; pro-rated for Options.Gangs
)

// podPolicy names the policy that places the stream's 1-GPU pods: the live
// one, gang.State.Place as corral server and kube-scheduler call it. A
// variable so that bench/scale/run.sh, which builds this driver over an
// older placement core for its baseline, can name that core's policy
// (-ldflags -X).
var podPolicy = "live"

const (
	// GPUModel is the model of the whole-GPU nodes; MIGModel that of the
	// dynamic-MIG racks of the pod stream.
	GPUModel = fleet.DefaultGPUModel
	MIGModel = "A100-80GB"

	gangGPUs       = 512
	migUnitsPerGPU = 8 // memory slices of an H100 or A100: the unit of occupancy
)

// Options are the parameters of one run; each is a flag of corral bench
// scale of the same name, and errors name the flag.
type Options struct {
	Nodes       int    // nodes in the synthetic fleet
	GPUsPerNode int    // GPUs per node, 1 to 64
	MIGPct      int    // percent of racks in dynamic MIG mode in the pod stream
	PinWhole    bool   // 1-GPU pods ask for GPUModel
	Seed        uint64 // seed of the PCG streams
	Decisions   int    // pod decisions in the stream; 0: 20 per node
	GangTrials  int    // 512-GPU gang decisions
	Gangs       int    // gangs in the mixed-gang run

	// Progress, when set, is told how far each phase ("pod decisions",
	// "gang512 trials", "mixed gangs") has gone; done == total ends one.
	Progress func(phase string, done, total int)
}

// Check reports the first option out of range, naming its flag.
func (o Options) Check() error {
	switch {
	case o.Nodes < 1 || o.Nodes > 1_000_000:
		return fmt.Errorf("--nodes %d: want 1 to 1000000 nodes", o.Nodes)
	case o.GPUsPerNode < 1 || o.GPUsPerNode > 64:
		return fmt.Errorf("--gpus-per-node %d: want 1 to 64 GPUs per node", o.GPUsPerNode)
	case o.MIGPct < 0 || o.MIGPct > 100:
		return fmt.Errorf("--mig-pct %d: want a percentage, 0 to 100", o.MIGPct)
	case o.Decisions < 0:
		return fmt.Errorf("--decisions %d: want 0 (20 per node) or more", o.Decisions)
	case o.GangTrials < 1:
		return fmt.Errorf("--gang-trials %d: want at least 1", o.GangTrials)
	case o.Gangs < 1:
		return fmt.Errorf("--gangs %d: want at least 1", o.Gangs)
	}
	return nil
}

// decisions is the stream's length: Decisions, or 20 per node.
func (o Options) decisions() int {
	if o.Decisions == 0 {
		return 20 * o.Nodes
	}
	return o.Decisions
}

// phase returns the progress callback of one phase; it does nothing when
// Options.Progress is nil.
func (o Options) phase(name string) func(done, total int) {
	if o.Progress == nil {
		return func(int, int) {}
	}
	return func(done, total int) { o.Progress(name, done, total) }
}
