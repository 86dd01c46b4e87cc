package kube

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestPreemptionEvictsLowerPriority(t *testing.T) {
	e := newEnv(t)
	e.node("pre-0", 8, nil)
	cfg := e.configNoGrace()
	s, _ := e.start(cfg)
	low, high := pod("low", 8), pod("high", 8)
	low.Spec.PriorityClassName = e.priorityClass("low", 1)
	high.Spec.PriorityClassName = e.priorityClass("high", 100)
	e.create(low)
	e.waitBound("low")
	e.create(high)
	got := e.waitBound("high")
	if _, ok := got["low"]; ok {
		t.Errorf("low still exists: %v", got)
	}
	if st := s.Stats(); st.Evictions != 1 {
		t.Errorf("stats %+v, want one eviction", st)
	}
}

func TestPreemptionHonoursDisruptionBudget(t *testing.T) {
	e := newEnv(t)
	e.node("pdb-0", 8, nil)
	s, _ := e.start(e.config())
	low, high := pod("guarded", 8), pod("high", 8)
	low.Labels["app"] = "guarded"
	low.Spec.PriorityClassName = e.priorityClass("low", 1)
	high.Spec.PriorityClassName = e.priorityClass("high", 100)
	one := intstr.FromInt32(1)
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "guard"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "guarded"}}}}
	if _, err := e.c.Client.PolicyV1().PodDisruptionBudgets(e.ns).Create(context.Background(), pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.create(low)
	e.waitBound("guarded")
	e.markRunning("guarded") // the API server lets pending pods go whatever the budget
	e.create(high)
	e.waitUnschedulable("high", "preempting 1 lower-priority pods")
	e.eventually(func() error {
		if s.Stats().Refused == 0 {
			return fmt.Errorf("no refused eviction yet: %+v", s.Stats())
		}
		return nil
	})
	if got := e.nodesOf(); got["guarded"] != "pdb-0" || got["high"] != "" {
		t.Errorf("pods %v: the guarded pod must keep running", got)
	}
}

func TestPreemptionWaitsOutTheGracePeriod(t *testing.T) {
	e := newEnv(t)
	e.node("grace-0", 8, nil)
	cfg := e.config()
	grace := int64(600)
	cfg.PreemptionGrace = &grace
	s, _ := e.start(cfg)
	low, high := pod("slow", 8), pod("high", 8)
	low.Spec.PriorityClassName = e.priorityClass("low", 1)
	high.Spec.PriorityClassName = e.priorityClass("high", 100)
	e.create(low)
	e.waitBound("slow")
	e.create(high)
	// No kubelet runs: the victim stays terminating for its grace period,
	// and the preemptor waits rather than evicting more or binding.
	e.waitUnschedulable("high", "waiting for 1 terminating pods")
	p, err := e.c.Client.CoreV1().Pods(e.ns).Get(context.Background(), "slow", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.DeletionTimestamp == nil || p.DeletionGracePeriodSeconds == nil || *p.DeletionGracePeriodSeconds != grace {
		t.Errorf("victim deletion %v grace %v, want grace %d", p.DeletionTimestamp, p.DeletionGracePeriodSeconds, grace)
	}
	if st := s.Stats(); st.Evictions != 1 || st.Binds != 1 {
		t.Errorf("stats %+v, want one eviction and only the victim's bind", st)
	}
}

// markRunning sets a pod Running and Ready, as its kubelet would.
func (e *env) markRunning(name string) {
	e.t.Helper()
	ctx := context.Background()
	p, err := e.c.Client.CoreV1().Pods(e.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue})
	if _, err := e.c.Client.CoreV1().Pods(e.ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// A replica that did not bind a pod reads when it was bound from the
// binding's annotation, to the nanosecond, before the API server's
// scheduled condition, which keeps only the second: two units bound
// within one second keep their order across a change of leader.
func TestBoundTimeReadsTheBindingsAnnotation(t *testing.T) {
	at := time.Date(2026, 12, 2, 10, 0, 0, 250_000_000, time.UTC)
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "u1", Annotations: map[string]string{AnnotationBoundAt: at.Format(time.RFC3339Nano)}},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue,
			LastTransitionTime: metav1.NewTime(at.Truncate(time.Second))}}}}
	if got := boundTime(p, nil); !got.Equal(at) {
		t.Errorf("bound at %v, want %v from the annotation", got, at)
	}
	p.Annotations[AnnotationBoundAt] = "yesterday"
	if got := boundTime(p, nil); !got.Equal(at.Truncate(time.Second)) {
		t.Errorf("with an unreadable annotation: %v, want the scheduled condition's %v", got, at.Truncate(time.Second))
	}
	mine := at.Add(time.Hour)
	if got := boundTime(p, map[types.UID]time.Time{"u1": mine}); !got.Equal(mine) {
		t.Errorf("bound by this replica: %v, want its own %v", got, mine)
	}
}

