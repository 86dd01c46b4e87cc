package kube

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// queueStatusOf reads a Queue's status: admitted, pending, GPUs used and
// borrowed.
func (e *env) queueStatusOf(name string) (admitted, pending int64, used, borrowed float64) {
	e.t.Helper()
	obj, err := e.c.Dynamic.Resource(QueueResource).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	admitted, _, _ = unstructured.NestedInt64(obj.Object, "status", "admitted")
	pending, _, _ = unstructured.NestedInt64(obj.Object, "status", "pending")
	num := func(path ...string) float64 {
		v, _, _ := unstructured.NestedFieldNoCopy(obj.Object, path...)
		switch x := v.(type) {
		case int64:
			return float64(x)
		case float64:
			return x
		}
		return -1
	}
	return admitted, pending, num("status", "usage", "gpus"), num("status", "borrowed", "gpus")
}

func (e *env) waitQueueStatus(name string, admitted, pending int64, used, borrowed float64) {
	e.t.Helper()
	e.eventually(func() error {
		a, p, u, b := e.queueStatusOf(name)
		if a != admitted || p != pending || u != used || b != borrowed {
			return fmt.Errorf("queue %s: admitted %d pending %d used %v borrowed %v, want %d %d %v %v", name, a, p, u, b, admitted, pending, used, borrowed)
		}
		return nil
	})
}

// waitGroupCounts waits until the coscheduling PodGroup's status says
// phase, scheduled and running.
func (e *env) waitGroupCounts(name, phase string, scheduled, running int64) {
	e.t.Helper()
	e.eventually(func() error {
		obj, err := e.c.Dynamic.Resource(PodGroupResource).Namespace(e.ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		p, _, _ := unstructured.NestedString(obj.Object, "status", "phase")
		s, _, _ := unstructured.NestedInt64(obj.Object, "status", "scheduled")
		r, _, _ := unstructured.NestedInt64(obj.Object, "status", "running")
		if p != phase || s != scheduled || r != running {
			return fmt.Errorf("pod group %s: status %v, want %s scheduled %d running %d", name, obj.Object["status"], phase, scheduled, running)
		}
		return nil
	})
}

// PodGroup and Queue status follow the pods: bound, running, evicted;
// a queue's admitted and pending pods, GPUs used and borrowed from its
// cohort; and nothing is written while nothing changes.
func TestStatusKeptCurrent(t *testing.T) {
	e := newEnv(t)
	for i := range 2 {
		e.node(fmt.Sprintf("st-%d", i), 8, nil)
	}
	team := e.createQueue("team", 8)
	s, _ := e.start(e.config())
	e.podGroup("duo", 2, nil)
	a, b, c := inGroup(pod("duo-0", 4), "duo"), inGroup(pod("duo-1", 4), "duo"), pod("third", 4)
	a.Labels[LabelQueue], b.Labels[LabelQueue], c.Labels[LabelQueue] = team, team, team
	e.create(a, b)
	e.waitBound("duo-0", "duo-1")
	e.waitGroupCounts("duo", PhaseScheduled, 2, 0)
	e.create(c) // over the queue's quota: waits
	e.waitQueueStatus(team, 2, 1, 8, 0)

	e.markRunning("duo-0")
	e.markRunning("duo-1")
	e.waitGroupCounts("duo", PhaseRunning, 2, 2)

	// Settled: cycles go on (every 0.5 s) and write nothing more.
	before := s.status.writes.Load()
	time.Sleep(2 * time.Second)
	if after := s.status.writes.Load(); after != before {
		t.Errorf("%d status writes while nothing changed", after-before)
	}

	// One pod of the group goes away (evicted, deleted): the group's
	// status says so, and the waiting pod of the queue takes its place.
	zero := int64(0)
	if err := e.c.Client.CoreV1().Pods(e.ns).Delete(context.Background(), "duo-0", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	e.waitGroupCounts("duo", PhasePending, 1, 1)
	e.waitBound("third")
	e.waitQueueStatus(team, 2, 0, 8, 0)
	// The last one goes too: the status says none.
	if err := e.c.Client.CoreV1().Pods(e.ns).Delete(context.Background(), "duo-1", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	e.waitGroupCounts("duo", PhasePending, 0, 0)

	// A group of another scheduler's pods: its status is not corral's to
	// write.
	e.podGroup("theirs", 1, nil)
	other := inGroup(pod("other", 1), "theirs")
	other.Spec.SchedulerName = "default-scheduler"
	e.create(other)
	time.Sleep(2 * time.Second) // cycles run every 0.5 s
	obj, err := e.c.Dynamic.Resource(PodGroupResource).Namespace(e.ns).Get(context.Background(), "theirs", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st, found := obj.Object["status"]; found {
		t.Errorf("status %v written on a group of another scheduler's pods", st)
	}
}

// A queue of a cohort that holds more than its quota shows the
// difference as borrowed.
func TestQueueStatusBorrowed(t *testing.T) {
	e := newEnv(t)
	e.node("borrow-0", 8, nil)
	ctx := context.Background()
	var names []string
	for _, n := range []string{"lend", "take"} {
		obj := queueObject(e.ns+"-"+n, 4)
		obj.Object["spec"].(map[string]any)["cohort"] = e.ns
		if _, err := e.c.Dynamic.Resource(QueueResource).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.c.Dynamic.Resource(QueueResource).Delete(ctx, obj.GetName(), metav1.DeleteOptions{}) })
		names = append(names, obj.GetName())
	}
	e.start(e.config())
	p := pod("big", 6)
	p.Labels[LabelQueue] = names[1]
	e.create(p)
	e.waitBound("big")
	e.waitQueueStatus(names[1], 1, 0, 6, 2)
	e.waitQueueStatus(names[0], 0, 0, 0, 0)
}

// A Workload API gang preempted for higher-priority work gets the
// DisruptionTarget condition, as the upstream scheduler sets it.
func TestPreemptedNativeGroupIsMarkedDisrupted(t *testing.T) {
	e := newEnv(t)
	for i := range 2 {
		e.node(fmt.Sprintf("dis-%d", i), 8, nil)
	}
	cfg := e.configNoGrace()
	e.start(cfg)
	e.nativeGroup("low", "v1beta1", 2)
	lowClass := e.priorityClass("low", 1)
	var low []*corev1.Pod
	for i := range 2 {
		p := inNativeGroup(pod(fmt.Sprintf("low-%d", i), 8), "low")
		p.Spec.PriorityClassName = lowClass
		low = append(low, p)
	}
	e.create(low...)
	e.waitBound("low-0", "low-1")
	high := pod("high", 8)
	high.Spec.PriorityClassName = e.priorityClass("high", 100)
	e.create(high)
	e.waitBound("high")
	e.eventually(func() error {
		obj, err := e.c.Dynamic.Resource(NativePodGroupResource).Namespace(e.ns).Get(context.Background(), "low", metav1.GetOptions{})
		if err != nil {
			return err
		}
		conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == "DisruptionTarget" && m["status"] == "True" && m["reason"] == "PreemptionByScheduler" {
				return nil
			}
		}
		return fmt.Errorf("pod group low: conditions %v, want DisruptionTarget True", conds)
	})
}
