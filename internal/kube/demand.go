package kube

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/klog/v2"

	"github.com/corral-sched/corral/internal/job"
)

// podRequests is what a pod holds on its node, as the kubelet and
// kube-scheduler count it: its containers' requests, init and sidecar
// containers as Kubernetes runs them, pod-level resources, and the
// RuntimeClass overhead (spec.overhead).
func podRequests(p *corev1.Pod) corev1.ResourceList {
	return resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
}

// demand translates a pod's requests into the core's demand for one task:
// nvidia.com/gpu is whole GPUs, nvidia.com/mig-<profile> one MIG instance,
// nvidia.com/gpu.shared time-sliced shares; a gpu.product node selector
// becomes the allowed model.
func demand(p *corev1.Pod) (job.Demand, error) {
	req := podRequests(p)
	d := job.Demand{
		CPUMilli:  quantity(req, corev1.ResourceCPU, true),
		MemoryMiB: (quantity(req, corev1.ResourceMemory, false) + mib - 1) / mib,
		GPUs:      int(quantity(req, ResourceGPU, false)),
		Shares:    int(quantity(req, ResourceShared, false)),
		// A fraction of one GPU's memory a DRA claim asks (dra.go).
		GPUMemoryMiB: quantity(req, resourceDRAGPUMemory, false),
	}
	var migs []string
	for name, q := range req {
		profile, ok := strings.CutPrefix(string(name), resourceMIGPrefix)
		if !ok || q.Value() == 0 {
			continue
		}
		if q.Value() != 1 {
			return d, fmt.Errorf("asks for %d instances of %s; corral places one MIG instance per pod", q.Value(), name)
		}
		migs = append(migs, profile)
	}
	sort.Strings(migs)
	if len(migs) > 1 {
		return d, fmt.Errorf("asks for several MIG profiles %v; corral places one MIG instance per pod", migs)
	}
	if len(migs) == 1 {
		d.MIG = migs[0]
	}
	kinds := 0
	for _, on := range []bool{d.GPUs > 0, d.Shares > 0, d.MIG != "", d.GPUMemoryMiB > 0} {
		if on {
			kinds++
		}
	}
	if kinds > 1 {
		return d, fmt.Errorf("asks for more than one of %s, %s and %s*", ResourceGPU, ResourceShared, resourceMIGPrefix)
	}
	if product := p.Spec.NodeSelector[LabelProduct]; product != "" {
		d.Models = []string{strings.SplitN(product, "-MIG-", 2)[0]}
	}
	return d, nil
}

// tolerated lists the taints among taints (key=value:effect) that every
// pod in pods tolerates.
func tolerated(pods []*corev1.Pod, taints []corev1.Taint) []string {
	var out []string
	for i := range taints {
		all := true
		for _, p := range pods {
			if !toleratesTaint(p, &taints[i]) {
				all = false
				break
			}
		}
		if all {
			out = append(out, taintString(taints[i]))
		}
	}
	return out
}

func toleratesTaint(p *corev1.Pod, t *corev1.Taint) bool {
	for i := range p.Spec.Tolerations {
		if p.Spec.Tolerations[i].ToleratesTaint(klog.Background(), t, false) {
			return true
		}
	}
	return false
}

// clusterTaints is every distinct NoSchedule or NoExecute taint of the
// nodes, in key=value:effect order.
func clusterTaints(nodes []*corev1.Node) []corev1.Taint {
	seen := map[string]corev1.Taint{}
	for _, n := range nodes {
		for _, t := range n.Spec.Taints {
			if t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute {
				seen[taintString(t)] = corev1.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect}
			}
		}
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]corev1.Taint, len(keys))
	for i, k := range keys {
		out[i] = seen[k]
	}
	return out
}
