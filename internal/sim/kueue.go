package sim

import (
	"sort"
	"time"

	"github.com/corral-sched/corral/internal/gang"
)

// kueuePolicy models Kueue configured as its documentation describes, in
// front of kube-scheduler configured for GPU bin packing (kube-packed). It
// is a model of that configuration, not Kueue:
//
//   - A ClusterQueue per tenant with queueingStrategy BestEffortFIFO (the
//     default; "Cluster Queue"): workloads by priority, then creation
//     time; one that does not fit the quota is set aside and the next is
//     tried. Across ClusterQueues, heads that need no borrowing go first,
//     then by priority, then creation time.
//   - All ClusterQueues in one cohort ("Cohort"): unused nominal quota is
//     lent and borrowed. borrowingLimit and lendingLimit are left unset
//     (no limit; the documented default) because reclaim below gives
//     lent quota back, as corral's book does; nominal quotas are the
//     simulator's (tenants.go).
//   - preemption ("Preemption"): withinClusterQueue: LowerPriority and
//     reclaimWithinCohort: Any. A workload that does not fit the quota
//     evicts preemptible admitted workloads of lower priority in its own
//     ClusterQueue, or, when it fits within its nominal quota, those of
//     ClusterQueues that borrow: other queues first, lowest priority,
//     most recently started. Kueue preempts for quota, not for room.
//   - waitForPodsReady ("Setup All-or-nothing with ready Pods"): an
//     admitted workload whose pods are not all placed within 5 minutes
//     (timeout, the default) is evicted, its pods and quota freed, and
//     requeued after a back-off of 60 s doubling up to an hour
//     (requeuingStrategy defaults; timestamp Eviction puts it behind).
//     blockAdmission is off, its default.
//
// Admitted workloads' pods are then placed one at a time in PrioritySort
// order, packed, holding GPUs while their siblings wait.
type kueuePolicy struct{ st *kueueState }

// kueueState is what Kueue remembers of workloads between cycles.
type kueueState struct {
	admittedAt map[string]time.Duration // admitted workloads not yet started
	evictions  map[string]int           // podsReady timeouts per workload
	retryAt    map[string]time.Duration // back-off after a timeout
	queuedAt   map[string]time.Duration // requeued workloads: eviction time
	lastPrint  map[string]fleetPrint    // the fleet at a workload's last eviction
	noPreempt  failedAt
}

// Kueue's waitForPodsReady and requeuingStrategy defaults.
const (
	kueuePodsReadyTimeout = 5 * time.Minute
	kueueBackoffBase      = time.Minute
	kueueBackoffMax       = time.Hour
)

func newKueuePolicy() Policy {
	return kueuePolicy{st: &kueueState{admittedAt: map[string]time.Duration{}, evictions: map[string]int{},
		retryAt: map[string]time.Duration{}, queuedAt: map[string]time.Duration{}, lastPrint: map[string]fleetPrint{},
		noPreempt: failedAt{}}}
}

func (kueuePolicy) Name() string { return "kueue-like" }
func (kueuePolicy) Describe() string {
	return "model of Kueue: BestEffortFIFO ClusterQueues in a cohort (borrowing, reclaim, lower-priority preemption), waitForPodsReady; pods packed one at a time"
}
func (kueuePolicy) StateOptions() gang.Options { return gang.Options{} }
func (kueuePolicy) Docs() []string {
	return []string{
		"https://kueue.sigs.k8s.io/docs/concepts/cluster_queue/ (queueingStrategy BestEffortFIFO, cohort, borrowingLimit/lendingLimit unset)",
		"https://kueue.sigs.k8s.io/docs/concepts/preemption/ (withinClusterQueue: LowerPriority, reclaimWithinCohort: Any)",
		"https://kueue.sigs.k8s.io/docs/tasks/manage/setup_wait_for_pods_ready/ (timeout 5m, requeuingStrategy backoff 60s..1h)",
		"https://kubernetes.io/docs/concepts/scheduling-eviction/resource-bin-packing/ (the scheduler behind it: MostAllocated)",
	}
}

func (k kueuePolicy) Cycle(s *Sim) {
	k.st.evictUnready(s)
	k.st.admit(s)
	failed := map[string]bool{}
	for _, p := range byPriorityThenArrival(s.pending) {
		if p.admitted {
			s.placeJobPods(p, failed, nil)
		}
	}
	for name := range k.st.admittedAt {
		if s.running[name] != nil {
			delete(k.st.admittedAt, name)
		}
	}
}

