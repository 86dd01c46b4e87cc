package upstream

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// benchNodes are n Ready nodes of 8 GPUs, 64 CPUs and 110 pods.
func benchNodes(n int) []*corev1.Node {
	var out []*corev1.Node
	for i := range n {
		res := corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("512Gi"),
			corev1.ResourcePods: resource.MustParse("110"), "nvidia.com/gpu": resource.MustParse("8"),
		}
		name := fmt.Sprintf("node-%03d", i)
		out = append(out, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
			Status: corev1.NodeStatus{Capacity: res, Allocatable: res}})
	}
	return out
}

func benchPod(i int, antiAffinity bool) *corev1.Pod {
	req := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), "nvidia.com/gpu": resource.MustParse("1")}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%d", i), Namespace: "ns", UID: types.UID(fmt.Sprint(i)),
		Labels: map[string]string{"app": "bench"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: req, Limits: req}}}}}
	if antiAffinity {
		p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "bench"}}, TopologyKey: "kubernetes.io/hostname"}}}}
	}
	return p
}

// BenchmarkFilters measures one cycle's plugin work on 125 nodes of 8 GPUs
// with 500 pods bound: Allowed (PreFilter, and Filter on every node) for
// one pod, then Place for each of 100 pods, each on the next node (with
// anti-affinity to each other: those after the 125th would be refused).
//
//	go test -run '^$' -bench Filters ./internal/kube/upstream/
func BenchmarkFilters(b *testing.B) {
	for _, anti := range []bool{false, true} {
		b.Run(fmt.Sprintf("antiAffinity=%v", anti), func(b *testing.B) {
			ctx, f := context.Background(), newTestFramework(b)
			nodes := benchNodes(125)
			var bound []*corev1.Pod
			for i := range 500 {
				p := benchPod(100000+i, false)
				p.Labels["app"] = "bound"
				p.Spec.NodeName = nodes[i%len(nodes)].Name
				bound = append(bound, p)
			}
			b.ResetTimer()
			for b.Loop() {
				v := f.NewView(nodes, bound)
				if got := v.Allowed(ctx, benchPod(0, anti)); len(got.Nodes) == 0 {
					b.Fatalf("no node allowed: %s", got.Why(len(nodes)))
				}
				for i := range 100 {
					if err := v.Place(ctx, benchPod(i, anti), nodes[i%len(nodes)].Name); err != nil && !anti {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkView measures what a cycle's view costs on n nodes of 8 GPUs
// with four pods bound to each, as 200 pods end and 200 are bound between
// cycles: fresh builds every NodeInfo afresh (freshView), kept brings the
// kept cluster up to date (NewView), told brings it up to date told only
// the pods that ended and came (NewViewOf, as the scheduler tells it).
// One pod's verdict (PreFilter, and
// Filter on every node) is taken on the view, as a cycle takes one per
// pod shape. Whether the view's cost stays flat with the nodes:
//
//	go test -run '^$' -bench 'View$' ./internal/kube/upstream/
func BenchmarkView(b *testing.B) {
	for _, name := range []string{"fresh", "kept", "told"} {
		for _, n := range []int{1000, 5000} {
			b.Run(fmt.Sprintf("%s/nodes=%d", name, n), func(b *testing.B) { benchView(b, n, name) })
		}
	}
}

func benchView(b *testing.B, n int, how string) {
	ctx, f := context.Background(), newTestFramework(b)
	nodes := benchNodes(n)
	var bound []*corev1.Pod
	next := 100000
	bind := func(count int) {
		for range count {
			p := benchPod(next, false)
			p.ResourceVersion = fmt.Sprint(next)
			p.Spec.NodeName = nodes[next%len(nodes)].Name
			bound = append(bound, p)
			next++
		}
	}
	bind(4 * n)
	var changed []PodChange
	view := map[string]func([]*corev1.Node, []*corev1.Pod) *View{"fresh": f.freshView, "kept": f.NewView,
		"told": func(nodes []*corev1.Node, pods []*corev1.Pod) *View {
			return f.NewViewOf(nodes, changed, func() []*corev1.Pod { return pods })
		}}[how]
	view(nodes, bound)
	var viewTime, allowTime time.Duration
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		changed = changed[:0]
		for _, p := range bound[:200] {
			changed = append(changed, PodChange{UID: p.UID})
		}
		bound = append(bound[:0:0], bound[200:]...)
		bind(200)
		for _, p := range bound[len(bound)-200:] {
			changed = append(changed, PodChange{UID: p.UID, Pod: p})
		}
		b.StartTimer()
		t0 := time.Now()
		v := view(nodes, bound)
		t1 := time.Now()
		if got := v.Allowed(ctx, benchPod(0, false)); len(got.Nodes) != n {
			b.Fatalf("%d nodes allowed of %d", len(got.Nodes), n)
		}
		viewTime += t1.Sub(t0)
		allowTime += time.Since(t1)
	}
	b.ReportMetric(float64(viewTime.Microseconds())/float64(b.N), "view-µs/cycle")
	b.ReportMetric(float64(allowTime.Microseconds())/float64(b.N), "verdict-µs/pod")
}
