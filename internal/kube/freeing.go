package kube

import (
	"cmp"
	"context"
	"slices"
	"strings"

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
// (sched.Unit.Freeing). A pod group gets one way: a node for each of its
// pods that no node allows (freeingForGroup). Only corral's own bound pods of lower priority
// that are not already terminating are victims, so another scheduler's
// pods and pods stopping already are never counted on.

// freeingForGroup is the one way to free nodes for a pod group whose pods
// include some no node allows: each of those, in the group's order,
// takes a node of its own (its pods may keep each other off a node, as
// two pods of one host port do) whose freeing stops the fewest running
// units, then the first by name; the way is the union of their victims.
// nil when a pod has no node left to free.
func (f *filtering) freeingForGroup(pods []*corev1.Pod) []sched.Freeing {
	var nodes, victims []string
	used := map[string]bool{}
	for _, p := range pods {
		if _, blocked := f.why[string(p.UID)]; !blocked {
			continue
		}
		var best *sched.Freeing
		for i, w := range f.freeing[string(p.UID)] {
			if !used[w.Node] && (best == nil || len(w.Victims) < len(best.Victims)) {
				best = &f.freeing[string(p.UID)][i]
			}
		}
		if best == nil {
			return nil
		}
		used[best.Node] = true
		nodes = append(nodes, best.Node)
		for _, v := range best.Victims {
			if !slices.Contains(victims, v) {
				victims = append(victims, v)
			}
		}
	}
	if len(nodes) == 0 {
		return nil
	}
	slices.Sort(victims)
	return []sched.Freeing{{Node: strings.Join(nodes, ", "), Victims: victims}}
}

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
