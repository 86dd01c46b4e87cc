package kube

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A 32-GPU gang that does not fit holds a reservation: while 1-GPU pods
// keep arriving, none takes the room it waits for, and it starts whole as
// soon as the pods its reservation names are gone.
func TestGangReservationHoldsWhileSmallPodsArrive(t *testing.T) {
	e := newEnv(t)
	for i := range 5 {
		e.node(fmt.Sprintf("resv-%d", i), 8, map[string]string{"slot": fmt.Sprint(i)})
	}
	e.start(e.config())
	// One old 1-GPU pod per node, so that no node is free for a gang task.
	for i := range 5 {
		old := pod(fmt.Sprintf("old-%d", i), 1)
		old.Spec.NodeSelector = map[string]string{"slot": fmt.Sprint(i)}
		e.create(old)
		e.waitBound(old.Name)
	}
	e.podGroup("big", 4, nil)
	for i := range 4 {
		e.create(inGroup(pod(fmt.Sprintf("big-%d", i), 8), "big"))
	}
	msg := e.waitUnschedulable("big-0", "reserved to start")
	t.Logf("gang: %s", msg)

	// Small pods arrive for a while; the gang's reserved nodes stay free.
	reserved := map[string]bool{"resv-0": true, "resv-1": true, "resv-2": true, "resv-3": true}
	for k := range 6 {
		e.create(pod(fmt.Sprintf("new-%d", k), 1))
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	backfilled := 0
	for name, node := range e.nodesOf() {
		if name[:3] != "new" || node == "" {
			continue
		}
		if reserved[node] {
			t.Fatalf("%s bound to %s, a node the gang's reservation holds", name, node)
		}
		backfilled++
	}
	if backfilled != 6 {
		t.Errorf("%d of the 6 small pods bound beside the reservation, want all on resv-4", backfilled)
	}
	// The pods the reservation waits for end: the gang starts whole there.
	now := int64(0) // no kubelet here to confirm a graceful deletion
	for i := range 4 {
		if err := e.c.Client.CoreV1().Pods(e.ns).Delete(context.Background(), fmt.Sprintf("old-%d", i), metav1.DeleteOptions{GracePeriodSeconds: &now}); err != nil {
			t.Fatal(err)
		}
	}
	got := e.waitBound("big-0", "big-1", "big-2", "big-3")
	for i := range 4 {
		if node := got[fmt.Sprintf("big-%d", i)]; !reserved[node] {
			t.Errorf("big-%d on %s, want one of the reserved nodes", i, node)
		}
	}
}