// As deployed, with --defrag: two pods that checkpoint and have a
// controller hold half of each of two 8-GPU nodes, so an 8-GPU pod fits
// on neither until one of them ends in 20 hours. corral evicts one of
// them (its controller would start it again in the other node's free
// half) and binds the large pod on the node it left.
func TestDefragEvictsACheckpointingPodForAWholeNode(t *testing.T) {
	e := newEnv(t)
	e.node("dfg-0", 8, nil)
	e.node("dfg-1", 8, nil)
	cfg := e.configNoGrace()
	cfg.Defrag = true
	s, _ := e.start(cfg)
	yes := true
	deadline := int64(20 * 3600)
	for i, name := range []string{"small-a", "small-b"} {
		p := pod(name, 4)
		p.Spec.NodeName = fmt.Sprintf("dfg-%d", i)
		p.Spec.ActiveDeadlineSeconds = &deadline
		p.Annotations = map[string]string{AnnotationCheckpointEvery: "30m"}
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "small", UID: types.UID("small-rs"), Controller: &yes}}
		e.create(p)
	}
	e.create(pod("large", 8))
	got := e.waitBound("large")
	_, a := got["small-a"]
	_, b := got["small-b"]
	if a == b {
		t.Errorf("pods %v: exactly one small pod should have been moved", got)
	}
	if st := s.Stats(); st.Evictions != 1 {
		t.Errorf("stats %+v, want one eviction", st)
	}
}

// The hourly bound on defragmentation moves holds across a leader change:
// the moves are kept in the unit memory ConfigMap, and a new leader counts
// the old one's. Before, a new leader counted none and moved its whole
// bound again at once.
func TestLeaderChangeKeepsTheDefragBound(t *testing.T) {
	e := newEnv(t)
	cfg := e.configNoGrace()
	cfg.Defrag = true
	cfg.DefragMovesPerHour = 1
	cfg.UnitMemoryConfigMap = leaseNamespace + "/" + e.ns + "-memory"
	yes := true
	deadline := int64(20 * 3600)
	var smalls []string
	for i := range 3 {
		node, name := fmt.Sprintf("dfb-%d", i), fmt.Sprintf("small-%d", i)
		e.node(node, 8, nil)
		p := pod(name, 4)
		p.Spec.NodeName = node
		p.Spec.ActiveDeadlineSeconds = &deadline
		p.Annotations = map[string]string{AnnotationCheckpointEvery: "30m"}
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "small", UID: types.UID("small-rs"), Controller: &yes}}
		e.create(p)
		smalls = append(smalls, name)
	}
	present := func() int {
		got := e.nodesOf()
		n := 0
		for _, name := range smalls {
			if _, ok := got[name]; ok {
				n++
			}
		}
		return n
	}
	stopA := e.elected("a", cfg)
	e.waitHolder("a")
	e.create(pod("large-a", 8))
	e.waitBound("large-a") // one small pod moved: the hour's one move
	if n := present(); n != 2 {
		t.Fatalf("%d small pods left after the first move, want 2", n)
	}
	moves, err := (&memoryStore{client: e.c.Client, ns: leaseNamespace, name: e.ns + "-memory"}).loadMoves(context.Background())
	if err != nil || len(moves) != 1 {
		t.Fatalf("stored moves %v (%v), want the one move", moves, err)
	}

	stopA()
	e.elected("b", cfg)
	e.waitHolder("b")
	e.create(pod("large-b", 8))
	e.waitUnschedulable("large-b", "")
	time.Sleep(4 * cfg.Interval) // several cycles of the new leader
	if p := e.getPodOrNil("large-b"); p == nil || p.Spec.NodeName != "" {
		t.Fatalf("large-b bound to %q, want it waiting: the hour's move was made by the old leader", nodeOf(p))
	}
	if n := present(); n != 2 {
		t.Fatalf("%d small pods left, want 2: the new leader moved one more within the hour", n)
	}
}

// nodeOf is the node a pod is bound to, "(gone)" for none.
func nodeOf(p *corev1.Pod) string {
	if p == nil {
		return "(gone)"
	}
	return p.Spec.NodeName
}
