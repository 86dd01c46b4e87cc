package sim

import (
	"fmt"
	"time"

	"github.com/corral-sched/corral/internal/job"
)

// easyCycle is the backfill cycle of the Slurm models (corral's own is
// internal/sched's, in corral.go): it starts the pending jobs in the
// given order, each as shape makes it, with a reservation for the first that does not fit and EASY
// backfill behind it. When nothing ended since the last cycle, the jobs
// that waited then cannot fit now (the fleet and the quotas only filled
// up): only new arrivals are tried, behind the same head.
// It returns how many jobs hold reservations: 0 when nothing waits for
// room.
func (s *Sim) easyCycle(order []*pendingJob, shape func(*pendingJob) *job.Job) int {
	onlyNew := !s.freed
	s.freed = false
	limit := s.opt.reservations()
	var heads []*pendingJob
	var resvs []*reservationCache // per head, computed when a job behind it is first tried
	failed := map[string]bool{}
	for _, p := range append([]*pendingJob(nil), order...) {
		fresh := p.fresh
		p.fresh = false
		if onlyNew && !fresh {
			if len(heads) < limit {
				heads = append(heads, p)
			}
			continue
		}
		j := shape(p)
		key := shapeKey(j)
		if failed[key] {
			continue
		}
		first := len(heads) == 0
		if !s.placeAdmitted(p, j, false) {
			s.whyWaiting(p, j, false)
			failed[key] = true
			if len(heads) < limit {
				heads = append(heads, p)
			}
			continue
		}
		if first {
			s.start(p, []string{j.Name})
			continue
		}
		if !s.keepsReservations(p, j, heads, &resvs, shape) {
			s.release(j.Name)
			continue
		}
		// A backfill that keeps the reservations leaves them valid.
		version := s.version
		s.start(p, []string{j.Name})
		s.version = version
	}
	return len(heads)
}

// keepsReservations reports whether p, just placed as j, may start ahead
// of the reserved heads: it delays none of their reserved starts.
func (s *Sim) keepsReservations(p *pendingJob, j *job.Job, heads []*pendingJob, resvs *[]*reservationCache, shape func(*pendingJob) *job.Job) bool {
	for i, head := range heads {
		if i == len(*resvs) { // the reservation as it stood before this job
			r := s.reservationWithout(j, shape(head))
			*resvs = append(*resvs, r)
			if rec := &s.records[s.byName[head.a.Job.Name]]; r.at != forever && rec.Estimate == 0 {
				rec.Estimate, rec.EstimatedAt = r.at, s.now
			}
			s.noteReserved(shape(head), i+1, r)
		}
		r := (*resvs)[i]
		if r.at == forever {
			// It may never start: jobs without runtime estimates hold its
			// room. Holding other work back would not help it.
			continue
		}
		if !s.keepsReservation(p, shape(head), r.at, r.releasedBy) {
			s.note(p.a.Job.Name, "waits: it fits, but starting it would delay %s, reserved to start at %.2fh", head.a.Job.Name, r.at.Hours())
			return false
		}
	}
	return true
}

// reservationWithout computes the head's reservation as if the just
// placed job j were not there: it is lifted, the reservation found, and j
// placed again the same way (placement is deterministic).
func (s *Sim) reservationWithout(j, head *job.Job) *reservationCache {
	s.release(j.Name)
	at, by := s.reservation(head)
	if _, ok := s.tryPlace(j); !ok {
		panic(fmt.Sprintf("sim: %s no longer fits after a what-if", j.Name))
	}
	return &reservationCache{at: at, releasedBy: by}
}

// placeAdmitted takes p's quota (when quota counts) and places j, or
// changes nothing and reports false.
func (s *Sim) placeAdmitted(p *pendingJob, j *job.Job, quota bool) bool {
	if quota && epoch.Add(s.now).Before(s.units.Of(p.a.Job.Name).NoBorrowUntil) && !s.withinNominal(p) {
		return false // backing off from borrowing after a preemption
	}
	if quota && !s.admit(p) {
		return false
	}
	if _, ok := s.tryPlace(j); ok {
		return true
	}
	if quota {
		s.unadmit(p)
	}
	return false
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
	prev, seen := s.resvs[head.Name]
	if seen && prev.version == s.version {
		return prev.at, prev.releasedBy
	}
	names, ends := s.runningByEstimatedEnd()
	hint := 0
	if seen {
		hint = prev.k
	}
	at, n, k := forever, len(names), 0
	if fit, ok := s.firstFit(names, head, hint); ok {
		at, n, k = ends[fit-1], fit, fit
	}
	if len(s.resvs) >= 4*s.opt.reservations()+16 {
		clear(s.resvs) // heads that started or left the front
	}
	s.resvs[head.Name] = reservationCache{head: head.Name, version: s.version, at: at, releasedBy: names[:n], k: k}
	return at, names[:n]
}

// firstFit returns the shortest prefix of names whose release lets head
// fit. It starts from the previous answer (hint) when there is one, as the
// running jobs change little between two moments, else from the prefix
// that frees enough GPUs; it gallops to a prefix that fits and bisects
// back, so that the usual answer costs one to three what-ifs.
func (s *Sim) firstFit(names []string, head *job.Job, hint int) (int, bool) {
	n := len(names)
	if n == 0 {
		return 0, false
	}
	floor := s.enoughGPUs(names, head) // no shorter prefix fits
	start := max(floor, min(hint, n))
	fits := func(k int) bool { return s.state.WhatIf(names[:k], head) }
	lo, hi := floor, start
	if fits(start) {
		for step := 1; hi-step >= floor; step *= 2 { // gallop down
			if !fits(hi - step) {
				lo = hi - step + 1
				break
			}
			hi -= step
		}
	} else {
		lo = start + 1
		for hi = start; ; { // gallop up
			if hi == n {
				return 0, false
			}
			hi = min(2*hi, n)
			if fits(hi) {
				break
			}
			lo = hi + 1
		}
	}
	for lo < hi { // names[:hi] fits; nothing shorter than lo does
		mid := (lo + hi) / 2
		if fits(mid) {
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
	k          int // len(releasedBy) when the head fits, else 0
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
