package sim

import (
	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/sched"
)

// replaceOnSpare moves a running gang off a node that failed without
// notice, when the core's rule says so (sched.MovesOff), onto a hot spare
// (or a free node) of the same domain, where it restarts at once from its
// last checkpoint instead of going back to the queue. Preemptible work
// borrowing the spare is stopped and requeued. It reports whether the
// gang was moved. The simulator moves a job placed as one placement (not
// one grown in parts).
func (s *Sim) replaceOnSpare(name, node string, notice bool) bool {
	r := s.running[name]
	if r == nil || len(r.parts) != 1 || r.parts[0] != name {
		return false
	}
	cur := s.state.Job(name)
	if move, _ := sched.MovesOff(sched.Struck{Tasks: len(cur.Tasks), Notice: notice}); !move {
		return false
	}
	old := *cur
	old.Tasks = append([]gang.Task(nil), cur.Tasks...)
	borrowers := s.spareBorrowers()
	rep, err := s.state.Replace(name, node)
	if err != nil {
		s.note(name, "no spare or free node next to %s: %v", node, err)
		return false
	}
	s.series.use([]*gang.Placement{&old}, r.gpus, -1)
	s.series.hold(&old, -1)
	s.series.hold(cur, 1)
	s.series.use([]*gang.Placement{cur}, r.gpus, 1)
	s.acct.allocated += placedGPUs(cur) - placedGPUs(&old)
	for _, ev := range rep.Evicted {
		p := borrowers[ev]
		s.acct.allocated -= placedGPUs(p)
		s.series.hold(p, -1)
		s.gone[ev] = p
	}
	s.restartInPlace(r, "node "+node+" failed; moved to "+rep.To+" in the same "+rep.Level)
	for _, ev := range rep.Evicted {
		owner := s.ownerOf(ev)
		if s.running[owner] != nil {
			s.interrupt(owner, false, "evicted from spare "+rep.To)
		} else {
			s.dropHeld(owner)
		}
	}
	return true
}

// restartInPlace restarts a running job where it is from its last
// checkpoint: the work since is lost, the job does not wait.
func (s *Sim) restartInPlace(r *runningJob, why string) {
	name := r.a.Job.Name
	kept := s.chargeStop(r, false, "restarts in place ("+why+")")
	s.trackEnd(r, false)
	r.done += kept
	r.start, r.gpuH, r.seg = s.now, 0, 0
	s.runs++
	r.run = s.runs
	s.trackEnd(r, true)
	s.version++
	s.schedule(event{at: s.now + r.a.Duration - r.done, arrival: -1, job: name, run: r.run})
}

// spareBorrowers maps the placements on hot spares to themselves: the
// ones a replacement may evict, kept so that their GPUs can be accounted
// for after the core has removed them.
func (s *Sim) spareBorrowers() map[string]*gang.Placement {
	out := map[string]*gang.Placement{}
	for _, n := range s.spares {
		for _, part := range s.state.Affected(n) {
			out[part] = s.state.Job(part)
		}
	}
	return out
}
