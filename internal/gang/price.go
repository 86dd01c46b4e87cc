package gang

import (
	"github.com/corral-sched/corral/internal/gpu"
	"github.com/corral-sched/corral/internal/job"
)

// What GPUs cost an hour, from the nodes' prices (fleet.Node.PricePerGPUHour),
// for budgets kept in money.

// PlacedPrice is what the GPUs job name holds cost an hour, in the fleet's
// prices per GPU-hour, each task weighted by the part of a GPU it holds
// (PlacedMilli), and whether every node it holds has a price. Zero and
// false when nothing is placed under name.
func (s *State) PlacedPrice(name string) (usdPerHour float64, priced bool) {
	p := s.jobs[name]
	if p == nil {
		return 0, false
	}
	priced = true
	for _, t := range p.Tasks {
		n := &s.fleet.Nodes[t.Node]
		if n.PricePerGPUHour <= 0 {
			priced = false
		}
		usdPerHour += n.PricePerGPUHour * float64(s.PlacedMilli(&Placement{Tasks: []Task{t}})) / 1000
	}
	return usdPerHour, priced
}

// HighestPrice is the highest price per GPU-hour among the nodes whose GPU
// model every task of j allows (Demand.Models; any model when none is
// named): what a GPU-hour of j costs at most, wherever it lands. False
// when one of those nodes has no price.
func (s *State) HighestPrice(j *job.Job) (usdPerGPUHour float64, priced bool) {
	priced = true
	for i := range s.fleet.Nodes {
		n := &s.fleet.Nodes[i]
		if n.GPUs == 0 || !AllowsModel(j, n.GPUModel) {
			continue
		}
		if n.PricePerGPUHour <= 0 {
			priced = false
		}
		usdPerGPUHour = max(usdPerGPUHour, n.PricePerGPUHour)
	}
	return usdPerGPUHour, priced
}

// AllowsModel reports whether every GPU group of j may run on GPUs of
// model (names resolved through the catalog, so that H100 allows
// H100-80GB).
func AllowsModel(j *job.Job, model string) bool {
	m, err := gpu.Lookup(model)
	for _, g := range j.Groups {
		if len(g.Task.Models) == 0 || g.Task.Kind() == job.CPUOnly {
			continue
		}
		allowed, err2 := allowedModels(g.Task.Models)
		if err != nil || err2 != nil || !allowed[m] {
			return false
		}
	}
	return true
}
