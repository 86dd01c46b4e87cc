package upstream

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// coreResource reports whether corral's core counts the resource itself:
// CPU, memory, NVIDIA's GPU resources (whole, shared and MIG) and the
// names corral gives on its copies of pods to what their DRA claims ask
// (corral.sh/...).
func coreResource(name corev1.ResourceName) bool {
	return name == corev1.ResourceCPU || name == corev1.ResourceMemory ||
		strings.HasPrefix(string(name), "nvidia.com/") || strings.HasPrefix(string(name), "corral.sh/")
}

// withoutCoreResources is pod with the requests and limits corral's core
// counts left out, so that the plugins check every other resource and a
// node full of GPUs the core may free by preemption is not refused here;
// but those keep says a DeviceClass stands for (KEP-5004), which the
// DynamicResources plugin must see to allocate them where no device
// plugin serves them. pod is returned as it is when it asks for none.
func withoutCoreResources(pod *corev1.Pod, keep func(corev1.ResourceName) bool) *corev1.Pod {
	if !asksCore(pod) {
		return pod
	}
	strip := func(l corev1.ResourceList) {
		for name := range l {
			if coreResource(name) && !keep(name) {
				delete(l, name)
			}
		}
	}
	p := pod.DeepCopy()
	for _, cs := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for i := range cs {
			strip(cs[i].Resources.Requests)
			strip(cs[i].Resources.Limits)
		}
	}
	if p.Spec.Resources != nil {
		strip(p.Spec.Resources.Requests)
		strip(p.Spec.Resources.Limits)
	}
	strip(p.Spec.Overhead)
	return p
}

func asksCore(pod *corev1.Pod) bool {
	has := func(l corev1.ResourceList) bool {
		for name := range l {
			if coreResource(name) {
				return true
			}
		}
		return false
	}
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			if has(cs[i].Resources.Requests) || has(cs[i].Resources.Limits) {
				return true
			}
		}
	}
	return has(pod.Spec.Overhead) || (pod.Spec.Resources != nil && (has(pod.Spec.Resources.Requests) || has(pod.Spec.Resources.Limits)))
}