// evictUnready evicts admitted workloads whose pods were not all placed
// within the timeout, and schedules their retry after the back-off.
func (st *kueueState) evictUnready(s *Sim) {
	for _, p := range append([]*pendingJob(nil), s.pending...) {
		name := p.a.Job.Name
		at, ok := st.admittedAt[name]
		if !ok || !p.admitted {
			delete(st.admittedAt, name) // a fault dropped its pods and quota
			continue
		}
		if s.now < at+kueuePodsReadyTimeout {
			continue
		}
		s.dropHeld(name)
		p.startDelay = 0
		delete(st.admittedAt, name)
		st.requeue(s, name)
	}
}

// requeue sets an evicted workload's back-off and wakes it when that ends.
func (st *kueueState) requeue(s *Sim, name string) {
	st.evictions[name]++
	wait := min(kueueBackoffBase<<min(st.evictions[name]-1, 20), kueueBackoffMax)
	st.queuedAt[name], st.retryAt[name] = s.now, s.now+wait
	st.lastPrint[name] = fleetPrint{s.version, s.acct.allocated}
	s.schedule(event{at: s.now + wait, arrival: -1, wake: name})
	s.note(name, "evicted: pods not ready within %v (waitForPodsReady); requeued after %v", kueuePodsReadyTimeout, wait)
}

// futile reports whether admitting an evicted workload again would fail
// as it did: the fleet is as it was at its eviction (no start, stop or
// change in GPUs held since). Kueue would admit it and evict it again
// after the timeout, holding GPUs meanwhile; the model skips that, which
// flatters it, and a replay with a workload that never fits ends.
func (st *kueueState) futile(s *Sim, name string) bool {
	fp, ok := st.lastPrint[name]
	return ok && fp == fleetPrint{s.version, s.acct.allocated}
}

// fleetPrint tells two states of the fleet apart: starts and stops, and
// the GPUs held.
type fleetPrint struct {
	version   int
	allocated float64
}

// admit admits workloads BestEffortFIFO: rounds of one head per
// ClusterQueue, heads sorted as Kueue's scheduler sorts them; a head that
// fits neither the quota nor by preemption is set aside.
func (st *kueueState) admit(s *Sim) {
	queues := st.queues(s)
	tooBig := map[string]int64{} // per queue: the smallest need set aside
	for {
		var heads []*pendingJob
		for t, q := range queues {
			for len(q) > 0 && tooBig[t] > 0 && s.need(q[0].a)[quotaFlavor] >= tooBig[t] {
				q = q[1:] // quota only fills within a cycle: it cannot fit
			}
			if len(q) > 0 {
				heads = append(heads, q[0])
				q = q[1:]
			}
			queues[t] = q
		}
		if len(heads) == 0 {
			return
		}
		st.sortHeads(s, heads)
		for _, p := range heads {
			if !s.admit(p) && !st.preempt(s, p) {
				t, n := tenantOf(p.a), s.need(p.a)[quotaFlavor]
				if tooBig[t] == 0 || n < tooBig[t] {
					tooBig[t] = n
				}
				continue
			}
			st.admittedAt[p.a.Job.Name] = s.now
			s.schedule(event{at: s.now + kueuePodsReadyTimeout, arrival: -1, wake: p.a.Job.Name})
		}
	}
}

// queues lists each ClusterQueue's workloads waiting for admission, by
// priority, then creation (eviction, for requeued ones), then name.
func (st *kueueState) queues(s *Sim) map[string][]*pendingJob {
	out := map[string][]*pendingJob{}
	for _, p := range s.pending {
		if !p.admitted && s.now >= st.retryAt[p.a.Job.Name] && !st.futile(s, p.a.Job.Name) {
			out[tenantOf(p.a)] = append(out[tenantOf(p.a)], p)
		}
	}
	for _, q := range out {
		sort.SliceStable(q, func(i, j int) bool { return st.before(q[i], q[j]) })
	}
	return out
}

func (st *kueueState) queuedTime(p *pendingJob) time.Duration {
	if at, ok := st.queuedAt[p.a.Job.Name]; ok {
		return at
	}
	return p.a.At
}

func (st *kueueState) before(a, b *pendingJob) bool {
	if a.a.Job.Priority != b.a.Job.Priority {
		return a.a.Job.Priority > b.a.Job.Priority
	}
	if ta, tb := st.queuedTime(a), st.queuedTime(b); ta != tb {
		return ta < tb
	}
	return a.a.Job.Name < b.a.Job.Name
}

