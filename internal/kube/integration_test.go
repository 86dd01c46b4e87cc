package kube

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSingleGPUPodsPackAndRespectCapacity(t *testing.T) {
	e := newEnv(t)
	e.node("pack-a", 8, nil)
	e.node("pack-b", 8, nil)
	e.start(e.config())
	for i := range 6 {
		e.create(pod(fmt.Sprintf("one-%d", i), 1))
		e.waitBound(fmt.Sprintf("one-%d", i))
	}
	got := e.nodesOf()
	first := got["one-0"]
	for i := range 6 {
		if n := got[fmt.Sprintf("one-%d", i)]; n != first {
			t.Errorf("one-%d on %s, want every 1-GPU pod packed on %s: %v", i, n, first, got)
		}
	}
	e.create(pod("eight", 8))
	got = e.waitBound("eight")
	if got["eight"] == first {
		t.Errorf("8-GPU pod on %s, which has only 2 GPUs free", first)
	}
	e.create(pod("four", 4))
	msg := e.waitUnschedulable("four", "not enough free GPU capacity")
	t.Logf("four: %s", msg)
	for node, gpus := range e.gpusPerNode() {
		if gpus > 8 {
			t.Errorf("node %s holds %d GPUs of 8", node, gpus)
		}
	}
}

func TestPodGroupBindsWhole(t *testing.T) {
	e := newEnv(t)
	for i := range 4 {
		e.node(fmt.Sprintf("whole-%d", i), 8, nil)
	}
	e.start(e.config())
	e.podGroup("train", 4, nil)
	for i := range 4 {
		e.create(inGroup(pod(fmt.Sprintf("train-%d", i), 8), "train"))
	}
	got := e.waitBound("train-0", "train-1", "train-2", "train-3")
	used := map[string]bool{}
	for _, n := range got {
		used[n] = true
	}
	if len(used) != 4 {
		t.Errorf("4 pods of 8 GPUs on %d nodes, want 4: %v", len(used), got)
	}
	e.waitGroupStatus("train", PhaseScheduled, 4)
}

func TestPodGroupThatCannotFitBindsNone(t *testing.T) {
	e := newEnv(t)
	for i := range 3 {
		e.node(fmt.Sprintf("short-%d", i), 8, nil)
	}
	e.start(e.config())
	e.podGroup("big", 4, nil)
	for i := range 4 {
		e.create(inGroup(pod(fmt.Sprintf("big-%d", i), 8), "big"))
	}
	want := "needs 32 GPUs (4 tasks of 8); the fleet has room for 24 GPUs (3 tasks of 8) now"
	for i := range 4 {
		e.waitUnschedulable(fmt.Sprintf("big-%d", i), want)
	}
	e.waitGroupStatus("big", PhasePending, 0)
	// A single pod still fits: the group held nothing.
	e.create(pod("small", 8))
	e.waitBound("small")
	for name, node := range e.nodesOf() {
		if name != "small" && node != "" {
			t.Errorf("%s bound to %s; no pod of the group may start", name, node)
		}
	}
}

func TestPodGroupBelowMinMemberWaits(t *testing.T) {
	e := newEnv(t)
	for i := range 4 {
		e.node(fmt.Sprintf("wait-%d", i), 8, nil)
	}
	e.start(e.config())
	e.podGroup("half", 4, nil)
	e.create(inGroup(pod("half-0", 8), "half"), inGroup(pod("half-1", 8), "half"))
	e.waitUnschedulable("half-0", "pod group half has 2 of its minMember 4 pods")
	e.waitUnschedulable("half-1", "waiting for the rest before any starts")
	e.create(inGroup(pod("half-2", 8), "half"), inGroup(pod("half-3", 8), "half"))
	e.waitBound("half-0", "half-1", "half-2", "half-3")
}

func TestPodWithoutItsPodGroupWaits(t *testing.T) {
	e := newEnv(t)
	e.node("orphan-0", 8, nil)
	e.start(e.config())
	e.create(inGroup(pod("orphan", 1), "missing"))
	e.waitUnschedulable("orphan", `pod group "missing" does not exist`)
}

func TestUnofferedMIGProfileIsExplained(t *testing.T) {
	e := newEnv(t)
	e.node("plain-0", 8, nil)
	e.start(e.config())
	e.create(pod("before", 2))
	e.waitBound("before")
	mig := podWith("mig", corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("1"),
		corev1.ResourceName("nvidia.com/mig-1g.10gb"): resource.MustParse("1"),
	})
	e.create(mig)
	e.waitUnschedulable("mig", "GPUs are not in MIG mode")
	e.create(pod("after", 2))
	got := e.waitBound("after")
	if got["before"] != "plain-0" {
		t.Errorf("before moved to %q", got["before"])
	}
	if g := e.gpusPerNode()["plain-0"]; g != 4 {
		t.Errorf("plain-0 holds %d GPUs, want 4", g)
	}
}

