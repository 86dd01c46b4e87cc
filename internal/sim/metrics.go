package sim

import (
	"sort"
	"time"

	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/workload"
)

// JobRecord is what happened to one job.
type JobRecord struct {
	Name     string        `json:"name"`
	Tenant   string        `json:"tenant"`
	Class    string        `json:"class"`
	Tasks    int           `json:"tasks"`
	GPUs     float64       `json:"gpus"`
	Arrive   time.Duration `json:"arrive_ns"`
	Start    time.Duration `json:"start_ns"`
	End      time.Duration `json:"end_ns"`
	UsedGPUs float64       `json:"used_gpus"`      // asked of the GPUs it ran on
	WorkGPUH float64       `json:"work_gpu_hours"` // the work it asked for: GPUs x run time
	// GPUHours ran (over every run), and of those lost to interruptions
	// since the last checkpoint.
	GPUHours      float64 `json:"gpu_hours"`
	LostGPUHours  float64 `json:"lost_gpu_hours"`
	Interruptions int     `json:"interruptions"`   // stops of any cause
	Preemptions   int     `json:"preemptions"`     // stops to give quota back to its owner
	Moves         int     `json:"moves,omitempty"` // stops to consolidate free GPUs for a gang
	// Estimate is when the job was first expected to start, from the
	// reservation it held while first in line (EstimatedAt); zero if it
	// never held one.
	Estimate    time.Duration `json:"estimate_ns,omitempty"`
	EstimatedAt time.Duration `json:"estimated_at_ns,omitempty"`
	Started     bool          `json:"started"`
	Finished    bool          `json:"finished"`
}

// Wait is how long the job waited, up to end for a job that never started.
func (r JobRecord) Wait(end time.Duration) time.Duration {
	if r.Started {
		return r.Start - r.Arrive
	}
	return end - r.Arrive
}

// accounting integrates GPUs allocated (held by any placement, including
// tasks waiting for their siblings) and used (held by running jobs) over
// time, in total and inside the window [0, horizon].
type accounting struct {
	capacity          float64
	allocated, used   float64 // GPUs now
	last              time.Duration
	horizon           time.Duration
	allocSec, usedSec float64 // GPU-seconds inside the window
	idleHeldSec       float64 // GPU-seconds held but not used, over all time
}

func (a *accounting) advance(to time.Duration) {
	if to <= a.last {
		return
	}
	a.idleHeldSec += (a.allocated - a.used) * (to - a.last).Seconds()
	if end := min(to, a.horizon); end > a.last {
		dt := (end - a.last).Seconds()
		a.allocSec += a.allocated * dt
		a.usedSec += a.used * dt
	}
	a.last = to
}

// placedGPUs is the GPU amount a placement holds: whole GPUs, MIG slices
// as their share of the GPU's compute, shares as their fraction.
func placedGPUs(p *gang.Placement) float64 {
	if p == nil {
		return 0
	}
	total := 0.0
	for _, t := range p.Tasks {
		total += taskPlacedGPUs(t)
	}
	return total
}

// demandGPUs is the GPU amount a job asks for, for reports.
func demandGPUs(a *workload.Arrival) float64 {
	total := 0.0
	for _, g := range a.Job.Groups {
		total += taskGPUs(g.Task) * float64(g.Count)
	}
	return total
}

// taskGPUs is the GPU amount one task asks for.
func taskGPUs(d job.Demand) float64 { return workload.GPUFraction(d) }

// percentile returns the q-quantile (0..1) of sorted xs by nearest rank.
func percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func sortedFloats(xs []float64) []float64 {
	out := append([]float64(nil), xs...)
	sort.Float64s(out)
	return out
}
