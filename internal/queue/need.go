package queue

import (
	"fmt"

	"github.com/corral-sched/corral/internal/job"
)

// JobMilli is how much GPU j asks for in milli-GPUs, the unit of Amounts:
// Milli per whole GPU, the thousandths of a GPUMilli task, and for MIG,
// time-sliced (Shares) and memory-fraction (GPUMemoryMiB) tasks what
// fraction says one such task takes of its GPU, in thousandths (a catalog
// lookup the caller provides: this package knows no GPU models).
// CPU-only tasks count nothing. Which flavor the need is charged to is the
// caller's choice.
func JobMilli(j *job.Job, fraction func(job.Demand) (int64, error)) (int64, error) {
	var total int64
	for _, g := range j.Groups {
		per, err := taskMilli(g.Task, fraction)
		if err != nil {
			return 0, fmt.Errorf("job %q: group %q: %w", j.Name, g.Name, err)
		}
		total += per * int64(g.Count)
	}
	return total, nil
}

func taskMilli(d job.Demand, fraction func(job.Demand) (int64, error)) (int64, error) {
	switch d.Kind() {
	case job.CPUOnly:
		return 0, nil
	case job.Whole:
		return int64(d.GPUs) * Milli, nil
	}
	if d.GPUMilli > 0 {
		return int64(d.GPUMilli), nil
	}
	if fraction == nil {
		return 0, fmt.Errorf("no fraction for a %s task", describe(d))
	}
	m, err := fraction(d)
	if err != nil {
		return 0, fmt.Errorf("fraction of a %s task: %w", describe(d), err)
	}
	if m <= 0 || m > Milli {
		return 0, fmt.Errorf("fraction of a %s task is %d milli-GPUs, want 1..%d", describe(d), m, Milli)
	}
	return m, nil
}

func describe(d job.Demand) string {
	switch {
	case d.MIG != "":
		return "MIG " + d.MIG
	case d.Shares > 0:
		return fmt.Sprintf("%d-share", d.Shares)
	}
	return fmt.Sprintf("%d MiB GPU memory", d.GPUMemoryMiB)
}
