package kube

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// The core knows no node selectors, but it knows taints: each distinct
// spec.nodeSelector of the pending pods becomes a taint on every node it
// does not match, which only pods without that selector tolerate. The
// gpu.product key is left out: it becomes the demand's allowed model.

// selector is one distinct node selector of the pending pods.
type selector struct {
	key    string // "k=v,k2=v2", sorted
	labels map[string]string
	taint  string // the core taint of the nodes it does not match
}

// selectorPrefix starts the core taints made from node selectors.
const selectorPrefix = "corral.sh/node-selector="

func selectorOf(p *corev1.Pod) (string, map[string]string) {
	var parts []string
	labels := map[string]string{}
	for k, v := range p.Spec.NodeSelector {
		if k == LabelProduct {
			continue
		}
		parts = append(parts, k+"="+v)
		labels[k] = v
	}
	sort.Strings(parts)
	return strings.Join(parts, ","), labels
}

// nodeSelectors lists the distinct selectors of pods, by key.
func nodeSelectors(pods []*corev1.Pod) []selector {
	seen := map[string]bool{}
	var out []selector
	for _, p := range pods {
		key, labels := selectorOf(p)
		if key == "" || seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, selector{key: key, labels: labels, taint: selectorPrefix + key + ":NoSchedule"})
	}
	sort.Slice(out, func(a, b int) bool { return out[a].key < out[b].key })
	return out
}

// selectorTaints gives each node the taints of the selectors it does not
// match.
func selectorTaints(nodes []*corev1.Node, sels []selector) map[string][]string {
	out := map[string][]string{}
	for _, n := range nodes {
		for _, s := range sels {
			if !matches(n.Labels, s.labels) {
				out[n.Name] = append(out[n.Name], s.taint)
			}
		}
	}
	return out
}

func matches(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// selectorTolerations are the selector taints pods may ignore: those of
// every selector none of them has.
func selectorTolerations(pods []*corev1.Pod, sels []selector) []string {
	own := map[string]bool{}
	for _, p := range pods {
		key, _ := selectorOf(p)
		own[key] = true
	}
	var out []string
	for _, s := range sels {
		if !own[s.key] {
			out = append(out, s.taint)
		}
	}
	return out
}
