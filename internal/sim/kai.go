package sim

import (
	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/queue"
)

// kaiPolicy models NVIDIA's KAI Scheduler configured as its documentation
// describes queues and fairness, with one leaf queue per tenant. It is a
// model of that configuration, not KAI, and differs from volcano-like in
// how a queue's share is found and what reclaim may take:
//
//   - A queue per tenant whose GPU quota (its guaranteed, deserved
//     resources) is the tenant's nominal quota, overQuotaWeight 1 and no
//     limit, all of one priority, as the queues page's examples have them.
//   - Fair share, each cycle: every queue is given its quota, capped by
//     what it requests (running plus pending); what is left is shared by
//     overQuotaWeight among the queues still asking, capped by their
//     requests, until nothing is left (the fairness page's algorithm).
//   - allocate: the queue with the lowest saturation (allocated over fair
//     share) goes next; its jobs by priority, then creation time; a job is
//     allocated while its queue stays within its fair share, and within
//     its quota when it may not be preempted (the priority page). Gangs
//     (PodGroup minMember) start whole or not at all, bin-packed; there is
//     no reservation, so a job that does not fit is passed over.
//   - reclaim: a job of a queue below its fair share that does not fit
//     evicts preemptible jobs of queues above their fair share, which is
//     at least their quota (only over-quota resources are ever
//     reclaimed), lowest priority first; preempt: a job that still does not fit evicts
//     lower-priority jobs of its own queue. Victims get --preempt-grace.
//
// Hierarchical queues (one level here), queue priorities, limits,
// time-based fair share and the consolidation action are not modelled.
type kaiPolicy struct{ noReclaim failedAt }

func newKAIPolicy() Policy { return kaiPolicy{noReclaim: failedAt{}} }

func (kaiPolicy) Name() string { return "kai-like" }
func (kaiPolicy) Describe() string {
	return "model of KAI Scheduler: gang, binpack, queues with a quota and over-quota weight, fair-share and quota reclaim of over-quota work, in-queue priority preemption; no reservation"
}
func (kaiPolicy) StateOptions() gang.Options { return gang.Options{} }
func (kaiPolicy) Docs() []string {
	return []string{
		"https://github.com/kai-scheduler/KAI-Scheduler/blob/main/docs/queues/README.md (quota, overQuotaWeight, limit)",
		"https://github.com/kai-scheduler/KAI-Scheduler/blob/main/docs/fairness/README.md (fair share, saturation, reclaim)",
		"https://github.com/kai-scheduler/KAI-Scheduler/blob/main/docs/priority/README.md (preemption within a queue)",
	}
}

func (k kaiPolicy) Cycle(s *Sim) {
	alloc := s.runningGPUs()
	quota := s.quotaGPUs()
	fair := s.kaiFairShare(alloc, quota)
	// A job that may not be preempted is allocated within its queue's
	// quota only (the priority page): that part of its fair share.
	room := func(p *pendingJob) float64 {
		t := tenantOf(p.a)
		if p.a.Job.Preemptible || fair[t] <= 0 {
			return 1
		}
		return min(fair[t], quota[t]) / fair[t]
	}
	s.queueCycle(alloc, fair, room, func(p *pendingJob) bool {
		return reclaimOverused(s, k.noReclaim, p, alloc, fair) || k.preempt(s, p)
	})
}

// quotaGPUs is each tenant's nominal quota in GPUs.
func (s *Sim) quotaGPUs() map[string]float64 {
	out := map[string]float64{}
	for t := range s.entitled {
		if spec, ok := s.book.Spec(t); ok {
			out[t] = float64(spec.Nominal[quotaFlavor]) / queue.Milli
		}
	}
	return out
}

// kaiFairShare is KAI's fair share: quota first, then the rest by
// overQuotaWeight (1 for every queue), each capped by its request.
func (s *Sim) kaiFairShare(alloc, quota map[string]float64) map[string]float64 {
	weights := map[string]float64{}
	for t := range s.entitled {
		weights[t] = 1
	}
	return s.shareOut(s.requests(alloc), quota, weights)
}

// preempt evicts lower-priority preemptible jobs of p's own queue until p
// fits; p then starts after the grace period.
func (k kaiPolicy) preempt(s *Sim, p *pendingJob) bool {
	t, lower := tenantOf(p.a), lowerThan(p)
	ownLower := func(r *runningJob) bool { return tenantOf(r.a) == t && lower(r) }
	if !s.preemptPlaced(p, p.a.Job, ownLower, "preempted within queue "+t+" for") {
		return false
	}
	s.start(p, []string{p.a.Job.Name})
	return true
}
