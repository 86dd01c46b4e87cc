package sim

import (
	"time"

	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/job"
)

// corralPolicy starts jobs in arrival order, each gang whole or not at all
// (internal/gang). The first job that does not fit holds a reservation: the
// moment it would fit if running jobs ended as estimated. Later jobs may
// start now (backfill) only if they are estimated to end before that
// moment, or if the head still fits then with them running (EASY
// backfill, checked by placement, not by counting GPUs).
type corralPolicy struct{}

func (corralPolicy) Name() string { return "corral" }
func (corralPolicy) Describe() string {
	return "gangs whole, packed and topology-aware; FIFO with a reservation for the head and EASY backfill"
}
func (corralPolicy) StateOptions() gang.Options { return gang.Options{} }

func (corralPolicy) Cycle(s *Sim) {
	s.easyCycle(s.pending, func(p *pendingJob) *job.Job { return p.a.Job })
}

// easyCycle starts the pending jobs in the given order, each as shape
// makes it, with a reservation for the first that does not fit and EASY
// backfill behind it.
func (s *Sim) easyCycle(order []*pendingJob, shape func(*pendingJob) *job.Job) {
	var head *pendingJob
	var reservedAt time.Duration
	var releasedBy []string
	failed := map[string]bool{}
	for _, p := range append([]*pendingJob(nil), order...) {
		j := shape(p)
		key := shapeKey(j)
		if failed[key] {
			continue
		}
		if _, ok := s.tryPlace(j); !ok {
			failed[key] = true
			if head == nil {
				head = p
				reservedAt, releasedBy = s.reservation(j)
			}
			continue
		}
		if head != nil && !s.keepsReservation(p, shape(head), reservedAt, releasedBy) {
			s.release(j.Name)
			continue
		}
		s.start(p, []string{j.Name})
	}
}

// keepsReservation reports whether backfilling p (already placed) leaves
// the head's reserved start in place.
func (s *Sim) keepsReservation(p *pendingJob, head *job.Job, at time.Duration, releasedBy []string) bool {
	if est := p.a.Job.Runtime; est > 0 && s.now+est <= at {
		return true
	}
	return s.state.WhatIf(releasedBy, head)
}

// reservation finds the earliest estimated moment at which the head fits:
// running jobs are released in order of estimated end (bisection over that
// order), and the jobs released by then are returned. If it never fits,
// the moment is forever and every running job is listed.
func (s *Sim) reservation(head *job.Job) (time.Duration, []string) {
	names, ends := s.runningByEstimatedEnd()
	lo, hi := 1, len(names)
	if hi == 0 || !s.state.WhatIf(names, head) {
		return forever, names
	}
	for lo < hi {
		mid := (lo + hi) / 2
		if s.state.WhatIf(names[:mid], head) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return ends[lo-1], names[:lo]
}
