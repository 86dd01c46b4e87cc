package kube

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/corral-sched/corral/internal/kube/kubetest"
)

// BenchmarkSnapshotAndDecide is the core of one cycle of the Kubernetes
// face without the API server: the snapshot (the fleet from every node,
// every bound pod pinned) and the decisions for 200 pending 1-GPU pods,
// on nodes of 8 H100s in racks of 16, four 1-GPU pods bound to each. The
// upstream filters are left out (BenchmarkFilters in upstream measures
// them). With images, every node lists the pods' image in its status, so
// image locality weighs every node for every pod. Whether a cycle's cost
// per pod stays flat from 1,000 to 5,000 nodes:
//
//	go test -run '^$' -bench SnapshotAndDecide ./internal/kube/
func BenchmarkSnapshotAndDecide(b *testing.B) {
	const pending = 200
	for _, images := range []bool{false, true} {
		for _, n := range []int{1000, 5000} {
			b.Run(fmt.Sprintf("nodes=%d/images=%v", n, images), func(b *testing.B) {
				benchCycle(b, n, pending, images)
			})
		}
	}
}

func benchCycle(b *testing.B, n, pending int, images bool) {
	nodes, pods := benchCluster(n, 4, pending)
	if images {
		for _, node := range nodes {
			node.Status.Images = []corev1.ContainerImage{{Names: []string{pods[0].Spec.Containers[0].Image}, SizeBytes: 10 << 30}}
		}
	}
	cfg := Config{SchedulerName: DefaultSchedulerName, Levels: []Level{{Name: "rack", Labels: []string{"corral.test/rack"}}}}
	log := testLogger()
	var snapTime, decideTime time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		snap, err := takeSnapshot(&cfg, nodes, pods, nil, nil, log)
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		snap.now = t1
		d := decide(snap, buildUnits(snap.pending, nil, snap.members), true)
		decideTime += time.Since(t1)
		snapTime += t1.Sub(t0)
		if len(d.binds) != pending {
			b.Fatalf("%d pods bound of %d", len(d.binds), pending)
		}
	}
	b.ReportMetric(float64(snapTime.Milliseconds())/float64(b.N), "snapshot-ms/cycle")
	b.ReportMetric(float64(decideTime.Milliseconds())/float64(b.N), "decide-ms/cycle")
	b.ReportMetric(float64((snapTime+decideTime).Microseconds())/float64(b.N*pending), "µs/pending-pod")
}

// benchCluster is n GPU nodes in racks of 16 with bound 1-GPU pods on
// each, and pending 1-GPU pods for corral.
func benchCluster(n, bound, pending int) ([]*corev1.Node, []*corev1.Pod) {
	gpus := resource.MustParse("8")
	var nodes []*corev1.Node
	var pods []*corev1.Pod
	for i := range n {
		name := fmt.Sprintf("node-%05d", i)
		res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("192"), corev1.ResourceMemory: resource.MustParse("2Ti"),
			corev1.ResourcePods: resource.MustParse("256"), kubetest.ResourceGPU: gpus}
		nodes = append(nodes, &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{kubetest.LabelProduct: "NVIDIA-H100-80GB-HBM3",
				kubetest.LabelCount: "8", "corral.test/rack": fmt.Sprintf("rack-%03d", i/16)}},
			Status: corev1.NodeStatus{Capacity: res, Allocatable: res, Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
		})
		for j := range bound {
			p := pod(fmt.Sprintf("bound-%05d-%d", i, j), 1)
			p.Namespace, p.UID, p.Spec.NodeName = "bench", types.UID(fmt.Sprintf("b-%d-%d", i, j)), name
			p.Status.Phase = corev1.PodRunning
			pods = append(pods, p)
		}
	}
	created := metav1.NewTime(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	for i := range pending {
		p := pod(fmt.Sprintf("pending-%05d", i), 1)
		p.Namespace, p.UID, p.CreationTimestamp = "bench", types.UID(fmt.Sprintf("p-%d", i)), created
		pods = append(pods, p)
	}
	return nodes, pods
}
