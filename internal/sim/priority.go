package sim

import "github.com/corral-sched/corral/internal/job"

// preemptLower starts p (shaped j) by stopping running preemptible jobs of
// lower priority, those that lose the least work first (then the lowest
// priority, then name), when p stays within its tenant's quota (what it
// lent comes back as borrowers stop) and within the hourly bound on
// preemptions. Victims get the
// grace period to checkpoint and go back to the queue. It changes nothing
// and reports false when no such set of victims makes room.
func (s *Sim) preemptLower(p *pendingJob, j *job.Job) bool {
	if !s.opt.PriorityPreemption || s.noPreempt.same(p.a.Job.Name, s.version) {
		return false
	}
	s.noPreempt.note(p.a.Job.Name, s.version)
	if s.book.CanAdmit(tenantOf(p.a), need(p.a)) != nil && !s.withinNominal(p) {
		return false // its tenant's quota, not room, keeps it waiting
	}
	var victims []string
	for name, r := range s.running {
		if r.a.Job.Preemptible && r.a.Job.Priority < p.a.Job.Priority && s.records[s.byName[name]].Preemptions < maxPreemptions {
			victims = append(victims, name)
		}
	}
	if len(victims) == 0 {
		return false
	}
	s.cheapestFirst(victims)
	var parts []string
	for i, v := range victims {
		parts = append(parts, s.running[v].parts...)
		if !s.state.WhatIf(parts, j) {
			continue
		}
		chosen := victims[:i+1]
		if !s.preemptionBudget(p, len(chosen)) {
			return false
		}
		return s.stopFor(p, j, chosen, "preempted by higher-priority", &s.preempted, func(name string) {
			s.records[s.byName[name]].Preemptions++
		})
	}
	return false
}
