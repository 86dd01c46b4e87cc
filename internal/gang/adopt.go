package gang

import (
	"fmt"

	"github.com/corral-sched/corral/internal/job"
)

// Adopt records job j, whose tasks already run on the named node, as
// placed there: it takes their resources on that node without choosing
// anything, the way a face learns the work its world already runs. The
// node's health, taints and the job's model restrictions do not matter
// (the tasks run there); its kind of GPU does. Nothing changes when the
// tasks do not fit the node's free resources.
func (s *State) Adopt(j *job.Job, node string) (*Placement, error) {
	if s.jobs[j.Name] != nil {
		return nil, fmt.Errorf("adopt %s: a job with this name is already placed", j.Name)
	}
	n, err := s.NodeIndex(node)
	if err != nil {
		return nil, fmt.Errorf("adopt %s: %w", j.Name, err)
	}
	pl, err := s.compile(runningThere(j, s.fleet.Nodes[n].Taints))
	if err != nil {
		return nil, fmt.Errorf("adopt %s: %w", j.Name, err)
	}
	s.savepoint()
	var tasks []Task
	for _, r := range pl.reqs {
		count := j.Groups[r.group].Count
		if got := s.adoptable(n, r); got < count {
			s.rollback()
			return nil, fmt.Errorf("adopt %s: node %s holds %d of its %d tasks of group %q", j.Name, node, got, count, j.Groups[r.group].Name)
		}
		tasks = append(tasks, s.assign(n, r, count)...)
	}
	s.commit()
	s.observe(j)
	delete(s.packer.observed, j.Name)
	p := &Placement{Job: j.Name, Tasks: tasks, Span: s.span(tasks), job: j}
	s.jobs[j.Name] = p
	s.countShares(p, 1)
	return p, nil
}

// runningThere is j as it runs on a node with these taints: tolerating
// them, with any GPU model.
func runningThere(j *job.Job, taints []string) *job.Job {
	c := *j
	c.Tolerations = append(append([]string(nil), j.Tolerations...), taints...)
	c.Groups = make([]job.Group, len(j.Groups))
	for i, g := range j.Groups {
		c.Groups[i] = g
		c.Groups[i].Task.Models = nil
	}
	return &c
}

// adoptable is how many tasks of r node n holds, whatever its health.
func (s *State) adoptable(n int, r *request) int {
	ns := &s.nodes[n]
	if !r.classOK[ns.class] {
		return 0
	}
	limit := s.gpuCapacity(n, r)
	if c := r.d.CPUMilli; c > 0 {
		limit = min(limit, int(ns.cpu/c))
	}
	if m := r.d.MemoryMiB; m > 0 {
		limit = min(limit, int(ns.mem/m))
	}
	return limit
}
