package gang

import (
	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/gpu"
	"github.com/corral-sched/corral/internal/job"
)

// What work holds of the GPUs, in thousandths of a GPU, as quotas and
// accounting count it in every face.

// PlacedMilli is what placement p holds: 1000 a whole GPU, a shared task
// the thousandths its node gives it, a MIG instance its part of the GPU's
// compute (gpu.Model.ProfileMilli; a whole GPU for a model or profile the
// catalog lacks).
func (s *State) PlacedMilli(p *Placement) int64 {
	var total int64
	for _, t := range p.Tasks {
		switch {
		case t.MIG != nil:
			total += InstanceMilli(s.fleet.Nodes[t.Node].GPUModel, t.MIG.Profile)
		case t.Milli > 0:
			total += int64(t.Milli)
		default:
			total += int64(len(t.GPUs)) * 1000
		}
	}
	return total
}

// InstanceMilli is what one MIG instance of profile on a GPU of model
// counts for: gpu.Model.ProfileMilli, or a whole GPU when the catalog
// knows neither.
func InstanceMilli(model, profile string) int64 {
	m, err := gpu.Lookup(model)
	if err != nil {
		return 1000
	}
	milli, err := m.ProfileMilli(profile)
	if err != nil {
		return 1000
	}
	return milli
}

// LeastMilli is what j surely holds once placed, wherever it lands: whole
// GPUs and thousandths as asked; a MIG instance its least part of a GPU
// among the fleet's MIG models that have its profile (among the catalog's,
// gpu.LeastProfileMilli, when the fleet has none); time
// slices their part of a GPU of the most slices the fleet offers, memory
// its part of the largest GPU that may be shared. Once
// placed it holds no less (PlacedMilli). A job that asks by GPU memory
// holds the GPUs of the shape chosen for it (Resolve); nothing when no
// shape meets its ask.
func (s *State) LeastMilli(j *job.Job) int64 {
	if r, err := s.Resolve(j); err == nil {
		j = r
	}
	var total int64
	for _, g := range j.Groups {
		d := g.Task
		per := int64(d.GPUs)*1000 + int64(d.GPUMilli)
		switch {
		case d.MIG != "":
			per = s.leastProfileMilli(d.MIG)
		case d.Shares > 0 && s.maxSlices > 0:
			per = int64(d.Shares) * 1000 / int64(s.maxSlices)
		case d.GPUMemoryMiB > 0 && s.maxShareMemMiB > 0:
			per = (d.GPUMemoryMiB*1000 + s.maxShareMemMiB - 1) / s.maxShareMemMiB
		}
		total += int64(g.Count) * per
	}
	return total
}

// leastProfileMilli is the least part of a GPU an instance of profile
// takes on the fleet's MIG models that have it, or over the catalog's
// models when none of the fleet's has it.
func (s *State) leastProfileMilli(profile string) int64 {
	var least int64
	for _, c := range s.classes {
		if c.model == nil || c.mig == fleet.MIGNone {
			continue
		}
		if m, err := c.model.ProfileMilli(profile); err == nil && (least == 0 || m < least) {
			least = m
		}
	}
	if least == 0 {
		return gpu.LeastProfileMilli(profile)
	}
	return least
}

// FreeMilli is what the fleet's GPUs have free, in thousandths: every
// GPU of every node, less what placed work holds (PlacedMilli).
func (s *State) FreeMilli() int64 {
	free := int64(s.fleet.GPUs()) * 1000
	for _, p := range s.jobs {
		free -= s.PlacedMilli(p)
	}
	return free
}
