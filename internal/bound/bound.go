package bound

import (
	"fmt"

	"github.com/corral-sched/corral/internal/placement"
)

// Result says how well any placement of a set of pods could do on a cluster.
type Result struct {
	CapacityMilli int64 // cluster GPU milli
	// UpperMilli is a proven upper bound on the GPU milli any placement of a
	// subset of the pods can allocate (LP relaxation with valid cuts).
	UpperMilli float64
	// PackedMilli is what an offline heuristic actually packed (a feasible
	// placement, so a lower bound on the optimum).
	PackedMilli int64
}

// MinUnallocatedPct = 100 - 100*UpperMilli/CapacityMilli: no placement leaves
// fewer GPUs unallocated. It is 0 for a cluster without GPUs.
func (r Result) MinUnallocatedPct() float64 {
	if r.CapacityMilli <= 0 {
		return 0
	}
	return 100 - 100*r.UpperMilli/float64(r.CapacityMilli)
}

// PackedUnallocatedPct = 100 - 100*PackedMilli/CapacityMilli: what the offline
// heuristic left. It is 0 for a cluster without GPUs.
func (r Result) PackedUnallocatedPct() float64 {
	if r.CapacityMilli <= 0 {
		return 0
	}
	return 100 - 100*float64(r.PackedMilli)/float64(r.CapacityMilli)
}

// Compute returns the bound and the heuristic packing for placing any subset
// of pods on nodes.
//
// CPU-only pods and nodes without GPUs are ignored: they allocate no GPU, and
// leaving a pod out is always allowed.
func Compute(nodes []placement.Node, pods []placement.Pod) (Result, error) {
	if err := validate(nodes, pods); err != nil {
		return Result{}, err
	}
	var res Result
	var requested int64
	for _, n := range nodes {
		res.CapacityMilli += n.GPUMilli()
	}
	for _, p := range pods {
		if p.IsGPU() {
			requested += p.TotalGPUMilli()
		}
	}
	upper, h, err := relax(nodes, pods)
	if err != nil {
		return Result{}, fmt.Errorf("bound: lp relaxation: %w", err)
	}
	// Capacity and the total request are bounds too; keep the least.
	res.UpperMilli = min(upper, float64(res.CapacityMilli), float64(requested))
	res.PackedMilli = pack(nodes, pods, h).milli
	if float64(res.PackedMilli) > res.UpperMilli+1e-6 {
		return Result{}, fmt.Errorf("bound: heuristic packed %d milli, above the bound %.3f (a bug)",
			res.PackedMilli, res.UpperMilli)
	}
	return res, nil
}

// validate reports the first invalid node or pod.
func validate(nodes []placement.Node, pods []placement.Pod) error {
	for i, n := range nodes {
		if err := n.Validate(); err != nil {
			return fmt.Errorf("bound: node %d: %w", i, err)
		}
	}
	for i, p := range pods {
		if err := p.Validate(); err != nil {
			return fmt.Errorf("bound: pod %d: %w", i, err)
		}
	}
	return nil
}
