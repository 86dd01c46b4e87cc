package kube

import (
	"maps"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/corral-sched/corral/internal/sched"
)

// A Queue's spec.budget ("1000/720h", "1000/month") caps the GPU-hours
// its pods use per period, checked by the core at admission: a pod group
// whose GPUs times its time limit (the pods' spec.activeDeadlineSeconds,
// which the kubelet enforces) would overrun what is left waits
// (ReasonWaitingForBudget); one without a deadline waits only once the
// budget is spent; nothing bound is evicted for it. The use of pods that
// ended this period is kept in the leader's memory (budgetLog): a new
// leader or a restart counts only the bound pods' use since the period
// began, not what pods that already ended used.

// budgetLog is the GPU use of the bound pods that ended, by queue.
type budgetLog struct {
	mu    sync.Mutex
	ended map[string][]endedUse
}

// endedUse is gpus GPUs held from from to to.
type endedUse struct {
	gpus     float64
	from, to time.Time
}

// add records a pod of queue q that held gpus GPUs from from until to.
func (l *budgetLog) add(q string, gpus float64, from, to time.Time) {
	if q == "" || gpus <= 0 || from.IsZero() || !to.After(from) {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended == nil {
		l.ended = map[string][]endedUse{}
	}
	l.ended[q] = append(l.ended[q], endedUse{gpus, from, to})
}

// spent is, for each queue with a budget, the GPU-hours its ended pods
// used in the budget's current period; use from earlier periods is
// dropped.
func (l *budgetLog) spent(budgets map[string]sched.Budget, now time.Time) map[string]float64 {
	if len(budgets) == 0 {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]float64, len(budgets))
	for _, q := range slices.Sorted(maps.Keys(budgets)) {
		b := budgets[q]
		start, _ := b.Period(now)
		kept := l.ended[q][:0]
		for _, u := range l.ended[q] {
			if u.to.After(start) {
				kept = append(kept, u)
				out[q] += b.Within(u.gpus, u.from, u.to, now)
			}
		}
		if l.ended != nil {
			l.ended[q] = kept
		}
	}
	return out
}

// budgetsOf are the queues' budgets, by queue name.
func budgetsOf(queues map[string]*queueSpec) map[string]sched.Budget {
	var out map[string]sched.Budget
	for name, q := range queues {
		if q.Budget == nil {
			continue
		}
		if out == nil {
			out = map[string]sched.Budget{}
		}
		out[name] = *q.Budget
	}
	return out
}

// podList is the unit's bound pods.
func (v victimSet) podList() []*corev1.Pod {
	out := make([]*corev1.Pod, len(v.pods))
	for i, b := range v.pods {
		out[i] = b.pod
	}
	return out
}

// deadline is the longest spec.activeDeadlineSeconds of the pods, 0 when
// one of them has none: the time limit of a unit's run.
func deadline(pods []*corev1.Pod) time.Duration {
	var longest time.Duration
	for _, p := range pods {
		if p.Spec.ActiveDeadlineSeconds == nil {
			return 0
		}
		longest = max(longest, time.Duration(*p.Spec.ActiveDeadlineSeconds)*time.Second)
	}
	return longest
}
