package kube

import (
	"testing"

	"github.com/corral-sched/corral/internal/sched"
)

func TestReasonForEveryCode(t *testing.T) {
	for code, want := range map[sched.Code]string{
		sched.CodeCapacity:      "Unschedulable",
		sched.CodeNeverFits:     "Unschedulable",
		sched.CodeNotConsidered: "Unschedulable",
		sched.CodeQuota:         "WaitingForQuota",
		sched.CodeBlocked:       "WaitingForGang",
		sched.CodeReserved:      "WaitingForReservation",
		sched.CodePreempting:    "WaitingForPreemption",
		sched.CodeInvalid:       "SchedulerError",
	} {
		if got := reasonFor(code); got != want {
			t.Errorf("reasonFor(%s) = %s, want %s", code, got, want)
		}
	}
}

// Pods that more nodes would help carry reason Unschedulable, which
// cluster-autoscaler scales up for; pods waiting for quota, for the rest
// of their gang or for evicted pods to stop carry reasons it ignores.
func TestPendingReasonsForTheAutoscaler(t *testing.T) {
	e := newEnv(t)
	e.node("why-0", 8, nil)
	e.node("why-1", 8, nil)
	q := e.createQueue("why", 8)
	lowClass, highClass := e.priorityClass("low", 1), e.priorityClass("high", 100)
	e.start(e.config())
	low := pod("low", 8)
	low.Labels[LabelQueue] = q
	low.Spec.PriorityClassName = lowClass
	e.create(low)
	e.waitBound("low")
	e.create(pod("other", 8))
	e.waitBound("other")

	over := pod("over", 8)
	over.Labels[LabelQueue] = q
	e.create(over)
	e.waitReason("over", ReasonWaitingForQuota, "over quota")
	e.podGroup("pair", 3, nil)
	e.create(inGroup(pod("pair-0", 1), "pair"), inGroup(pod("pair-1", 1), "pair"))
	e.waitReason("pair-0", ReasonWaitingForGang, "has 2 of its minMember 3 pods")
	e.create(pod("more", 8), pod("huge", 16))
	e.waitReason("more", ReasonUnschedulable, "not enough free GPU capacity")
	e.waitReason("huge", ReasonUnschedulable, "")

	// The evicted pod keeps its grace period and no kubelet ends it here:
	// the preemptor waits for it to stop.
	high := pod("high", 8)
	high.Spec.PriorityClassName = highClass
	e.create(high)
	msg := e.waitReason("high", ReasonWaitingForPreemption, "")
	t.Logf("high: %s", msg)
}
