package kube

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/corral-sched/corral/internal/kube/kubetest"
)

// gangEnv is four 8-GPU nodes of one rack and a 4-pod gang of 8-GPU
// pods: one pod per node.
func gangEnv(t *testing.T) *env {
	e := newEnv(t)
	for i := range 4 {
		e.node(fmt.Sprintf("g-%d", i), 8, map[string]string{"corral.test/rack": "r1"})
	}
	e.podGroup("gang", 4, nil)
	for i := range 4 {
		e.create(inGroup(pod(fmt.Sprintf("m-%d", i), 8), "gang"))
	}
	return e
}

var errDead = errors.New("the leader died")

// dyingLeader runs a scheduler whose binder stops before its (k+1)-th
// binding, as a leader killed there would. stuck is closed when it
// stops; kill ends it for good (its later calls fail on a cancelled
// context, as a dead process makes none).
func (e *env) dyingLeader(k int, cfg Config) (stuck <-chan struct{}, kill func()) {
	s := e.newScheduler(cfg)
	var n atomic.Int32
	stop, dead := make(chan struct{}), make(chan struct{})
	s.beforeBind = func(binding) error {
		if int(n.Add(1)) > k {
			if n.Load() == int32(k+1) {
				close(stop)
			}
			<-dead
			return errDead
		}
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Run(ctx) }()
	var once atomic.Bool
	kill = func() {
		if once.CompareAndSwap(false, true) {
			cancel()
			close(dead)
			<-done
		}
	}
	e.t.Cleanup(kill)
	return stop, kill
}

