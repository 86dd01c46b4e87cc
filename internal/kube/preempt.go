package kube

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/corral-sched/corral/internal/job"
)

// maxVictimSets bounds the preemption search: the most running units
// (pods, or whole pod groups) considered for one pending unit.
const maxVictimSets = 256

// victimSet is a running unit that preemption stops as a whole: one pod,
// or every bound pod of a pod group.
type victimSet struct {
	name     string
	pods     []boundPod
	priority int32
	created  metav1.Time
}

// preemption is the pods to evict so that a pending unit fits.
type preemption struct {
	unit   string
	pods   []*corev1.Pod
	reason string
}

// preempt looks for lower-priority work whose eviction lets j fit. When
// pods already terminating make room, it waits for them and evicts nothing.
// It returns nil when no preemption helps.
func preempt(snap *snapshot, u *unit, j *job.Job) (*preemption, string) {
	var terminating []string
	for _, b := range snap.bound {
		if b.pod.DeletionTimestamp != nil {
			terminating = append(terminating, b.job)
		}
	}
	if len(terminating) > 0 && snap.state.WhatIf(terminating, j) {
		return nil, fmt.Sprintf("waiting for %d terminating pods to free their resources", len(terminating))
	}
	sets := victimSets(snap, u.priority)
	release := append([]string{}, terminating...)
	var chosen []victimSet
	for _, v := range sets {
		chosen = append(chosen, v)
		release = append(release, v.jobs()...)
		if snap.state.WhatIf(release, j) {
			chosen = minimise(snap, j, terminating, chosen)
			return evictionOf(u, chosen), ""
		}
	}
	return nil, ""
}

// victimSets lists the running units of lower priority than prio placed by
// this scheduler: lowest priority first, then the youngest, then by name.
func victimSets(snap *snapshot, prio int32) []victimSet {
	sets := runningUnits(snap, func(p *corev1.Pod) bool { return podPriority(p) < prio })
	sort.Slice(sets, func(a, b int) bool {
		x, y := sets[a], sets[b]
		if x.priority != y.priority {
			return x.priority < y.priority
		}
		return youngerFirst(x, y)
	})
	if len(sets) > maxVictimSets {
		sets = sets[:maxVictimSets]
	}
	return sets
}

// runningUnits groups the bound pods this scheduler placed, not
// terminating, that keep accepts into the units preemption stops whole:
// one pod, or every bound pod of a pod group; in the order first seen.
func runningUnits(snap *snapshot, keep func(*corev1.Pod) bool) []victimSet {
	byName := map[string]*victimSet{}
	var names []string
	for _, b := range snap.bound {
		p := b.pod
		if p.Spec.SchedulerName != snap.scheduler || p.DeletionTimestamp != nil || !keep(p) {
			continue
		}
		name := "pod " + podKey(p)
		if g := GroupName(p); g != "" {
			name = "group " + p.Namespace + "/" + g
		}
		v := byName[name]
		if v == nil {
			v = &victimSet{name: name, priority: podPriority(p), created: p.CreationTimestamp}
			byName[name] = v
			names = append(names, name)
		}
		v.pods = append(v.pods, b)
		v.priority = max(v.priority, podPriority(p))
	}
	sets := make([]victimSet, 0, len(names))
	for _, n := range names {
		sets = append(sets, *byName[n])
	}
	return sets
}

// youngerFirst orders units by creation, the youngest first, then by name.
func youngerFirst(x, y victimSet) bool {
	if !x.created.Equal(&y.created) {
		return y.created.Before(&x.created)
	}
	return x.name < y.name
}

func (v victimSet) jobs() []string {
	out := make([]string, len(v.pods))
	for i, b := range v.pods {
		out[i] = b.job
	}
	return out
}

// minimise drops, last chosen first, every victim set the unit fits
// without.
func minimise(snap *snapshot, j *job.Job, terminating []string, chosen []victimSet) []victimSet {
	for i := len(chosen) - 1; i >= 0; i-- {
		without := append(append([]victimSet{}, chosen[:i]...), chosen[i+1:]...)
		release := append([]string{}, terminating...)
		for _, v := range without {
			release = append(release, v.jobs()...)
		}
		if snap.state.WhatIf(release, j) {
			chosen = without
		}
	}
	return chosen
}

func evictionOf(u *unit, sets []victimSet) *preemption {
	p := &preemption{unit: u.name}
	var names []string
	for _, v := range sets {
		for _, b := range v.pods {
			p.pods = append(p.pods, b.pod)
			names = append(names, podKey(b.pod))
		}
	}
	p.reason = fmt.Sprintf("preempting %d lower-priority pods (%s); starts when they stop", len(names), strings.Join(names, ", "))
	return p
}

// evict asks the API server to evict each pod through the Eviction API,
// which refuses what a PodDisruptionBudget protects. grace, when set,
// overrides the pods' termination grace period.
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