func TestGangPackedInOneRack(t *testing.T) {
	e := newEnv(t)
	// rack r1 has 2 nodes, r2 has 4: a 4-node gang packed by rack goes to r2.
	for i, rack := range []string{"r1", "r1", "r2", "r2", "r2", "r2"} {
		e.node(fmt.Sprintf("rack-%d", i), 8, map[string]string{"corral.test/block": "b1", "corral.test/rack": rack})
	}
	e.start(e.config())
	e.podGroup("ring", 4, map[string]string{AnnotationPack: "rack"})
	for i := range 4 {
		e.create(inGroup(pod(fmt.Sprintf("ring-%d", i), 8), "ring"))
	}
	got := e.waitBound("ring-0", "ring-1", "ring-2", "ring-3")
	for name, node := range got {
		if node < "rack-2" {
			t.Errorf("%s on %s, outside rack r2", name, node)
		}
	}
	e.podGroup("ring2", 3, map[string]string{AnnotationPack: "rack"})
	for i := range 3 {
		e.create(inGroup(pod(fmt.Sprintf("ring2-%d", i), 8), "ring2"))
	}
	e.waitUnschedulable("ring2-0", "rack")
}

func TestRestartKeepsBoundPods(t *testing.T) {
	e := newEnv(t)
	e.node("keep-0", 8, nil)
	e.node("keep-1", 8, nil)
	_, stop := e.start(e.config())
	e.create(pod("a", 6), pod("b", 6))
	before := e.waitBound("a", "b")
	stop()
	s2, _ := e.start(e.config())
	e.create(pod("c", 2), pod("d", 2), pod("e", 2))
	e.waitBound("c", "d")
	e.waitUnschedulable("e", "not enough free GPU capacity")
	after := e.nodesOf()
	for _, p := range []string{"a", "b"} {
		if after[p] != before[p] {
			t.Errorf("%s moved from %s to %s", p, before[p], after[p])
		}
	}
	for node, gpus := range e.gpusPerNode() {
		if gpus > 8 {
			t.Errorf("node %s holds %d GPUs of 8 after the restart", node, gpus)
		}
	}
	if st := s2.Stats(); st.Conflicts != 0 || st.Failures != 0 {
		t.Errorf("stats %+v, want no failed bindings", st)
	}
}

func TestHigherPriorityFirst(t *testing.T) {
	e := newEnv(t)
	e.node("prio-0", 8, nil)
	low, high := pod("low", 8), pod("high", 8)
	low.Spec.PriorityClassName = e.priorityClass("low", 1)
	high.Spec.PriorityClassName = e.priorityClass("high", 100)
	e.create(low, high) // both wait before any scheduler runs
	e.start(e.config())
	got := e.waitBound("high")
	e.waitUnschedulable("low", "not enough free GPU capacity")
	if got["low"] != "" {
		t.Errorf("low bound to %s", got["low"])
	}
}

func TestBindConflictIsCounted(t *testing.T) {
	e := newEnv(t)
	e.node("race-0", 8, nil)
	e.create(pod("p", 1))
	s := e.newScheduler(e.config())
	ctx := context.Background()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	// Another scheduler binds the pod first; corral's cache has not seen it.
	target := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Target: corev1.ObjectReference{Kind: "Node", Name: "race-0"}}
	if err := e.c.Client.CoreV1().Pods(e.ns).Bind(ctx, target, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p, _ := s.pods.Pods(e.ns).Get("p")
	errs := bindAll(ctx, e.c.Client, []binding{{pod: p, node: "race-0"}}, &s.n)
	if errs[0] == nil || s.Stats().Conflicts != 1 {
		t.Errorf("second bind: err %v, stats %+v; want one conflict", errs[0], s.Stats())
	}
}

func TestNodeSelectorIsHonoured(t *testing.T) {
	e := newEnv(t)
	e.node("sel-a", 8, map[string]string{"pool": "a"})
	e.node("sel-b", 8, map[string]string{"pool": "b"})
	e.start(e.config())
	e.create(pod("first", 4))
	first := e.waitBound("first")["first"]
	other := map[string]string{"sel-a": "b", "sel-b": "a"}[first]
	picky := pod("picky", 1)
	picky.Spec.NodeSelector = map[string]string{"pool": other}
	free := pod("free", 1)
	e.create(picky, free)
	got := e.waitBound("picky", "free")
	if got["picky"] == first {
		t.Errorf("picky on %s, which lacks pool=%s", got["picky"], other)
	}
	// free has no selector: the packing policy puts it beside picky, where
	// another 4-GPU pod still fits, rather than on first's last four GPUs.
	if got["free"] != got["picky"] {
		t.Errorf("free on %s, want it packed next to picky on %s", got["free"], got["picky"])
	}
	lost := pod("lost", 1)
	lost.Spec.NodeSelector = map[string]string{"pool": "c"}
	e.create(lost)
	e.waitUnschedulable("lost", "didn't match Pod's node affinity/selector")
}
