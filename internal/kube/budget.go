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
// its pods use per period, or in dollars ("$20000/month") their cost at
// each node's AnnotationGPUPrice, checked by the core at admission: a pod group
// whose GPUs times its time limit (the pods' spec.activeDeadlineSeconds,
// which the kubelet enforces) would overrun what is left waits
// (ReasonWaitingForBudget); one without a deadline waits only once the
// budget is spent; nothing bound is evicted for it. The use of pods that
// ended this period is kept in the leader's memory (budgetLog), and a new
// leader or a restarted replica reads it back from the accounting log
// (Config.AccountingConfigMaps, on in deploy/): its end records, and the
// ends it writes for pods that ended while no replica led. Without the
// accounting log a new leader counts only the bound pods' use.

// budgetLog is the GPU use of the bound pods that ended, by queue, each
// pod once however often it is told (by the pod's handlers, and by the
// accounting log a new leader reads back).
type budgetLog struct {
	mu    sync.Mutex
	ended map[string][]endedUse
	known map[string]bool // the pods' uids in ended
}

// endedUse is gpus GPUs held by pod uid on node from from to to.
type endedUse struct {
	uid, node string
	gpus      float64
	from, to  time.Time
}

// add records that pod uid of queue q held gpus GPUs from from until to,
// unless it is recorded already.
func (l *budgetLog) add(q, uid, node string, gpus float64, from, to time.Time) {
	if q == "" || gpus <= 0 || from.IsZero() || !to.After(from) {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended == nil {
		l.ended, l.known = map[string][]endedUse{}, map[string]bool{}
	}
	if l.known[uid] {
		return
	}
	l.known[uid] = true
	l.ended[q] = append(l.ended[q], endedUse{uid, node, gpus, from, to})
}

// addRecord adds what an accounting log's end record says pod uid used,
// when its queue has a budget.
func (l *budgetLog) addRecord(uid string, r Record, queues map[string]*queueSpec) {
	if q := queues[r.Queue]; q == nil || q.Budget == nil || r.RunSeconds <= 0 {
		return
	}
	to := r.Time
	l.add(r.Queue, uid, r.Node, r.GPUs, to.Add(-time.Duration(r.RunSeconds*float64(time.Second))), to)
}

// spent is, for each queue with a budget, what its ended pods used in the
// budget's current period, in the budget's unit (a dollar budget at the
// price price gives the node each ran on); use from earlier periods is
// dropped.
func (l *budgetLog) spent(budgets map[string]sched.Budget, now time.Time, price func(node string) float64) map[string]float64 {
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
			if !u.to.After(start) {
				delete(l.known, u.uid)
				continue
			}
			kept = append(kept, u)
			out[q] += b.Within(u.gpus, price(u.node), u.from, u.to, now)
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
