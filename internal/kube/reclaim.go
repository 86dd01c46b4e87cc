package kube

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/corral-sched/corral/internal/queue"
)

// reclaim takes back quota a unit's queue lent to its cohort: when the
// queue stays within its own quota with the unit (need milli-GPUs) and the
// cohort's quota is what stops it, the running units of other queues of
// the cohort that borrow are evicted, the youngest first (they lose the
// least work), until the lent quota covers the unit. It returns nil when
// the queue asks for more than its own or nothing it lent can come back.
func reclaim(snap *snapshot, u *unit, need int64) *preemption {
	q := u.queue()
	spec := snap.queues[q]
	if q == "" || spec == nil || spec.Cohort == "" || spec.GPUs < 0 {
		return nil
	}
	if snap.book.Usage(q)[anyGPU]+need > spec.GPUs*queue.Milli {
		return nil // only what is its own is reclaimed
	}
	short := need - snap.book.Headroom(q, anyGPU)
	for _, b := range snap.bound { // pods of the cohort already on their way out
		other := snap.queues[b.pod.Labels[LabelQueue]]
		if b.pod.DeletionTimestamp != nil && other != nil && other != spec && other.Cohort == spec.Cohort {
			short -= b.milli
		}
	}
	var chosen []victimSet
	for _, v := range borrowerSets(snap, q, spec.Cohort) {
		if short <= 0 {
			break
		}
		chosen = append(chosen, v)
		for _, b := range v.pods {
			short -= b.milli
		}
	}
	if short > 0 || len(chosen) == 0 {
		return nil
	}
	p := evictionOf(u, chosen)
	var names []string
	for _, pod := range p.pods {
		names = append(names, podKey(pod))
	}
	p.reason = fmt.Sprintf("reclaiming the quota queue %s lent to cohort %s: evicting %d pods of borrowing queues (%s); starts when they stop",
		q, spec.Cohort, len(names), strings.Join(names, ", "))
	return p
}

// borrowerSets lists the running units, placed by this scheduler, of the
// queues of cohort other than q that hold more than their own quota:
// youngest first, then by name.
func borrowerSets(snap *snapshot, q, cohort string) []victimSet {
	borrowing := map[string]bool{}
	for name, s := range snap.queues {
		if name != q && s.Cohort == cohort && !snap.book.Borrowed(name).IsZero() {
			borrowing[name] = true
		}
	}
	sets := runningUnits(snap, func(p *corev1.Pod) bool { return borrowing[p.Labels[LabelQueue]] })
	sort.Slice(sets, func(a, b int) bool { return youngerFirst(sets[a], sets[b]) })
	return sets
}
