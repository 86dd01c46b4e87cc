package sim

import (
	"sort"

	"github.com/corral-sched/corral/internal/job"
)

// Documented is a model of another system that names the documentation
// each of its choices follows; corral sim -h prints it under the model.
type Documented interface {
	Docs() []string
}

// Docs returns the documentation a policy's choices follow, or nil for a
// policy that models nothing else.
func Docs(p Policy) []string {
	if d, ok := p.(Documented); ok {
		return d.Docs()
	}
	return nil
}

// byPriorityThenArrival orders jobs as a priority queue of the peers does:
// higher priority first, then earlier creation, then name (kube-scheduler's
// PrioritySort, Kueue's and Volcano's queue order).
func byPriorityThenArrival(pending []*pendingJob) []*pendingJob {
	order := append([]*pendingJob(nil), pending...)
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i].a, order[j].a
		if a.Job.Priority != b.Job.Priority {
			return a.Job.Priority > b.Job.Priority
		}
		if a.At != b.At {
			return a.At < b.At
		}
		return a.Job.Name < b.Job.Name
	})
	return order
}

// victimsBelow lists the running preemptible jobs that keep(r) accepts,
// lowest priority first, then those that lose the fewest GPU-hours if
// stopped now, then by name: the order in which the peers' priority
// preemption picks victims (Slurm preempt/qos, kube-scheduler's
// DefaultPreemption, Volcano's reclaim).
func (s *Sim) victimsBelow(keep func(r *runningJob) bool) []string {
	var names []string
	for name, r := range s.running {
		if r.a.Job.Preemptible && keep(r) {
			names = append(names, name)
		}
	}
	sort.Slice(names, func(i, j int) bool {
		ri, rj := s.running[names[i]], s.running[names[j]]
		if ri.a.Job.Priority != rj.a.Job.Priority {
			return ri.a.Job.Priority < rj.a.Job.Priority
		}
		if ci, cj := s.stopCost(ri), s.stopCost(rj); ci != cj {
			return ci < cj
		}
		return names[i] < names[j]
	})
	return names
}

// roomAfter returns the shortest prefix of victims whose stopping lets j be
// placed, checked by placement once they free at least j's GPUs; false if
// stopping all of them would not do.
func (s *Sim) roomAfter(victims []string, j *job.Job) ([]string, bool) {
	need := 0.0
	for _, g := range j.Groups {
		need += taskGPUs(g.Task) * float64(g.Count)
	}
	free := s.acct.capacity - s.acct.allocated
	var parts []string
	for i, v := range victims {
		r := s.running[v]
		parts = append(parts, r.parts...)
		for _, part := range r.parts {
			free += placedGPUs(s.state.Job(part))
		}
		if free >= need-1e-9 && s.state.WhatIf(parts, j) {
			return victims[:i+1], true
		}
	}
	return nil, false
}

// evictFor stops victims for p: each is counted as preempted and gets the
// grace period to checkpoint in, and p starts when that runs out.
func (s *Sim) evictFor(p *pendingJob, victims []string, cause string) {
	for _, name := range victims {
		s.records[s.byName[name]].Preemptions++
		s.preempted.add(s.now)
		s.interrupt(name, s.opt.PreemptGrace > 0, cause+" "+p.a.Job.Name)
	}
	p.startDelay = s.opt.PreemptGrace
}

// preemptPlaced stops running jobs that keep accepts so that p, shaped j,
// is placed now (without quota), and reports whether it was: the peers'
// preemption by priority, which looks at placement and not at quota.
func (s *Sim) preemptPlaced(p *pendingJob, j *job.Job, keep func(r *runningJob) bool, cause string) bool {
	victims, ok := s.roomAfter(s.victimsBelow(keep), j)
	if !ok || !s.preemptionBudget(p, len(victims)) {
		return false
	}
	s.evictFor(p, victims, cause)
	if _, placed := s.tryPlace(j); !placed {
		panic("sim: " + j.Name + " does not fit after its victims stopped")
	}
	return true
}

// lowerThan accepts running jobs of lower priority than p.
func lowerThan(p *pendingJob) func(r *runningJob) bool {
	return func(r *runningJob) bool { return r.a.Job.Priority < p.a.Job.Priority }
}

// runningGPUs sums, per tenant, the GPUs its running jobs use.
func (s *Sim) runningGPUs() map[string]float64 {
	out := map[string]float64{}
	for _, r := range s.running {
		out[tenantOf(r.a)] += r.gpus
	}
	return out
}
