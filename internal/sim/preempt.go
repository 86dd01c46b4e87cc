package sim

import (
	"sort"
	"time"

	"github.com/corral-sched/corral/internal/job"
)

// reclaim lets a tenant take back quota it lent: when p's tenant would
// still be within its nominal quota with p, it stops preemptible jobs of
// tenants that borrow beyond theirs, fewest GPU-hours lost since their
// last checkpoint first (then lowest priority, then name), until p fits by
// placement and by quota; then p starts. Victims go back to the queue with
// the work of their last checkpoint. Nothing happens if no such set of
// victims lets p run. It reports whether p was placed (and admitted).
func (s *Sim) reclaim(p *pendingJob, j *job.Job) bool {
	t := tenantOf(p.a)
	want := need(p.a)[quotaFlavor]
	if !s.withinNominal(p) {
		return false // only what is its own is reclaimed
	}
	victims := s.borrowingVictims(t)
	var chosen, parts []string
	freed := int64(0)
	room := s.book.Headroom(t, quotaFlavor)
	for _, v := range victims {
		r := s.running[v]
		chosen = append(chosen, v)
		parts = append(parts, r.parts...)
		freed += need(r.a)[quotaFlavor]
		if room+freed >= want && s.state.WhatIf(parts, j) {
			for _, name := range chosen {
				v := s.running[name].pending
				s.interrupt(name, false)
				rec := &s.records[s.byName[name]]
				rec.Preemptions++
				// It may not borrow again for a while, doubling each time:
				// no preempt-requeue loop.
				v.noBorrowUntil = s.now + reborrowBackoff<<min(rec.Preemptions-1, 20)
			}
			return s.placeAdmitted(p, j, true)
		}
	}
	return false
}

// reborrowBackoff is how long a job preempted once waits before it may
// borrow quota again; it doubles with every further preemption.
const reborrowBackoff = 10 * time.Minute

// withinNominal reports whether p's tenant stays within its own quota with
// p: what a job in re-borrowing back-off may use.
func (s *Sim) withinNominal(p *pendingJob) bool {
	t := tenantOf(p.a)
	spec, _ := s.book.Spec(t)
	return s.book.Usage(t)[quotaFlavor]+need(p.a)[quotaFlavor] <= spec.Nominal[quotaFlavor]
}

// borrowingVictims lists running preemptible jobs of tenants, other than
// t, that use more than their nominal quota, in the order reclaim takes
// them.
func (s *Sim) borrowingVictims(t string) []string {
	over := map[string]bool{}
	var names []string
	for name, r := range s.running {
		owner := tenantOf(r.a)
		if owner == t || !r.admitted || !r.a.Job.Preemptible {
			continue
		}
		if _, seen := over[owner]; !seen {
			over[owner] = !s.book.Borrowed(owner).IsZero()
		}
		if over[owner] {
			names = append(names, name)
		}
	}
	lost := func(name string) float64 { return s.lostIfStopped(s.running[name]) }
	sort.Slice(names, func(i, j int) bool {
		li, lj := lost(names[i]), lost(names[j])
		if li != lj {
			return li < lj
		}
		pi, pj := s.running[names[i]].a.Job.Priority, s.running[names[j]].a.Job.Priority
		if pi != pj {
			return pi < pj
		}
		return names[i] < names[j]
	})
	return names
}

// lostIfStopped is the GPU-hours a running job would lose if stopped now:
// its work since its last periodic checkpoint.
func (s *Sim) lostIfStopped(r *runningJob) float64 {
	elapsed := s.now - r.start
	if every := r.a.Job.CheckpointEvery; every > 0 {
		elapsed -= elapsed / every * every
	}
	return r.gpus * elapsed.Hours()
}
