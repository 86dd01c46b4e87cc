package kube

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/corral-sched/corral/internal/placement"
)

// boundOn is a pod of gpus GPUs bound to node.
func boundOn(name string, gpus int, node string) *corev1.Pod {
	p := pod(name, gpus)
	p.Namespace, p.UID, p.Spec.NodeName = "learned", types.UID("u-"+name), node
	p.Status.Phase = corev1.PodRunning
	return p
}

// TestKeptClusterKeepsItsLearnedMixWhenRebuilt: the kept state learns
// the mix of pod shapes in the order pods bound (a 4-GPU pod on the last
// node, then a 1-GPU pod on the first); a node joining builds the fleet
// again and adopts every bound pod again, in node order, and the state
// carries on with the mix it had rather than one learned in that order.
func TestKeptClusterKeepsItsLearnedMixWhenRebuilt(t *testing.T) {
	cfg := Config{SchedulerName: DefaultSchedulerName, Levels: []Level{{Name: "rack", Labels: []string{"corral.test/rack"}}}}
	nodes, _ := benchCluster(5, 0, 0)
	var kept keptCluster
	classes := newPodClasses(cfg.SchedulerName)
	cycle := func(nodes []*corev1.Node, pods ...*corev1.Pod) {
		t.Helper()
		waiting := pod(fmt.Sprintf("waiting-%d", kept.builds), 1)
		waiting.Namespace, waiting.UID = "learned", types.UID(waiting.Name)
		classes.setList(append(pods, waiting), nil)
		if _, err := takeFilteredSnapshot(&cfg, nodes, classes, nil, nil, &kept, testLogger()); err != nil {
			t.Fatal(err)
		}
	}
	x, y := boundOn("x", 4, "node-00003"), boundOn("y", 1, "node-00000")
	cycle(nodes[:4], x)
	cycle(nodes[:4], x, y)
	before := kept.learned
	if before.Seen != 2 || len(before.Mix) != 1 || before.Mix[0].NumGPU != 4 {
		t.Fatalf("learned %+v; want two arrivals, the mix the 4-GPU pod's", before)
	}
	cycle(nodes, x, y)
	if kept.builds != 2 {
		t.Fatalf("the fleet was built %d times; a node joining builds it again", kept.builds)
	}
	if !reflect.DeepEqual(kept.learned, before) {
		t.Errorf("after a rebuild the state learned %+v, want %+v", kept.learned, before)
	}
}

// TestLeaderChangeKeepsTheLearnedMix: a leader keeps what its packing
// policy learned in the unit memory ConfigMap, on the real API server
// under the shipped RBAC; the next leader's state carries on with it. The
// pods bind in an order unlike node order (a 4-GPU pod on the second
// node, then a 1-GPU pod on the first), so a leader that learned the mix
// again from the bound pods would place by another one.
func TestLeaderChangeKeepsTheLearnedMix(t *testing.T) {
	e := newEnv(t)
	a, b := e.ns+"-a", e.ns+"-b"
	e.node(a, 8, nil)
	e.node(b, 8, nil)
	cfg := e.config()
	cfg.UnitMemoryConfigMap = leaseNamespace + "/" + e.ns + "-learned"
	t.Cleanup(func() {
		_ = e.c.Client.CoreV1().ConfigMaps(leaseNamespace).Delete(context.Background(), e.ns+"-learned", metav1.DeleteOptions{})
	})
	ctx := context.Background()
	first := e.newScheduler(cfg)
	if err := first.Start(ctx); err != nil {
		t.Fatal(err)
	}
	first.restoreUnits(ctx)
	// A pod that never fits keeps pods waiting, so every cycle takes the
	// cluster in, adopting what bound.
	waiting := pod("waiting", 1)
	waiting.Spec.NodeSelector = map[string]string{"corral.test/none": "none"}
	e.create(waiting)
	place := func(s *Scheduler, name string, gpus int, node string) {
		t.Helper()
		p := pod(name, gpus)
		p.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": node}
		e.create(p)
		e.eventually(func() error {
			if err := s.Cycle(ctx); err != nil {
				return err
			}
			got, err := e.c.Client.CoreV1().Pods(e.ns).Get(ctx, name, metav1.GetOptions{})
			if err == nil && got.Spec.NodeName != node {
				err = fmt.Errorf("%s on %q, want %s", name, got.Spec.NodeName, node)
			}
			return err
		})
	}
	place(first, "big", 4, b)
	place(first, "small", 1, a)
	var learned placement.Learned
	e.eventually(func() error { // the bound pods are adopted, and the renewal written, by the next cycles
		if err := first.Cycle(ctx); err != nil {
			return err
		}
		learned = first.kept.learned
		if learned.Seen < 2 {
			return fmt.Errorf("learned %d arrivals (builds %d, state %v, pods %d)", learned.Seen, first.kept.builds, first.kept.state != nil, len(first.kept.pods))
		}
		return nil
	})
	if len(learned.Mix) != 1 || learned.Mix[0].NumGPU != 4 {
		t.Fatalf("the first leader places by %+v; want the 4-GPU pod's shape, the first bound", learned.Mix)
	}

	next := e.newScheduler(cfg)
	if err := next.Start(ctx); err != nil {
		t.Fatal(err)
	}
	next.restoreUnits(ctx)
	e.eventually(func() error {
		if err := next.Cycle(ctx); err != nil {
			return err
		}
		if next.kept.state == nil {
			return fmt.Errorf("no state yet")
		}
		return nil
	})
	got := next.kept.learned
	if got.Renewed != learned.Renewed || !reflect.DeepEqual(got.Mix, learned.Mix) {
		t.Errorf("the next leader places by %+v (renewed at %d), want %+v (at %d)", got.Mix, got.Renewed, learned.Mix, learned.Renewed)
	}
}
