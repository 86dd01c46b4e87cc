package sim

import (
	"fmt"
	"maps"
	"sort"

	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/queue"
	"github.com/corral-sched/corral/internal/workload"
)

// volcanoPolicy models the Volcano scheduler configured as its
// documentation describes for AI training, with actions enqueue, allocate,
// reclaim, backfill and plugins priority, gang, drf, proportion, binpack.
// It is a model of that configuration, not Volcano:
//
//   - A queue per tenant whose weight is the tenant's share of the work
//     (corral's nominal quota). proportion: each queue deserves a share of
//     the fleet by weight, capped by what it asks for (running plus
//     pending), the rest shared out again among the others; a queue
//     holding its deserved share or more (overused) gets nothing more, and
//     a job that would take its queue past that share is not allocated.
//   - allocate: the queue with the lowest share (allocated over deserved,
//     drf) goes next; its jobs by priority (priority plugin), then
//     creation time. gang: a job starts with at least minAvailable tasks
//     placed at once, or not at all; there is no reservation, so a job
//     that does not fit is passed over. binpack: tasks are packed, and a
//     job's topology constraints are kept (Network Topology Aware
//     Scheduling).
//   - A job that started with fewer tasks than it asked (minAvailable
//     below its replicas) gets the rest as room appears, after the
//     waiting jobs of the cycle.
//   - reclaim: a job of a queue below its deserved share that does not fit
//     evicts running preemptible jobs of overused queues, lowest priority
//     first, each taken while its queue holds more than its deserved
//     share (proportion's reclaimable check); victims get --preempt-grace.
//
// Enqueue's overcommit check, which only holds jobs back, is not modelled.
type volcanoPolicy struct{ noReclaim failedAt }

func newVolcanoPolicy() Policy { return volcanoPolicy{noReclaim: failedAt{}} }

func (volcanoPolicy) Name() string { return "volcano-like" }
func (volcanoPolicy) Describe() string {
	return "model of Volcano: gang (minAvailable), binpack, proportion queues by weight with drf order and reclaim, priority; no reservation"
}
func (volcanoPolicy) StateOptions() gang.Options { return gang.Options{} }
func (volcanoPolicy) Docs() []string {
	return []string{
		"https://volcano.sh/en/docs/plugins/ (gang, binpack, priority, drf, proportion)",
		"https://volcano.sh/en/docs/actions/ (enqueue, allocate, reclaim, backfill)",
		"https://volcano.sh/en/docs/queue/ (weight, reclaimable)",
		"https://volcano.sh/en/docs/network_topology_aware_scheduling/",
	}
}

func (v volcanoPolicy) Cycle(s *Sim) {
	alloc := s.runningGPUs()
	deserved := s.deserved(alloc)
	s.queueCycle(alloc, deserved, func(*pendingJob) float64 { return 1 }, func(p *pendingJob) bool {
		return reclaimOverused(s, v.noReclaim, p, alloc, deserved)
	})
}

// queueCycle is the allocate action volcano-like and kai-like share: the
// queue with the lowest share (allocated over share) goes next, its jobs
// by priority, then creation; a job is allocated while its queue stays
// within share times room(job) (1: the whole share), gangs whole, and a
// job that does not fit is given to unfit (reclaim, preemption), after
// which the cycle counts the queues' allocation again. alloc is the
// queues' allocation now, kept up to date.
func (s *Sim) queueCycle(alloc, share map[string]float64, room func(*pendingJob) float64, unfit func(*pendingJob) bool) {
	jobs := map[string][]*pendingJob{}
	for _, p := range byPriorityThenArrival(s.pending) {
		jobs[tenantOf(p.a)] = append(jobs[tenantOf(p.a)], p)
	}
	failed := map[string]bool{}
	for {
		t := nextQueue(jobs, alloc, share)
		if t == "" {
			s.noteQueuesFull(jobs, alloc, share)
			s.growElastic()
			return
		}
		p := jobs[t][0]
		jobs[t] = jobs[t][1:]
		if limit := share[t] * room(p); alloc[t]+s.minGPUs(p.a) > limit+1e-9 {
			s.note(p.a.Job.Name, "waits (quota): queue %s may hold %.2f GPUs%s, holds %.2f, and the job needs %.2f",
				t, limit, roomWhy(share[t], limit), alloc[t], s.minGPUs(p.a))
			continue // not allocatable beyond its queue's share
		}
		key := shapeKey(p.a.Job)
		if !failed[key] && s.tryPlaceJob(p) {
			alloc[t] += s.running[p.a.Job.Name].gpus
			continue
		}
		failed[key] = true
		if unfit(p) {
			clear(failed)
			clear(alloc)
			maps.Copy(alloc, s.runningGPUs())
		}
	}
}

// roomWhy says why a queue may hold less than its share: the job may not
// be preempted, so it runs within the queue's quota only.
func roomWhy(share, limit float64) string {
	if limit < share-1e-9 {
		return fmt.Sprintf(" for a job that may not be preempted (its quota; its share is %.2f)", share)
	}
	return " (its share)"
}

