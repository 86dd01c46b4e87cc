package gang

import (
	"fmt"
	"slices"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/job"
)

// Replacement is the outcome of moving a failed node's tasks of a running
// gang onto another node of the same domain.
type Replacement struct {
	Job     string
	From    string
	To      string
	Level   string   // the innermost level whose domain holds both nodes ("fleet": none below it)
	Spare   bool     // the new node was a hot spare
	Evicted []string // preemptible jobs removed from the spare to make room
}

// Replace moves job's tasks off a failed node onto a hot spare in the
// failed node's innermost domain (its rack, then block, and so on, then
// the whole fleet), or else onto a free node there. Preemptible work
// borrowing the spare is evicted. The failed node is marked unhealthy.
//
// A move keeps the job's required topology: it looks no wider than the
// domain the job is required to pack in (while other tasks of the job stay
// where they are), and under a required spread it takes no node whose
// spread domain would hold more of the job's tasks than the spread
// allows. If nothing within those bounds can take the tasks, nothing
// changes and the error says so: the caller requeues the gang.
func (s *State) Replace(jobName, failed string) (*Replacement, error) {
	return s.replace(jobName, failed, nil, nil)
}

// ReplaceMember is Replace for one member of a gang whose members are
// placed as jobs of their own (a pod group on Kubernetes, each pod a job):
// the move keeps the gang's topology, the named other members staying
// where they are.
func (s *State) ReplaceMember(jobName, failed string, topology []job.Constraint, others []string) (*Replacement, error) {
	return s.replace(jobName, failed, topology, others)
}

// replace moves job's tasks on failed, keeping topology (the job's own
// when nil) with others' tasks staying.
func (s *State) replace(jobName, failed string, topology []job.Constraint, others []string) (*Replacement, error) {
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
	gang := p.job
	if topology != nil && gang != nil {
		c := *gang
		c.Topology = topology
		gang = &c
	}
	held := slices.Clone(staying)
	for _, o := range others {
		if q := s.jobs[o]; q != nil && o != jobName {
			held = append(held, q.Tasks...)
		}
	}
	b, err := s.boundsOf(gang, held)
	if err != nil {
		return nil, fmt.Errorf("replace %s on %s: %w", jobName, failed, err)
	}
	s.noteHealth(from)
	s.fleet.Nodes[from].Health = fleet.Unhealthy
	s.savepoint()
	for _, t := range moving {
		s.untake(t)
	}
	rep, moved, ok := s.replaceIn(p, from, moving, b)
	if !ok {
		s.rollback()
		return nil, fmt.Errorf("replace %s on %s: %s; requeue the gang", jobName, failed, b.refusal(s, len(moving)))
	}
	s.commit()
	s.noteJob(jobName)
	p.Tasks = append(staying, moved...)
	p.Span = s.span(p.Tasks)
	rep.Job, rep.From = jobName, failed
	return rep, nil
}

// moveBounds are how far a move may take a job's tasks (Replace).
type moveBounds struct {
	outermost int    // the outermost level searched, -1 for the whole fleet; above the innermost: none
	within    string // that level's name, for errors
	// spreadDepth is the depth of a required spread's domains (-2: none),
	// each of which may hold spreadMax of the job's tasks; staying counts
	// the tasks that stay, by node.
	spreadDepth, spreadMax int
	spreadLevel            string
	staying                map[int]int
}

// boundsOf is the bounds of a move of some of gang's tasks, staying
// staying where they are.
func (s *State) boundsOf(gang *job.Job, staying []Task) (moveBounds, error) {
	b := moveBounds{outermost: -1, within: fleetLevel, spreadDepth: -2}
	if gang == nil || len(staying) == 0 {
		return b, nil // the whole gang moves onto one node: every constraint holds
	}
	pl, err := s.compile(gang)
	if err != nil {
		return b, err
	}
	if d := pl.minDepth; d >= 0 {
		b.outermost, b.within = d, pl.levels[d]
	}
	if sp := pl.spread; sp != nil && sp.Required {
		b.spreadDepth, b.spreadMax, b.spreadLevel = pl.lim.spreadDepth, pl.lim.spreadMax, pl.levels[pl.lim.spreadDepth]
		b.staying = map[int]int{}
		for _, t := range staying {
			b.staying[t.Node]++
		}
	}
	return b, nil
}

// refusal says why no node within the bounds took k tasks.
func (b moveBounds) refusal(s *State, k int) string {
	if b.outermost >= s.tree.levels {
		return fmt.Sprintf("the job keeps its tasks on one node, so its %d tasks there cannot move alone", k)
	}
	why := fmt.Sprintf("no spare or free node in its %s can take %d tasks", b.within, k)
	if b.spreadDepth >= 0 {
		why += fmt.Sprintf(" with at most %d of the job's tasks per %s", b.spreadMax, b.spreadLevel)
	}
	return why
}

// keepsSpread reports whether moving k tasks onto node n keeps the job's
// required spread.
func (s *State) keepsSpread(n, k int, b moveBounds) bool {
	if b.spreadDepth < 0 {
		return true
	}
	held := k
	for m, c := range b.staying {
		if b.spreadDepth == s.tree.levels && m == n || b.spreadDepth < s.tree.levels && s.tree.path[m][b.spreadDepth] == s.tree.path[n][b.spreadDepth] {
			held += c
		}
	}
	return held <= b.spreadMax
}

// fleetLevel names the whole fleet as the domain of a move.
const fleetLevel = "fleet"

// replaceIn looks for a node to host the moving tasks within the bounds,
// innermost domain first; spares before ordinary nodes at each level.
func (s *State) replaceIn(p *Placement, from int, moving []Task, b moveBounds) (*Replacement, []Task, bool) {
	for l := s.tree.levels - 1; l >= b.outermost; l-- {
		v, level := 0, fleetLevel // the root: the whole fleet
		if l >= 0 {
			v, level = s.tree.path[from][l], s.fleet.Levels[l]
		}
		for _, wantSpare := range []bool{true, false} {
			for _, n := range s.tree.nodes(v) {
				node := &s.fleet.Nodes[n]
				if n == from || node.Spare != wantSpare || !node.Schedulable() || !s.keepsSpread(n, len(moving), b) {
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
					return &Replacement{To: node.Name, Level: level, Spare: wantSpare, Evicted: evicted}, moved, true
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
		s.untakeTasks(p.Tasks)
		out = append(out, name)
	}
	return out
}
