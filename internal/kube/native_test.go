package kube

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// nativeGroup creates Kubernetes' own PodGroup with a gang policy of
// minCount (0: the basic policy), at the given version (v1beta1,
// v1alpha3), packed into one domain of each topology key.
func (e *env) nativeGroup(name, version string, minCount int, topologyKeys ...string) {
	e.t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "scheduling.k8s.io/" + version,
		"kind":       "PodGroup",
		"metadata":   map[string]any{"name": name, "namespace": e.ns},
		"spec": map[string]any{"schedulingPolicy": map[string]any{
			"gang": map[string]any{"minCount": int64(minCount)},
		}},
	}}
	var topo []any
	for _, k := range topologyKeys {
		topo = append(topo, map[string]any{"key": k})
	}
	if topo != nil {
		obj.Object["spec"].(map[string]any)["schedulingConstraints"] = map[string]any{"topology": topo}
	}
	if minCount == 0 { // the basic policy
		obj.Object["spec"].(map[string]any)["schedulingPolicy"] = map[string]any{"basic": map[string]any{}}
	}
	r := NativePodGroupResource
	r.Version = version
	if _, err := e.c.Dynamic.Resource(r).Namespace(e.ns).Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("pod group %s: %v", name, err)
	}
}

func inNativeGroup(p *corev1.Pod, group string) *corev1.Pod {
	p.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: &group}
	return p
}

// Pods of Kubernetes' own PodGroup (spec.schedulingGroup, a gang policy
// with minCount) bind all at once when the gang fits, and not at all
// while fewer than minCount pods exist.
func TestNativePodGroupIsAGang(t *testing.T) {
	e := newEnv(t)
	for i := range 3 {
		e.node(fmt.Sprintf("native-%d", i), 8, nil)
	}
	e.start(e.config())
	e.nativeGroup("allreduce", "v1alpha3", 3) // written at the older version, read at v1beta1
	e.create(inNativeGroup(pod("allreduce-0", 8), "allreduce"), inNativeGroup(pod("allreduce-1", 8), "allreduce"))
	msg := e.waitUnschedulable("allreduce-0", "minCount")
	t.Logf("two of three: %s", msg)
	e.create(inNativeGroup(pod("allreduce-2", 8), "allreduce"))
	got := e.waitBound("allreduce-0", "allreduce-1", "allreduce-2")
	used := map[string]bool{}
	for _, n := range got {
		used[n] = true
	}
	if len(used) != 3 {
		t.Errorf("3 pods of 8 GPUs on %d nodes, want 3: %v", len(used), got)
	}
	// A group that is not there: its pod waits with the reason.
	e.create(inNativeGroup(pod("orphan", 1), "nosuch"))
	e.waitUnschedulable("orphan", "scheduling.k8s.io")
}
