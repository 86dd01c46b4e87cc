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

// deadline is the longest spec.activeDeadlineSeconds of the pods, 0 when
// one of them has none: the time limit of a unit's run.
func deadline(pods []*corev1.Pod) time.Duration {
	var limit runLimit
	for _, p := range pods {
		limit.add(podDeadline(p))
	}
	return limit.of()
}

// podDeadline is p's spec.activeDeadlineSeconds, 0 for none.
func podDeadline(p *corev1.Pod) time.Duration {
	if s := p.Spec.ActiveDeadlineSeconds; s != nil {
		return time.Duration(*s) * time.Second
	}
	return 0
}

// runLimit folds a unit's pods' deadlines (0: none) into the unit's time
// limit: the longest, or none when one pod has none.
type runLimit struct {
	longest time.Duration
	none    bool
}

func (l *runLimit) add(d time.Duration) {
	l.longest, l.none = max(l.longest, d), l.none || d <= 0
}

func (l runLimit) of() time.Duration {
	if l.none {
		return 0
	}
	return l.longest
}
