package workload

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/job"
)

// Classes of work. Generated arrivals carry one of the first four; arrivals
// read from the openb trace carry Openb.
const (
	Training   = "training"
	FineTuning = "fine-tuning"
	Inference  = "inference"
	Notebook   = "notebook"
	Openb      = "openb"
)

// Fault kinds.
const (
	SpotNotice  = "spot-notice"  // the node will be reclaimed Notice after At
	NodeFailure = "node-failure" // the node fails at At, losing its work
	NodeRepair  = "node-repair"  // the node is back at At
)

// SpotTaint is the taint of spot nodes; generated preemptible jobs that
// checkpoint tolerate it.
const SpotTaint = fleet.SpotTaint

// Arrival is one job submitted at At.
type Arrival struct {
	At time.Duration // since the start of the workload
	// Job is what is submitted. Job.Runtime is the user's estimate, which
	// may differ from Duration (0 when the user gives none).
	Job      *job.Job
	Duration time.Duration // the true work: run time to completion
	Class    string        // Training, FineTuning, Inference, Notebook or Openb
}

// Fault is one event of a fault process.
type Fault struct {
	At     time.Duration
	Kind   string // SpotNotice, NodeFailure or NodeRepair
	Node   string
	Notice time.Duration // warning before the node goes; 0 unless SpotNotice
}

// Workload is the input of one simulation.
type Workload struct {
	Arrivals []Arrival // sorted by At, then job name
	Faults   []Fault   // sorted by At, then node, then kind
	// Horizon is the end of the period the workload covers: generated
	// arrivals all come before it; for a trace it is the last deletion.
	Horizon time.Duration
}

// SortArrivals orders arrivals by At, then by job name.
func SortArrivals(a []Arrival) {
	slices.SortStableFunc(a, compareArrivals)
}

func compareArrivals(a, b Arrival) int {
	return cmp.Or(cmp.Compare(a.At, b.At), cmp.Compare(a.Job.Name, b.Job.Name))
}

// kindOrder breaks ties between faults at the same time on the same node:
// a failure comes before the repair that follows it.
var kindOrder = map[string]int{SpotNotice: 0, NodeFailure: 1, NodeRepair: 2}

// SortFaults orders faults by At, then node, then kind (notice, failure,
// repair).
func SortFaults(f []Fault) {
	slices.SortStableFunc(f, func(a, b Fault) int {
		return cmp.Or(cmp.Compare(a.At, b.At), cmp.Compare(a.Node, b.Node),
			cmp.Compare(kindOrder[a.Kind], kindOrder[b.Kind]))
	})
}

// MergeFaults joins fault lists into one sorted list.
func MergeFaults(lists ...[]Fault) []Fault {
	var all []Fault
	for _, l := range lists {
		all = append(all, l...)
	}
	SortFaults(all)
	return all
}

// Validate reports everything wrong with w: unsorted or duplicate
// arrivals, invalid jobs, non-positive durations, and malformed faults.
func (w *Workload) Validate() error {
	var errs []error
	seen := make(map[string]bool, len(w.Arrivals))
	for i, a := range w.Arrivals {
		if err := a.validate(); err != nil {
			errs = append(errs, fmt.Errorf("arrival %d: %w", i, err))
			continue
		}
		if seen[a.Job.Name] {
			errs = append(errs, fmt.Errorf("arrival %d: duplicate job name %q", i, a.Job.Name))
		}
		seen[a.Job.Name] = true
		if i > 0 && w.Arrivals[i-1].Job != nil && compareArrivals(w.Arrivals[i-1], a) > 0 {
			errs = append(errs, fmt.Errorf("arrival %d (%s at %v): out of order", i, a.Job.Name, a.At))
		}
	}
	for i, f := range w.Faults {
		if err := f.validate(); err != nil {
			errs = append(errs, fmt.Errorf("fault %d: %w", i, err))
		}
		if i > 0 && w.Faults[i-1].At > f.At {
			errs = append(errs, fmt.Errorf("fault %d (%s on %s at %v): out of order", i, f.Kind, f.Node, f.At))
		}
	}
	return errors.Join(errs...)
}

func (a Arrival) validate() error {
	switch {
	case a.Job == nil:
		return errors.New("no job")
	case a.At < 0:
		return fmt.Errorf("job %q: negative arrival time %v", a.Job.Name, a.At)
	case a.Duration <= 0:
		return fmt.Errorf("job %q: duration %v, want more than 0", a.Job.Name, a.Duration)
	case a.Class == "":
		return fmt.Errorf("job %q: no class", a.Job.Name)
	}
	return a.Job.Validate()
}

func (f Fault) validate() error {
	if _, ok := kindOrder[f.Kind]; !ok {
		return fmt.Errorf("unknown kind %q", f.Kind)
	}
	switch {
	case f.Node == "":
		return fmt.Errorf("%s with no node", f.Kind)
	case f.At < 0 || f.Notice < 0:
		return fmt.Errorf("%s on %s: negative time %v or notice %v", f.Kind, f.Node, f.At, f.Notice)
	case f.Notice > 0 && f.Kind != SpotNotice:
		return fmt.Errorf("%s on %s: notice %v on a fault that gives none", f.Kind, f.Node, f.Notice)
	}
	return nil
}

// GPUHours is the GPU work the arrivals need: GPUs asked for (whole GPUs,
// MIG profiles as their share of compute, fractions) times true duration.
func (w *Workload) GPUHours() float64 {
	total := 0.0
	for _, a := range w.Arrivals {
		per := 0.0
		for _, g := range a.Job.Groups {
			per += float64(g.Count) * GPUFraction(g.Task)
		}
		total += per * a.Duration.Hours()
	}
	return total
}

// Compressed returns w with arrival times (and the horizon) divided by
// factor and durations kept: the same jobs arriving factor times faster,
// to replay a light trace at a higher load. Faults are dropped.
func (w *Workload) Compressed(factor float64) Workload {
	c := Workload{Arrivals: make([]Arrival, len(w.Arrivals))}
	for i, a := range w.Arrivals {
		a.At = time.Duration(float64(a.At) / factor)
		c.Arrivals[i] = a
		c.Horizon = max(c.Horizon, a.At)
	}
	return c
}

// ForLoad compresses w so that its work offers load (a share) of gpus over
// its arrival span, and returns the factor used.
func (w *Workload) ForLoad(gpus int, load float64) (Workload, float64) {
	span := w.Horizon
	if n := len(w.Arrivals); n > 0 {
		span = w.Arrivals[n-1].At
	}
	if span <= 0 || gpus <= 0 || load <= 0 {
		return *w, 1
	}
	factor := load * float64(gpus) * span.Hours() / w.GPUHours()
	return w.Compressed(factor), factor
}
