package kube

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/corral-sched/corral/internal/sched"
)

// victimSet is a running unit that preemption stops as a whole: one pod,
// or every bound pod of a pod group.
type victimSet struct {
	name     string
	pods     []boundPod
	priority int32
	created  metav1.Time
	started  time.Time // when its last pod was bound
}

// preemption is the pods to evict so that a pending unit fits.
type preemption struct {
	unit    string
	forJob  string // the unit's core name
	pods    []*corev1.Pod
	reason  string
	reclaim bool   // it takes back quota lent to the unit's queue
	move    bool   // it moves pods out of the unit's way (Config.Defrag)
	gain    string // for a move, what the unit gains and the pods lose
	// victims are the running units stopped, by name, each with when it
	// may borrow again (zero: no bound).
	victims map[string]time.Time
}

// runningUnits groups the bound pods into the units they were placed as:
// a pod, or the bound pods of one pod group. Priority is the highest of
// its pods, creation the earliest, start the latest bind. A pod alone is a
// unit of its own, its pods a view of the snapshot's bound pods.
func runningUnits(snap *snapshot) []victimSet {
	at := map[string]int{} // group unit name -> index in sets
	sets := make([]victimSet, 0, len(snap.bound))
	for k, b := range snap.bound {
		if !strings.HasPrefix(b.unit, groupUnitPrefix) {
			sets = append(sets, victimSet{name: b.unit, pods: snap.bound[k : k+1 : k+1], priority: b.priority, created: b.created,
				started: b.boundTime(snap.boundAt)})
			continue
		}
		i, ok := at[b.unit]
		if !ok {
			i = len(sets)
			at[b.unit] = i
			sets = append(sets, victimSet{name: b.unit, priority: b.priority, created: b.created})
		}
		v := &sets[i]
		v.pods = append(v.pods, b)
		v.priority = max(v.priority, b.priority)
		if b.created.Before(&v.created) {
			v.created = b.created
		}
		if started := b.boundTime(snap.boundAt); started.After(v.started) {
			v.started = started
		}
	}
	return sets
}

// AnnotationBoundAt is when corral bound the pod, to the nanosecond
// (RFC 3339), written with the binding: a replica that takes the lead
// orders victims by it as the one that bound them did.
const AnnotationBoundAt = "corral.sh/bound-at"

// boundTime is when p was bound: the cycle that bound it, when this
// replica did; else when the replica that bound it said it did; else when
// the API server recorded it scheduled (to the second); else its creation.
func boundTime(p *corev1.Pod, boundAt map[types.UID]time.Time) time.Time {
	if at, ok := boundAt[p.UID]; ok {
		return at
	}
	if at, err := time.Parse(time.RFC3339Nano, p.Annotations[AnnotationBoundAt]); err == nil {
		return at
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Time
		}
	}
	return p.CreationTimestamp.Time
}

func (v victimSet) jobs() []string {
	out := make([]string, len(v.pods))
	for i, b := range v.pods {
		out[i] = b.job
	}
	return out
}

func evict(ctx context.Context, client kubernetes.Interface, p *preemption, grace *int64, n *counters) ([]*corev1.Pod, error) {
	var evicted []*corev1.Pod
	for _, pod := range p.pods {
		ev := &policyv1.Eviction{
			TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "Eviction"},
			ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name},
		}
		if grace != nil {
			ev.DeleteOptions = &metav1.DeleteOptions{GracePeriodSeconds: grace}
		}
		// The API server answers a budget's refusal with 429 and a
		// Retry-After; the next cycle retries, so the client must not.
		err := client.CoreV1().RESTClient().Post().Namespace(pod.Namespace).Resource("pods").Name(pod.Name).
			SubResource("eviction").Body(ev).MaxRetries(0).Do(ctx).Error()
		switch {
		case err == nil:
			n.evictions.Add(1)
			evicted = append(evicted, pod)
		case apierrors.IsTooManyRequests(err):
			n.refused.Add(1)
			return evicted, fmt.Errorf("evicting %s for %s: refused (a PodDisruptionBudget protects it): %w", podKey(pod), p.unit, err)
		case apierrors.IsNotFound(err):
		default:
			return evicted, fmt.Errorf("evicting %s for %s: %w", podKey(pod), p.unit, err)
		}
	}
	return evicted, nil
}

// defaultDefragMoves is Config.DefragMovesPerHour's default.
const defaultDefragMoves = 4

// defrag is what the cycle may move now (Config.Defrag): the hourly
// bound less the moves in the last hour, a former leader's included
// (defragmoves.go); nil when off.
func (s *Scheduler) defrag() *sched.Defrag {
	if !s.cfg.Defrag {
		return nil
	}
	s.moved = recentMoves(s.moved, s.cfg.Now())
	limit := s.cfg.DefragMovesPerHour
	if limit <= 0 {
		limit = defaultDefragMoves
	}
	return &sched.Defrag{Moves: max(limit-len(s.moved), 0)}
}
