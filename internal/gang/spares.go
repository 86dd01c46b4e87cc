package gang

import (
	"fmt"

	"github.com/corral-sched/corral/internal/fleet"
)

// Replacement is the outcome of moving a failed node's tasks of a running
// gang onto another node of the same domain.
type Replacement struct {
	Job     string
	From    string
	To      string
	Level   string   // the innermost level whose domain holds both nodes
	Spare   bool     // the new node was a hot spare
	Evicted []string // preemptible jobs removed from the spare to make room
}

// Replace moves job's tasks off a failed node onto a hot spare in the
// failed node's innermost domain (its rack, then block, and so on), or
// else onto a free node there. Preemptible work borrowing the spare is
// evicted. The failed node is marked unhealthy. If nothing in the job's
// domains can take the tasks, nothing changes and the error says so: the
// caller requeues the gang.
func (s *State) Replace(jobName, failed string) (*Replacement, error) {
	p := s.jobs[jobName]
	from, err := s.NodeIndex(failed)
	if p == nil || err != nil {
		return nil, fmt.Errorf("replace %s on %s: no such job or node", jobName, failed)
	}
	var moving, staying []Task
	for _, t := range p.Tasks {
		if t.Node == from {
			moving = append(moving, t)
		} else {
			staying = append(staying, t)
		}
	}
	if len(moving) == 0 {
		return nil, fmt.Errorf("replace %s on %s: the job has no task there", jobName, failed)
	}
	s.noteHealth(from)
	s.fleet.Nodes[from].Health = fleet.Unhealthy
	s.savepoint()
	for _, t := range moving {
		s.untake(t)
	}
	rep, moved, ok := s.replaceIn(p, from, moving)
	if !ok {
		s.rollback()
		return nil, fmt.Errorf("replace %s on %s: no spare or free node in its %s can take %d tasks; requeue the gang",
			jobName, failed, s.fleet.Levels[0], len(moving))
	}
	s.commit()
	s.noteJob(jobName)
	p.Tasks = append(staying, moved...)
	p.Span = s.span(p.Tasks)
	rep.Job, rep.From = jobName, failed
	return rep, nil
}

// replaceIn looks for a node to host the moving tasks, innermost domain
// first; spares before ordinary nodes at each level.
func (s *State) replaceIn(p *Placement, from int, moving []Task) (*Replacement, []Task, bool) {
	for l := s.tree.levels - 1; l >= 0; l-- {
		v := s.tree.path[from][l]
		for _, wantSpare := range []bool{true, false} {
			for _, n := range s.tree.nodes(v) {
				node := &s.fleet.Nodes[n]
				if n == from || node.Spare != wantSpare || !node.Schedulable() {
					continue
				}
				s.savepoint()
				var evicted []string
				if wantSpare {
					evicted = s.untakeBorrowers(n)
				}
				if moved, ok := s.hostAll(n, p, moving); ok {
					s.commit()
					for _, j := range evicted {
						s.noteJob(j)
						s.countShares(s.jobs[j], -1)
						delete(s.jobs, j)
					}
					return &Replacement{To: node.Name, Level: s.fleet.Levels[l], Spare: wantSpare, Evicted: evicted}, moved, true
				}
				s.rollback()
			}
		}
	}
	return nil, nil, false
}

// hostAll places every moving task on node n, or none.
func (s *State) hostAll(n int, p *Placement, moving []Task) ([]Task, bool) {
	s.savepoint()
	var moved []Task
	for _, t := range moving {
		r, err := s.newRequest(t.Group, p.job.Groups[t.Group].Task, true, p.job.TolerationsOf(t.Group))
		if err != nil {
			s.rollback()
			return nil, false
		}
		if c, _ := s.capacity(n, r); c < 1 {
			s.rollback()
			return nil, false
		}
		moved = append(moved, s.assign(n, r, 1)...)
	}
	s.commit()
	return moved, true
}

// untakeBorrowers frees every task of the preemptible jobs that have a task
// on node n and returns their names; the caller drops them from s.jobs if
// it keeps the change.
func (s *State) untakeBorrowers(n int) []string {
	var out []string
	for _, name := range s.Affected(s.fleet.Nodes[n].Name) {
		p := s.jobs[name]
		if !p.job.Preemptible {
			continue
		}
		for i := len(p.Tasks) - 1; i >= 0; i-- {
			s.untake(p.Tasks[i])
		}
		out = append(out, name)
	}
	return out
}
