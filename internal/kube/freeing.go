package kube

import (
	"cmp"
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/corral-sched/corral/internal/kube/upstream"
	"github.com/corral-sched/corral/internal/sched"
)

// A pending pod Kubernetes' filters allow on no node may still start
// where lower-priority pods keep it out: a host port they hold, an
// anti-affinity of theirs or its own, a node's pod count. For each node
// the filters refuse it only for such reasons (upstream.Verdict's
// Resolvable), the upstream plugins say which of the node's pods must go
// (upstream.View.Freeing, kube-scheduler's own choice of victims on a
// node); the core, which decides every preemption, picks among those ways
// (sched.Unit.Freeing), a node of its own for each pod of a group that no
// node allows. Only corral's own bound pods of lower priority
// that are not already terminating are victims, so another scheduler's
// pods and pods stopping already are never counted on.

// maxFreeingNodes bounds the nodes tried for one pod, in name order, so
// that a cycle over a large cluster stays bounded.
const maxFreeingNodes = 64

// freeingFor lists the ways to free a node for p, which v allows nowhere:
// per node, the running units of the pods that must leave it. byNode are
// the bound pods by node; scheduler names the pods that may be evicted.
func freeingFor(ctx context.Context, view *upstream.View, p *corev1.Pod, v upstream.Verdict, byNode map[string][]*corev1.Pod, scheduler string) []sched.Freeing {
	if len(v.Nodes) > 0 || neverPreempts([]*corev1.Pod{p}) {
		return nil
	}
	var out []sched.Freeing
	for _, node := range v.Resolvable[:min(len(v.Resolvable), maxFreeingNodes)] {
		cands := evictable(byNode[node], podPriority(p), scheduler)
		victims, ok := view.Freeing(ctx, p, node, cands)
		if !ok || len(victims) == 0 {
			continue
		}
		var units []string
		for _, pod := range victims {
			if u := unitName(pod); !slices.Contains(units, u) {
				units = append(units, u)
			}
		}
		slices.Sort(units)
		out = append(out, sched.Freeing{Node: node, Victims: units})
	}
	return out
}

// evictable are the pods of scheduler among pods with a priority below
// prio that are not terminating, the most important first: the highest
// priority, then the longest bound, then by name (the order in which
// kube-scheduler reprieves them).
func evictable(pods []*corev1.Pod, prio int32, scheduler string) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if p.Spec.SchedulerName == scheduler && p.DeletionTimestamp == nil && podPriority(p) < prio {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b *corev1.Pod) int {
		return cmp.Or(cmp.Compare(podPriority(b), podPriority(a)), a.CreationTimestamp.Compare(b.CreationTimestamp.Time), cmp.Compare(podKey(a), podKey(b)))
	})
	return out
}

// podsByNode groups bound pods by their node.
func podsByNode(pods []*corev1.Pod) map[string][]*corev1.Pod {
	out := map[string][]*corev1.Pod{}
	for _, p := range pods {
		out[p.Spec.NodeName] = append(out[p.Spec.NodeName], p)
	}
	return out
}
