package scalebench

import (
	"fmt"
	"runtime"
	"time"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/gang"
)

// Run checks o, builds the fleet and runs the three phases in order: the
// pod stream on the mixed fleet, then gang512 and the mixed gangs on fresh
// states over a fleet of whole-GPU nodes. The result is judged.
func Run(o Options) (*Result, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	res := &Result{
		Nodes: o.Nodes, GPUsPerNode: o.GPUsPerNode, GPUModel: GPUModel, MIGModel: MIGModel,
		PinWhole: o.PinWhole, PodPolicy: podPolicy, Seed: o.Seed,
		GoVersion: runtime.Version(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH,
		GOMAXPROCS: runtime.GOMAXPROCS(0), NumCPU: runtime.NumCPU(),
	}
	s, err := buildState(o, res)
	if err != nil {
		return nil, err
	}
	stream(o, s, res) // s is dead after it: the GC below frees it
	runtime.GC()
	whole, _, err := newFleet(o.Nodes, o.GPUsPerNode, 0)
	if err != nil {
		return nil, fmt.Errorf("gang fleet: %w", err)
	}
	if err := gang512(o, whole, res); err != nil {
		return nil, fmt.Errorf("gang512: %w", err)
	}
	runtime.GC()
	if err := mixedGangs(o, whole, res); err != nil {
		return nil, fmt.Errorf("mixed gangs: %w", err)
	}
	res.Judge()
	return res, nil
}

// buildState builds the pod stream's fleet and its state, timing both and
// measuring the heap they hold.
func buildState(o Options, res *Result) (*gang.State, error) {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	base := m.HeapAlloc

	start := time.Now()
	f, migNodes, err := newFleet(o.Nodes, o.GPUsPerNode, o.MIGPct)
	if err != nil {
		return nil, fmt.Errorf("pod stream fleet: %w", err)
	}
	res.FleetBuildSeconds = time.Since(start).Seconds()
	runtime.GC()
	runtime.ReadMemStats(&m)
	fleetHeap := m.HeapAlloc

	start = time.Now()
	s, err := gang.New(f)
	if err != nil {
		return nil, fmt.Errorf("pod stream state: %w", err)
	}
	res.StateBuildSeconds = time.Since(start).Seconds()
	runtime.GC()
	runtime.ReadMemStats(&m)
	res.HeapBytes = m.HeapAlloc
	res.FleetHeapBytes = int64(fleetHeap) - int64(base)
	res.StateHeapBytes = int64(m.HeapAlloc) - int64(fleetHeap)
	res.MIGNodes, res.WholeNodes, res.GPUs = migNodes, o.Nodes-migNodes, f.GPUs()
	return s, nil
}

// newFleet builds the synthetic fleet of GPUModel nodes and turns every
// node of the racks r with r*migPct mod 100 < migPct (r = 0, 5, 10, ... at
// 20%) into a MIGModel node in dynamic MIG mode. It returns the fleet and
// its number of MIG nodes.
func newFleet(nodes, gpusPerNode, migPct int) (*fleet.Fleet, int, error) {
	f, err := fleet.Synthetic{Nodes: nodes, GPUsPerNode: gpusPerNode}.Build()
	if err != nil {
		return nil, 0, fmt.Errorf("synthetic fleet of %d nodes: %w", nodes, err)
	}
	mig := 0
	for i := range f.Nodes {
		// Build fills racks in node order, DefaultNodesPerRack at a time.
		if rack := i / fleet.DefaultNodesPerRack; rack*migPct%100 < migPct {
			f.Nodes[i].MIG, f.Nodes[i].GPUModel = fleet.MIGDynamic, MIGModel
			mig++
		}
	}
	if err := f.Validate(); err != nil {
		return nil, 0, fmt.Errorf("mixed fleet: %w", err)
	}
	return f, mig, nil
}
