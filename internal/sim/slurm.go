package sim

import (
	"sort"

	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/job"
)

// slurmPolicy models an HPC batch scheduler allocating whole nodes: every
// task that uses a GPU (whole, MIG or shared) gets a node of its own with
// at least the GPUs it asks for, jobs go by priority then arrival, and the
// first that does not fit holds a reservation behind which shorter jobs
// backfill (EASY). It is a model of that behaviour, not Slurm.
type slurmPolicy struct{}

func (slurmPolicy) Name() string { return "slurm-like" }
func (slurmPolicy) Describe() string {
	return "model: whole nodes per GPU task, priority then FIFO, EASY backfill"
}
func (slurmPolicy) StateOptions() gang.Options { return gang.Options{} }

func (slurmPolicy) Cycle(s *Sim) {
	order := append([]*pendingJob(nil), s.pending...)
	sort.SliceStable(order, func(i, j int) bool { return order[i].a.Job.Priority > order[j].a.Job.Priority })
	s.easyCycle(order, func(p *pendingJob) *job.Job {
		if p.shaped == nil {
			p.shaped = wholeNodes(p.a.Job)
		}
		return p.shaped
	}, false)
}

// wholeNodes turns every GPU task of j into a whole-node task.
func wholeNodes(j *job.Job) *job.Job {
	c := *j
	c.Groups = make([]job.Group, len(j.Groups))
	for i, g := range j.Groups {
		d := g.Task
		if d.Kind() != job.CPUOnly {
			d = job.Demand{GPUs: max(d.GPUs, 1), WholeNode: true, CPUMilli: d.CPUMilli, MemoryMiB: d.MemoryMiB, Models: d.Models}
		}
		c.Groups[i] = job.Group{Name: g.Name, Count: g.Count, Task: d}
	}
	return &c
}
