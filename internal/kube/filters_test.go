package kube

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/corral-sched/corral/internal/kube/kubetest"
)

// Each test here is one rule Kubernetes' own filter plugins keep, run on
// the real API server: pods created together, which the core alone would
// pack onto one node.

// A pod requiring another node by affinity lands there, though the core
// would pack it beside the first.
func TestRequiredNodeAffinityHonoured(t *testing.T) {
	e := newEnv(t)
	e.node("aff-0", 8, nil)
	e.node("aff-1", 8, nil)
	e.start(e.config())
	e.create(pod("first", 1))
	e.waitBound("first")
	p := pod("picky", 1)
	p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpNotIn,
				Values: []string{e.nodesOf()["first"]}}},
		}}}}}
	e.create(p)
	got := e.waitBound("picky")
	if got["picky"] == got["first"] {
		t.Fatalf("picky on %s beside first, which its required node affinity forbids", got["picky"])
	}
}

// Pods that must not share a node, created together, land on different
// nodes; one more than there are nodes waits, saying why.
func TestPodAntiAffinityHonoured(t *testing.T) {
	e := newEnv(t)
	e.node("anti-0", 8, nil)
	e.node("anti-1", 8, nil)
	e.start(e.config())
	for i := range 3 {
		e.create(apart(pod(fmt.Sprintf("apart-%d", i), 1)))
	}
	e.eventually(func() error {
		n := 0
		for _, node := range e.nodesOf() {
			if node != "" {
				n++
			}
		}
		if n < 2 {
			return fmt.Errorf("%d pods bound, want 2", n)
		}
		return nil
	})
	time.Sleep(3 * e.config().Interval)
	onNode := map[string][]string{}
	var waiting string
	for name, node := range e.nodesOf() {
		if node == "" {
			waiting = name
			continue
		}
		onNode[node] = append(onNode[node], name)
	}
	if len(onNode) != 2 || waiting == "" {
		t.Fatalf("pods by node %v, waiting %q: want one on each node and one waiting", onNode, waiting)
	}
	e.waitUnschedulable(waiting, "didn't match pod anti-affinity rules")
}

// apart gives p the label app=apart and a required anti-affinity to pods
// with it on the same node.
func apart(p *corev1.Pod) *corev1.Pod {
	p.Labels["app"] = "apart"
	p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "apart"}},
			TopologyKey:   "kubernetes.io/hostname",
		}}}}
	return p
}

// Four pods spread with maxSkew 1 over two nodes land two on each.
func TestTopologySpreadHonoured(t *testing.T) {
	e := newEnv(t)
	e.node("spread-0", 8, nil)
	e.node("spread-1", 8, nil)
	e.start(e.config())
	var names []string
	for i := range 4 {
		p := pod(fmt.Sprintf("spread-%d", i), 1)
		p.Labels["app"] = "spread"
		p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "spread"}},
		}}
		e.create(p)
		names = append(names, p.Name)
	}
	got := e.waitBound(names...)
	perNode := map[string]int{}
	for _, n := range names {
		perNode[got[n]]++
	}
	if len(perNode) != 2 || perNode["spread-0"] != 2 || perNode["spread-1"] != 2 {
		t.Fatalf("pods per node %v, want 2 on each", perNode)
	}
}

