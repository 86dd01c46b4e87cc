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
	return "gangs whole, packed and topology-aware; tenants by fair share within quota and borrowing; reservation for the head and EASY backfill"
}
func (corralPolicy) StateOptions() gang.Options { return gang.Options{} }

// Cycle considers tenants least served first (decayed fair share), a job
// only while its tenant's quota, with what the cohort lends, has room.
func (corralPolicy) Cycle(s *Sim) {
	s.easyCycle(s.fairOrder(), func(p *pendingJob) *job.Job { return p.a.Job }, true)
}

// easyCycle starts the pending jobs in the given order, each as shape
// makes it, with a reservation for the first that does not fit and EASY
// backfill behind it.
func (s *Sim) easyCycle(order []*pendingJob, shape func(*pendingJob) *job.Job, quota bool) {
	var head *pendingJob
	var reservedAt time.Duration
	var releasedBy []string
	failed := map[string]bool{}
	for _, p := range append([]*pendingJob(nil), order...) {
		j := shape(p)
		key := shapeKey(j)
		if quota {
			key = tenantOf(p.a) + "\x00" + key
		}
		if failed[key] {
			continue
		}
		placed := false
		if !quota || s.admit(p) {
			if _, placed = s.tryPlace(j); !placed && quota {
				s.unadmit(p)
			}
		}
		if !placed { // no room now, in the fleet or in the tenant's quota
			failed[key] = true
			if head == nil {
				head = p
				reservedAt, releasedBy = s.reservation(j)
			}
			continue
		}
		if head != nil && !s.keepsReservation(p, shape(head), reservedAt, releasedBy) {
			s.release(j.Name)
			if quota {
				s.unadmit(p)
			}
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
// running jobs are released in order of estimated end, and the jobs
// released by then are returned. A count of GPUs gives the first prefix
// worth trying; bisection by placement finds the first that works. If it
// never fits, the moment is forever and every running job is listed. The
// answer is kept until the head or the running jobs change.
func (s *Sim) reservation(head *job.Job) (time.Duration, []string) {
	if c := &s.resv; c.head == head.Name && c.version == s.version {
		return c.at, c.releasedBy
	}
	names, ends := s.runningByEstimatedEnd()
	at, n := forever, len(names)
	if k, ok := s.firstFit(names, head); ok {
		at, n = ends[k-1], k
	}
	s.resv = reservationCache{head: head.Name, version: s.version, at: at, releasedBy: names[:n]}
	return at, names[:n]
}

// firstFit returns the shortest prefix of names whose release lets head
// fit: galloping up from the prefix that frees enough GPUs, then
// bisection, so that the usual answer costs one or two what-ifs.
func (s *Sim) firstFit(names []string, head *job.Job) (int, bool) {
	n := len(names)
	if n == 0 {
		return 0, false
	}
	lo := s.enoughGPUs(names, head) // no shorter prefix fits
	hi := lo
	for !s.state.WhatIf(names[:hi], head) {
		if hi == n {
			return 0, false
		}
		lo, hi = hi+1, min(2*hi, n)
	}
	for lo < hi { // names[:hi] fits; nothing shorter than lo does
		mid := (lo + hi) / 2
		if s.state.WhatIf(names[:mid], head) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return hi, true
}

// reservationCache is the last reservation computed.
type reservationCache struct {
	head       string
	version    int
	at         time.Duration
	releasedBy []string
}

// enoughGPUs is the shortest prefix of names whose release frees as many
// GPUs as the head asks for, counting GPUs only (at least 1): no shorter
// prefix can let it fit.
func (s *Sim) enoughGPUs(names []string, head *job.Job) int {
	need := 0.0
	for _, g := range head.Groups {
		need += taskGPUs(g.Task) * float64(g.Count)
	}
	free := s.acct.capacity - s.acct.allocated
	for i, name := range names {
		if free >= need-1e-9 {
			return max(i, 1)
		}
		for _, part := range s.running[name].parts {
			free += placedGPUs(s.state.Job(part))
		}
	}
	return len(names)
}
