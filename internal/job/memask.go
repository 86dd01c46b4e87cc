package job

import (
	"errors"
	"fmt"
	"strings"
)

// MemoryAsk is a job that asks for GPU memory in all rather than for a
// number of GPUs of one model: the scheduling core (gang.State.Resolve)
// picks the model and the count from the fleet. It is the "600 GB of GPU
// memory" a user knows, rather than the GPUs that give it.
type MemoryAsk struct {
	TotalMiB     int64    // GPU memory in all, summed over the job's GPUs
	MinPerGPUMiB int64    // the least memory each GPU must have; 0: any
	Models       []string // the allowed GPU models; empty means any
}

// String is the ask as users write it, for messages and keys.
func (a MemoryAsk) String() string {
	s := FormatMiB(a.TotalMiB) + " of GPU memory"
	if a.MinPerGPUMiB > 0 {
		s += ", at least " + FormatMiB(a.MinPerGPUMiB) + " per GPU"
	}
	if len(a.Models) > 0 {
		s += ", models " + strings.Join(a.Models, ",")
	}
	return s
}

// MemoryShape is what the core chose for a MemoryAsk: Tasks tasks of
// GPUsPerTask whole GPUs of Model each.
type MemoryShape struct {
	Model       string // catalog name
	MemoryMiB   int64  // one GPU's memory
	Tasks       int
	GPUsPerTask int
}

// GPUs is the shape's GPUs in all.
func (s MemoryShape) GPUs() int { return s.Tasks * s.GPUsPerTask }

// String is the shape for messages: "8x H100-80GB (640Gi)" or, for
// several tasks, "16x H100-80GB as 2 tasks of 8 (1280Gi)".
func (s MemoryShape) String() string {
	out := fmt.Sprintf("%dx %s", s.GPUs(), s.Model)
	if s.Tasks > 1 {
		out += fmt.Sprintf(" as %d tasks of %d", s.Tasks, s.GPUsPerTask)
	}
	return out + " (" + FormatMiB(int64(s.GPUs())*s.MemoryMiB) + ")"
}

// FormatMiB writes MiB in the largest binary unit that keeps it whole.
func FormatMiB(mib int64) string {
	switch {
	case mib != 0 && mib%(1<<20) == 0:
		return fmt.Sprintf("%dTi", mib>>20)
	case mib != 0 && mib%(1<<10) == 0:
		return fmt.Sprintf("%dGi", mib>>10)
	}
	return fmt.Sprintf("%dMi", mib)
}

// validateAsk checks a job that asks by GPU memory before the core
// resolves it: at most one group, of Count 1, asking no GPUs itself (its
// CPU and memory are each task's), and a strict, fixed-size gang.
func (j *Job) validateAsk() error {
	a := j.ByGPUMemory
	var errs []error
	if a.TotalMiB <= 0 || a.MinPerGPUMiB < 0 {
		errs = append(errs, fmt.Errorf("byGPUMemory: total %d MiB must be positive and the minimum per GPU %d MiB not negative", a.TotalMiB, a.MinPerGPUMiB))
	}
	if len(j.Groups) > 1 {
		errs = append(errs, fmt.Errorf("byGPUMemory: %d task groups, want at most one (each task's cpu and memory)", len(j.Groups)))
	}
	for _, g := range j.Groups {
		if g.Task.Kind() != CPUOnly || len(g.Task.Models) > 0 || g.Task.WholeNode || g.Count != 1 {
			errs = append(errs, fmt.Errorf("byGPUMemory: group %q may give only cpu and memory, with count 1: the scheduler picks GPUs, models and count", g.Name))
		}
	}
	if j.MinMember != 0 || j.Elastic {
		errs = append(errs, errors.New("byGPUMemory: a job asking by GPU memory starts whole; minMember and elastic do not apply"))
	}
	return errors.Join(errs...)
}