// noteQueuesFull notes, for the job explained, that its queue was passed
// over: it holds its share of GPUs or more.
func (s *Sim) noteQueuesFull(jobs map[string][]*pendingJob, alloc, share map[string]float64) {
	if s.opt.Explain == "" {
		return
	}
	for t, q := range jobs {
		for _, p := range q {
			if p.a.Job.Name == s.opt.Explain {
				s.note(p.a.Job.Name, "waits (quota): queue %s holds %.2f GPUs, its share is %.2f", t, alloc[t], share[t])
			}
		}
	}
}

// minGPUs is what a job needs to start: its minimum tasks' GPUs (the
// quota it is charged).
func (s *Sim) minGPUs(a *workload.Arrival) float64 {
	return float64(s.need(a)[quotaFlavor]) / queue.Milli
}

// tryPlaceJob places p whole (at least its minimum tasks) and starts it.
func (s *Sim) tryPlaceJob(p *pendingJob) bool {
	if _, ok := s.tryPlace(p.a.Job); !ok {
		return false
	}
	s.start(p, []string{p.a.Job.Name})
	return true
}

// nextQueue is the queue with jobs left, not overused, with the lowest
// share (allocated over deserved), then by name; "" if none.
func nextQueue(jobs map[string][]*pendingJob, alloc, deserved map[string]float64) string {
	best, bestShare := "", 0.0
	for t, q := range jobs {
		if len(q) == 0 || alloc[t] >= deserved[t]-1e-9 {
			continue
		}
		share := alloc[t] / deserved[t]
		if best == "" || share < bestShare || (share == bestShare && t < best) {
			best, bestShare = t, share
		}
	}
	return best
}

// deserved is proportion's share of the fleet for each queue: by weight,
// capped by the queue's request (running plus pending), what is left over
// shared again among the rest until nothing is.
func (s *Sim) deserved(alloc map[string]float64) map[string]float64 {
	return s.shareOut(s.requests(alloc), map[string]float64{}, s.entitled)
}

// requests is each queue's request: what it runs (alloc) and what waits.
func (s *Sim) requests(alloc map[string]float64) map[string]float64 {
	request := map[string]float64{}
	for t, g := range alloc {
		request[t] = g
	}
	for _, p := range s.pending {
		request[tenantOf(p.a)] += demandGPUs(p.a)
	}
	return request
}

// shareOut divides the fleet among the tenants: each is first given
// base (capped by its request), then what is left over by weight, capped
// by its request, what is left over again among the rest until nothing is.
func (s *Sim) shareOut(request, base, weights map[string]float64) map[string]float64 {
	names := make([]string, 0, len(s.entitled))
	for t := range s.entitled {
		names = append(names, t)
	}
	sort.Strings(names)
	out := map[string]float64{}
	met := map[string]bool{}
	remaining := s.acct.capacity
	for _, t := range names {
		out[t] = min(base[t], request[t], max(remaining, 0))
		remaining -= out[t]
		met[t] = out[t] >= request[t]-1e-9
	}
	for remaining > 1e-9 {
		weight := 0.0
		for _, t := range names {
			if !met[t] {
				weight += weights[t]
			}
		}
		if weight == 0 {
			break
		}
		given := 0.0
		for _, t := range names {
			if met[t] {
				continue
			}
			add := min(remaining*weights[t]/weight, request[t]-out[t])
			out[t] += add
			given += add
			met[t] = out[t] >= request[t]-1e-9
		}
		remaining -= given
		if given <= 1e-9 {
			break
		}
	}
	return out
}

// reclaimOverused evicts running preemptible jobs of overused queues,
// lowest priority first, each taken while its queue holds more than its
// share, until p fits; p then starts after the grace period. A job whose
// reclaim failed is not tried again until the fleet changes (noReclaim).
func reclaimOverused(s *Sim, noReclaim failedAt, p *pendingJob, alloc, share map[string]float64) bool {
	t := tenantOf(p.a)
	if alloc[t] >= share[t]-1e-9 || noReclaim.same(p.a.Job.Name, s.version) {
		return false
	}
	noReclaim.note(p.a.Job.Name, s.version)
	tally := maps.Clone(alloc)
	var victims []string
	for _, name := range s.victimsBelow(func(r *runningJob) bool { return tenantOf(r.a) != t }) {
		r := s.running[name]
		if q := tenantOf(r.a); tally[q] > share[q]+1e-9 {
			tally[q] -= r.gpus
			victims = append(victims, name)
		}
	}
	if !s.preemptPlaced(p, p.a.Job, inSet(victims), "reclaimed by queue "+t+" for") {
		return false
	}
	s.start(p, []string{p.a.Job.Name})
	return true
}

// inSet accepts the running jobs named.
func inSet(names []string) func(r *runningJob) bool {
	set := make(map[string]bool, len(names))
	for _, n := range names {
		set[n] = true
	}
	return func(r *runningJob) bool { return set[r.a.Job.Name] }
}
