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
	return s.adopt(j, node, -1)
}

// AdoptShareOn is Adopt for a job of one shared task (a fraction of one
// GPU) known to run on GPU gpu of the node (the device a DRA driver
// allocated it), which it is recorded on; an error, and nothing changed,
// when that GPU does not have the room.
func (s *State) AdoptShareOn(j *job.Job, node string, gpu int) (*Placement, error) {
	if len(j.Groups) != 1 || j.Groups[0].Count != 1 || j.Groups[0].Task.Kind() != job.Shared {
		return nil, fmt.Errorf("adopt %s on GPU %d: only a job of one shared task is adopted on a GPU", j.Name, gpu)
	}
	return s.adopt(j, node, gpu)
}

// adopt is Adopt with the shares on shareGPU when it is not -1.
func (s *State) adopt(j *job.Job, node string, shareGPU int) (*Placement, error) {
	if s.jobs[j.Name] != nil {
		return nil, fmt.Errorf("adopt %s: a job with this name is already placed", j.Name)
	}
	n, err := s.NodeIndex(node)
	if err != nil {
		return nil, fmt.Errorf("adopt %s: %w", j.Name, err)
	}
	if j, err = s.Resolve(j); err != nil {
		return nil, fmt.Errorf("adopt: %w", err)
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
		if shareGPU >= 0 && (shareGPU >= len(s.nodes[n].whole) || !s.shareRoom(n, shareGPU, r.milli[s.nodes[n].class])) {
			s.rollback()
			return nil, fmt.Errorf("adopt %s: GPU %d of node %s has not the room for its share", j.Name, shareGPU, node)
		}
		tasks = append(tasks, s.assignOn(n, r, count, shareGPU)...)
	}
	s.commit()
	s.observe(j)
	s.noteObserved(j.Name)
	delete(s.packer.observed, j.Name)
	p := &Placement{Job: j.Name, Tasks: tasks, Span: s.span(tasks), job: j}
	s.noteJob(j.Name)
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
		limit = min(limit, int(s.left.CPULeft[n]/c))
	}
	if m := r.d.MemoryMiB; m > 0 {
		limit = min(limit, int(s.left.MemLeft[n]/m))
	}
	return limit
}
