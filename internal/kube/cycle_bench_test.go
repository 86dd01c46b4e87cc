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
// on nodes of 8 H100s in racks of 16, four 1-GPU pods bound to each.
// Between cycles the pods placed are bound, as many bound pods end and
// 200 new pods arrive. fresh classes every pod and builds the snapshot
// afresh every cycle; kept is told only the pods that changed, as the
// informer tells the scheduler, and keeps the pods' classes, the fleet
// and the bound pods from the cycle before (podClasses, keptCluster). The upstream filters are left out
// (BenchmarkFilters in upstream measures them). With images, every node
// lists the pods' image in its status, so image locality weighs every
// node for every pod. Whether a cycle's cost per pod stays flat from
// 1,000 to 5,000 nodes:
//
//	go test -run '^$' -bench SnapshotAndDecide ./internal/kube/
func BenchmarkSnapshotAndDecide(b *testing.B) {
	const pending = 200
	for _, kept := range []bool{false, true} {
		for _, images := range []bool{false, true} {
			for _, n := range []int{1000, 5000} {
				name := map[bool]string{false: "fresh", true: "kept"}[kept]
				b.Run(fmt.Sprintf("%s/nodes=%d/images=%v", name, n, images), func(b *testing.B) {
					benchCycle(b, n, pending, images, kept)
				})
			}
		}
	}
}

func benchCycle(b *testing.B, n, pending int, images, keep bool) {
	nodes, pods := benchCluster(n, 4, pending)
	if images {
		for _, node := range nodes {
			node.Status.Images = []corev1.ContainerImage{{Names: []string{pods[0].Spec.Containers[0].Image}, SizeBytes: 10 << 30}}
		}
	}
	cfg := Config{SchedulerName: DefaultSchedulerName, Levels: []Level{{Name: "rack", Labels: []string{"corral.test/rack"}}}}
	log := testLogger()
	var kept *keptCluster
	classes := classesOf(cfg.SchedulerName, pods, nil)
	if keep {
		kept = &keptCluster{}
	}
	var snapTime, decideTime time.Duration
	var changed []*corev1.Pod
	var gone []types.UID
	cycle := func(i int) {
		t0 := time.Now()
		if keep {
			for _, p := range changed {
				classes.set(p.UID, p, p.Spec.NodeName)
			}
			for _, uid := range gone {
				classes.set(uid, nil, "")
			}
		} else {
			classes = classesOf(cfg.SchedulerName, pods, nil)
		}
		snap, err := takeFilteredSnapshot(&cfg, nodes, classes, nil, nil, kept, log)
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
		b.StopTimer()
		pods, changed, gone = nextCycle(pods, d.binds, i)
		b.StartTimer()
	}
	cycle(0) // the first cycle builds what kept keeps
	snapTime, decideTime = 0, 0
	b.ResetTimer()
	for i := 1; i <= b.N; i++ {
		cycle(i)
	}
	b.ReportMetric(float64(snapTime.Milliseconds())/float64(b.N), "snapshot-ms/cycle")
	b.ReportMetric(float64(decideTime.Milliseconds())/float64(b.N), "decide-ms/cycle")
	b.ReportMetric(float64((snapTime+decideTime).Microseconds())/float64(b.N*pending), "µs/pending-pod")
}

// nextCycle is the pods after a cycle: those it placed bound, as many of
// the longest bound ended, and as many new ones pending; and the changes,
// as an informer gives them: the pods new or replaced, and those gone.
func nextCycle(pods []*corev1.Pod, binds []binding, cycle int) (out, changed []*corev1.Pod, gone []types.UID) {
	placed := map[types.UID]string{}
	for _, bd := range binds {
		placed[bd.pod.UID] = bd.node
	}
	ended := len(binds)
	out = make([]*corev1.Pod, 0, len(pods))
	for _, p := range pods {
		switch node, ok := placed[p.UID]; {
		case ok:
			c := p.DeepCopy()
			c.Spec.NodeName, c.Status.Phase = node, corev1.PodRunning
			out, changed = append(out, c), append(changed, c)
		case p.Spec.NodeName != "" && ended > 0:
			ended-- // the oldest bound pods end
			gone = append(gone, p.UID)
		default:
			out = append(out, p)
		}
	}
	created := metav1.NewTime(time.Date(2026, 12, 1, 0, 0, cycle+1, 0, time.UTC))
	for j := range binds {
		p := pod(fmt.Sprintf("pending-%d-%05d", cycle, j), 1)
		p.Namespace, p.UID, p.CreationTimestamp = "bench", types.UID(fmt.Sprintf("p-%d-%d", cycle, j)), created
		out, changed = append(out, p), append(changed, p)
	}
	return out, changed, gone
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