// bound counts the live bound pods of the namespace's gang.
func (e *env) liveBound() (bound, pending int) {
	e.t.Helper()
	list, err := e.c.Client.CoreV1().Pods(e.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, p := range list.Items {
		switch {
		case p.DeletionTimestamp != nil:
		case p.Spec.NodeName != "":
			bound++
		default:
			pending++
		}
	}
	return bound, pending
}

func (e *env) intentRecorded() bool {
	e.t.Helper()
	obj, err := e.c.Dynamic.Resource(PodGroupResource).Namespace(e.ns).Get(context.Background(), "gang", metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return obj.GetAnnotations()[AnnotationIntent] != ""
}

// newLeaderCycle starts a fresh scheduler, as the replica that takes the
// lease, and runs exactly one cycle.
func (e *env) newLeaderCycle(cfg Config) *Scheduler {
	e.t.Helper()
	s := e.newScheduler(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	e.t.Cleanup(cancel)
	if err := s.Start(ctx); err != nil {
		e.t.Fatal(err)
	}
	if err := s.Cycle(ctx); err != nil {
		e.t.Fatal(err)
	}
	return s
}

// TestLeaderDiesBetweenGangBinds kills the leader after k of a 4-pod
// gang's bindings, for every k, then changes the world as the case says
// and runs one cycle of a new leader: the gang is whole or not bound at
// all, and the record is gone.
func TestLeaderDiesBetweenGangBinds(t *testing.T) {
	cases := []struct {
		name   string
		change func(e *env)
		whole  bool
	}{
		{"nothing changed", func(*env) {}, true},
		{"a pending member deleted", func(e *env) { e.deletePod(e.pendingMember()) }, false},
		{"a recorded node not ready", func(e *env) { e.setReady(e.pendingMembersNode(), false) }, false},
	}
	for _, c := range cases {
		for k := range 4 {
			t.Run(fmt.Sprintf("%s/after %d binds", c.name, k), func(t *testing.T) {
				e := gangEnv(t)
				stuck, kill := e.dyingLeader(k, e.config())
				select {
				case <-stuck:
				case <-time.After(30 * time.Second):
					t.Fatal("the binder never reached the binding to die at")
				}
				if b, _ := e.liveBound(); b != k || !e.intentRecorded() {
					t.Fatalf("before the crash: %d bound, record %v; want %d and a record", b, e.intentRecorded(), k)
				}
				kill()
				c.change(e)
				e.newLeaderCycle(e.config())
				bound, _ := e.liveBound()
				want := 0
				if c.whole {
					want = 4
				}
				if bound != want {
					t.Errorf("after one cycle of the new leader: %d pods bound, want %d", bound, want)
				}
				if e.intentRecorded() {
					t.Error("the placement record is still there")
				}
			})
		}
	}
}

// TestMemberDeletedMidBind deletes a member while the binder is between
// two bindings: the refused binding undoes the gang in the same cycle.
func TestMemberDeletedMidBind(t *testing.T) {
	e := gangEnv(t)
	s := e.newScheduler(e.config())
	var n atomic.Int32
	paused, resume := make(chan struct{}), make(chan struct{})
	var next string
	s.beforeBind = func(b binding) error {
		if n.Add(1) == 3 {
			next = b.pod.Name
			close(paused)
			<-resume
		}
		return nil
	}
	e.startScheduler(s)
	<-paused
	e.deletePod(next) // the pod the binder is about to bind
	close(resume)
	e.eventually(func() error {
		if b, _ := e.liveBound(); b != 0 || e.intentRecorded() {
			return fmt.Errorf("%d pods bound, record %v: want the gang undone", b, e.intentRecorded())
		}
		return nil
	})
	e.eventually(func() error { return e.groupEvent("gang", EventGangUndone) })
	if st := s.Stats(); st.Binds < 2 || st.Failures != 1 {
		t.Errorf("stats %+v: want the first 2 bindings made and 1 refused", st)
	}
}

func (e *env) deletePod(name string) {
	e.t.Helper()
	zero := int64(0)
	if err := e.c.Client.CoreV1().Pods(e.ns).Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		e.t.Fatal(err)
	}
}

// pendingMember names a member not yet bound.
func (e *env) pendingMember() string {
	e.t.Helper()
	for name, node := range e.nodesOf() {
		if node == "" {
			return name
		}
	}
	e.t.Fatal("no pending member")
	return ""
}

// pendingMembersNode is the node recorded for a member not yet bound.
func (e *env) pendingMembersNode() string {
	e.t.Helper()
	obj, err := e.c.Dynamic.Resource(PodGroupResource).Namespace(e.ns).Get(context.Background(), "gang", metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	in, err := readIntent(obj)
	if err != nil || in == nil {
		e.t.Fatalf("record: %v %v", in, err)
	}
	nodes := e.nodesOf()
	for _, m := range in.Members {
		if nodes[m.Pod] == "" {
			return m.Node
		}
	}
	e.t.Fatal("every recorded member is bound")
	return ""
}

// setReady sets the node's Ready condition.
func (e *env) setReady(name string, ready bool) { e.t.Helper(); e.setReadyAt(name, ready, time.Now()) }

// setReadyAt sets the node's Ready condition, changed at.
func (e *env) setReadyAt(name string, ready bool, at time.Time) {
	e.t.Helper()
	ctx := context.Background()
	n, err := e.c.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	status := corev1.ConditionTrue
	if !ready {
		status = corev1.ConditionFalse
	}
	found := false
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == corev1.NodeReady {
			n.Status.Conditions[i].Status, n.Status.Conditions[i].LastTransitionTime = status, metav1.NewTime(at)
			found = true
		}
	}
	if !found {
		n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: corev1.NodeReady, Status: status, LastTransitionTime: metav1.NewTime(at)})
	}
	if _, err := e.c.Client.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// groupEvent checks for an event of reason on the PodGroup.
func (e *env) groupEvent(group, reason string) error {
	evs, err := e.c.Client.CoreV1().Events(e.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, ev := range evs.Items {
		if ev.InvolvedObject.Kind == "PodGroup" && ev.InvolvedObject.Name == group && ev.Reason == reason {
			return nil
		}
	}
	return fmt.Errorf("no %s event on pod group %s", reason, group)
}

// A gang of time-sliced shares whose leader dies after binding two of
// its four pods: the new leader finishes the recorded placement, and each
// pod it binds names the GPU the dead leader counted it on, as the pods
// bound before the crash do, so that every replica counts the shares on
// the GPUs they were placed on.
func TestRecoveredGangOfSharesNamesTheirGPUs(t *testing.T) {
	e := newEnv(t)
	e.nodeSpec(kubetest.Node{Name: "sg-0", Labels: map[string]string{
		kubetest.LabelProduct: "NVIDIA-L4", kubetest.LabelCount: "2", kubetest.LabelReplicas: "4"},
		Resources: map[string]string{"nvidia.com/gpu.shared": "8"}})
	e.podGroup("gang", 4, nil)
	for i := range 4 {
		e.create(inGroup(resPod(fmt.Sprintf("m-%d", i), "nvidia.com/gpu.shared", 2), "gang"))
	}
	stuck, kill := e.dyingLeader(2, e.config())
	select {
	case <-stuck:
	case <-time.After(30 * time.Second):
		t.Fatal("the binder never reached the binding to die at")
	}
	kill()
	e.newLeaderCycle(e.config())
	on := map[string]int{}
	for i := range 4 {
		p, err := e.c.Client.CoreV1().Pods(e.ns).Get(context.Background(), fmt.Sprintf("m-%d", i), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Spec.NodeName == "" {
			t.Fatalf("%s is not bound after the new leader's cycle", p.Name)
		}
		on[p.Annotations[AnnotationShareGPU]]++
	}
	if on["0"] != 2 || on["1"] != 2 {
		t.Errorf("shares by GPU %v, want two on GPU 0 and two on GPU 1", on)
	}
}
