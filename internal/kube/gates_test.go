package kube

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A pod with scheduling gates is never placed and holds nothing: a later
// pod takes the only node; the gated pod keeps the API server's
// SchedulingGated condition; once ungated, it starts.
func TestGatedPodHoldsNothingAndStartsWhenUngated(t *testing.T) {
	e := newEnv(t)
	e.node("gate-0", 8, nil)
	s, _ := e.start(e.config())
	e.create(gate(pod("gated", 8)))
	time.Sleep(50 * time.Millisecond) // the gated pod is the older one
	e.create(pod("free", 8))
	e.waitBound("free")
	time.Sleep(3 * e.config().Interval) // a few more cycles see the gated pod
	node, c := e.scheduledCondition("gated")
	if node != "" || c.Reason != ReasonSchedulingGated {
		t.Errorf("gated pod: node %q, PodScheduled %s %q; want unbound and still SchedulingGated", node, c.Reason, c.Message)
	}
	if st := s.Stats(); st.Failures != 0 || st.Binds != 1 {
		t.Errorf("stats %+v: want one binding and no failed one (gated pods are never bound)", st)
	}
	zero := int64(0)
	if err := e.c.Client.CoreV1().Pods(e.ns).Delete(context.Background(), "free", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	e.ungate("gated")
	e.waitBound("gated")
}

// A gated pod of a pod group counts as a missing member: the group waits
// whole, saying so with a reason the autoscaler does not read as missing
// capacity, and starts whole once the pod is ungated.
func TestGangWithGatedMemberWaitsUntilUngated(t *testing.T) {
	e := newEnv(t)
	e.node("gang-gate-0", 8, nil)
	e.node("gang-gate-1", 8, nil)
	e.start(e.config())
	e.podGroup("trio", 3, nil)
	e.create(inGroup(pod("trio-0", 4), "trio"), inGroup(pod("trio-1", 4), "trio"), gate(inGroup(pod("trio-2", 4), "trio")))
	msg := e.waitReason("trio-0", ReasonWaitingForGang, "has 2 of its minMember 3 pods (1 more with scheduling gates)")
	t.Logf("trio-0: %s", msg)
	e.waitReason("trio-1", ReasonWaitingForGang, "1 more with scheduling gates")
	for name, node := range e.nodesOf() {
		if node != "" {
			t.Fatalf("%s bound to %s while its group lacks a member", name, node)
		}
	}
	if _, c := e.scheduledCondition("trio-2"); c.Reason != ReasonSchedulingGated {
		t.Errorf("trio-2: PodScheduled %s %q, want SchedulingGated left alone", c.Reason, c.Message)
	}
	e.ungate("trio-2")
	e.waitBound("trio-0", "trio-1", "trio-2")
	e.waitGroupStatus("trio", PhaseScheduled, 3)
}