// Resources the core does not count are never overcommitted: an extended
// resource (rdma/ib), the node's pod count, ephemeral storage.
func TestNodeResourcesNeverOvercommitted(t *testing.T) {
	cases := []struct {
		name string
		node map[string]string // node capacity
		ask  corev1.ResourceList
		fit  int // pods of the three that fit
		why  string
	}{
		{"rdma", map[string]string{"rdma/ib": "1"}, corev1.ResourceList{"rdma/ib": resource.MustParse("1")}, 1, "Insufficient rdma/ib"},
		{"pods", map[string]string{"pods": "2"}, nil, 2, "Too many pods"},
		{"ephemeral", map[string]string{"ephemeral-storage": "100Gi"}, corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("40Gi")}, 2, "Insufficient ephemeral-storage"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			e.nodeSpec(kubetest.Node{Name: "res-" + c.name, GPUs: 8, Product: "NVIDIA-H100-80GB-HBM3", GPUMemMiB: 81559, Resources: c.node})
			e.start(e.config())
			for i := range 3 {
				p := pod(fmt.Sprintf("%s-%d", c.name, i), 1)
				for k, v := range c.ask {
					p.Spec.Containers[0].Resources.Requests[k] = v
					if k != corev1.ResourceEphemeralStorage {
						p.Spec.Containers[0].Resources.Limits[k] = v
					}
				}
				e.create(p)
			}
			e.eventually(func() error {
				if n := boundCount(e.nodesOf()); n != c.fit {
					return fmt.Errorf("%d pods bound, want %d", n, c.fit)
				}
				return nil
			})
			time.Sleep(3 * e.config().Interval)
			var waiting []string
			for name, node := range e.nodesOf() {
				if node == "" {
					waiting = append(waiting, name)
				}
			}
			if len(waiting) != 3-c.fit {
				t.Fatalf("waiting %v, want %d of 3", waiting, 3-c.fit)
			}
			e.waitUnschedulable(waiting[0], c.why)
		})
	}
}

func boundCount(nodes map[string]string) int {
	n := 0
	for _, node := range nodes {
		if node != "" {
			n++
		}
	}
	return n
}

// A RuntimeClass's overhead counts: two pods of 1.5 CPUs fit a 4-CPU
// node, but not with 1 CPU of overhead each.
func TestRuntimeClassOverheadCounted(t *testing.T) {
	e := newEnv(t)
	e.nodeSpec(kubetest.Node{Name: "overhead-0", GPUs: 8, Product: "NVIDIA-H100-80GB-HBM3", GPUMemMiB: 81559, CPU: "4"})
	e.start(e.config())
	rc := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "kata-" + e.ns}, Handler: "kata",
		Overhead: &nodev1.Overhead{PodFixed: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}
	if _, err := e.c.Client.NodeV1().RuntimeClasses().Create(context.Background(), rc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.c.Client.NodeV1().RuntimeClasses().Delete(context.Background(), rc.Name, metav1.DeleteOptions{})
	})
	for i := range 2 {
		p := podWith(fmt.Sprintf("vm-%d", i), corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m"), kubetest.ResourceGPU: resource.MustParse("1")})
		p.Spec.RuntimeClassName = &rc.Name
		e.create(p)
	}
	e.eventually(func() error {
		if n := boundCount(e.nodesOf()); n != 1 {
			return fmt.Errorf("%d pods bound, want 1", n)
		}
		return nil
	})
	time.Sleep(3 * e.config().Interval)
	if n := boundCount(e.nodesOf()); n != 1 {
		t.Fatalf("%d pods bound on a 4-CPU node, each asking 1.5 CPUs and 1 of overhead", n)
	}
}

// A pod whose PriorityClass says preemptionPolicy Never does not evict
// lower-priority pods; it waits for room.
func TestPreemptionPolicyNeverNeverEvicts(t *testing.T) {
	e := newEnv(t)
	e.node("never-0", 8, nil)
	cfg := e.configNoGrace()
	s, _ := e.start(cfg)
	low := pod("low", 8)
	low.Spec.PriorityClassName = e.priorityClass("low", 1)
	e.create(low)
	e.waitBound("low")
	high := pod("polite", 8)
	high.Spec.PriorityClassName = e.politeClass(1000)
	e.create(high)
	e.waitUnschedulable("polite", "")
	time.Sleep(4 * cfg.Interval)
	if got := e.nodesOf(); got["low"] == "" || got["polite"] != "" {
		t.Fatalf("pods %v: want low still bound and polite waiting", got)
	}
	if st := s.Stats(); st.Evictions != 0 {
		t.Fatalf("stats %+v: a pod with preemptionPolicy Never evicted", st)
	}
}