// sortHeads orders heads as Kueue's scheduler does: those that fit
// without borrowing first, then by priority, then by creation time.
func (st *kueueState) sortHeads(s *Sim, heads []*pendingJob) {
	borrows := map[*pendingJob]bool{}
	for _, p := range heads {
		borrows[p] = !s.withinNominal(p)
	}
	sort.SliceStable(heads, func(i, j int) bool {
		if borrows[heads[i]] != borrows[heads[j]] {
			return !borrows[heads[i]]
		}
		return st.before(heads[i], heads[j])
	})
}

// preempt frees quota for p by evicting admitted, running, preemptible
// workloads (see kueuePolicy) and admits p; it changes nothing and
// reports false when no such set of victims frees enough.
func (st *kueueState) preempt(s *Sim, p *pendingJob) bool {
	if st.noPreempt.same(p.a.Job.Name, s.version) {
		return false
	}
	st.noPreempt.note(p.a.Job.Name, s.version)
	t, want := tenantOf(p.a), s.need(p.a)[quotaFlavor]
	room, freed := s.book.Headroom(t, quotaFlavor), int64(0)
	for i, v := range st.candidates(s, p) {
		freed += s.need(s.running[v].a)[quotaFlavor]
		if room+freed < want {
			continue
		}
		victims := st.candidates(s, p)[:i+1]
		if !s.preemptionBudget(p, len(victims)) {
			return false
		}
		s.evictFor(p, victims, "preempted by Kueue for")
		return s.admit(p)
	}
	return false
}

// candidates lists the workloads Kueue may evict for p, in the order it
// takes them: other ClusterQueues' (borrowing) first, then lowest
// priority, then most recently started.
func (st *kueueState) candidates(s *Sim, p *pendingJob) []string {
	t := tenantOf(p.a)
	reclaim := s.withinNominal(p)
	borrowing := map[string]bool{}
	var out []string
	for name, r := range s.running {
		owner := tenantOf(r.a)
		if !r.admitted || !r.a.Job.Preemptible {
			continue
		}
		if _, seen := borrowing[owner]; !seen {
			borrowing[owner] = !s.book.Borrowed(owner).IsZero()
		}
		if (owner == t && r.a.Job.Priority < p.a.Job.Priority) || (owner != t && reclaim && borrowing[owner]) {
			out = append(out, name)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		ri, rj := s.running[out[i]], s.running[out[j]]
		if oi, oj := tenantOf(ri.a) != t, tenantOf(rj.a) != t; oi != oj {
			return oi
		}
		if ri.a.Job.Priority != rj.a.Job.Priority {
			return ri.a.Job.Priority < rj.a.Job.Priority
		}
		if ri.start != rj.start {
			return ri.start > rj.start
		}
		return out[i] < out[j]
	})
	return out
}

// kueueStrictPolicy is the worst case kept for comparison: StrictFIFO per
// tenant (the head blocks its queue), no preemption, no waitForPodsReady,
// pods spread one at a time, interleaved across admitted jobs.
type kueueStrictPolicy struct{}

func (kueueStrictPolicy) Name() string { return "kueue-strict" }
func (kueueStrictPolicy) Describe() string {
	return "worst case: Kueue with StrictFIFO per tenant (cohort borrowing), no preemption or waitForPodsReady; pods spread one at a time"
}
func (kueueStrictPolicy) StateOptions() gang.Options { return gang.Options{Spread: true} }
func (kueueStrictPolicy) Docs() []string {
	return []string{"https://kueue.sigs.k8s.io/docs/concepts/cluster_queue/ (queueingStrategy StrictFIFO)"}
}

func (kueueStrictPolicy) Cycle(s *Sim) {
	byTenant := map[string][]*pendingJob{}
	for _, p := range s.pending {
		byTenant[tenantOf(p.a)] = append(byTenant[tenantOf(p.a)], p)
	}
	tenants := make([]string, 0, len(byTenant))
	for t := range byTenant {
		tenants = append(tenants, t)
	}
	sort.Strings(tenants)
	for _, t := range tenants {
		for _, p := range byTenant[t] {
			if !p.admitted && !s.admit(p) {
				break // the head of a strict FIFO queue blocks the queue
			}
		}
	}
	var admitted []*pendingJob
	for _, p := range s.pending {
		if p.admitted {
			admitted = append(admitted, p)
		}
	}
	s.placePods(admitted)
}
