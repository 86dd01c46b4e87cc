package kube

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/corral-sched/corral/internal/faultrec"
)

func (b *lockedBuffer) faults(t *testing.T) []faultrec.Record {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []faultrec.Record
	sc := bufio.NewScanner(bytes.NewReader(b.buf.Bytes()))
	for sc.Scan() {
		if !strings.Contains(sc.Text(), `"event":"fault"`) {
			continue
		}
		var r faultrec.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("accounting line %q: %v", sc.Text(), err)
		}
		out = append(out, r)
	}
	return out
}

// stepper is a scheduler the test runs one cycle at a time.
type stepper struct {
	e   *env
	s   *Scheduler
	ctx context.Context
}

func (e *env) stepper(cfg Config) *stepper {
	e.t.Helper()
	s := e.newScheduler(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	e.t.Cleanup(cancel)
	if err := s.Start(ctx); err != nil {
		e.t.Fatal(err)
	}
	return &stepper{e: e, s: s, ctx: ctx}
}

// cycles runs n cycles, each on a cache that has caught up with the last.
func (st *stepper) cycles(n int) {
	st.e.t.Helper()
	for range n {
		time.Sleep(300 * time.Millisecond) // let the informers see the last cycle's writes
		if err := st.s.Cycle(st.ctx); err != nil {
			st.e.t.Fatal(err)
		}
	}
}

// seeNode waits until the scheduler's cache shows the node as check says.
func (st *stepper) seeNode(name string, check func(*corev1.Node) bool) {
	st.e.t.Helper()
	st.e.eventually(func() error {
		n, err := st.s.nodes.Get(name)
		if err != nil || !check(n) {
			return fmt.Errorf("node %s not yet seen changed", name)
		}
		return nil
	})
}

// livePods is name -> node of the namespace's pods not being deleted.
func (e *env) livePods() map[string]string {
	e.t.Helper()
	list, err := e.c.Client.CoreV1().Pods(e.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			out[p.Name] = p.Spec.NodeName
		}
	}
	return out
}

func (e *env) getPod(name string) *corev1.Pod {
	e.t.Helper()
	p, err := e.c.Client.CoreV1().Pods(e.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

// rackEnv: rack r1 holds a1, a2 and the spare s1, rack r2 holds b1; a
// 2-pod gang packed by rack runs on a1 and a2, and records a checkpoint
// 30 minutes after the clock's start; a preemptible pod borrows the
// spare.
func rackEnv(t *testing.T, spare bool, ann map[string]string) (*env, *stepper, *lockedBuffer, *fakeClock) {
	return rackEnvWith(t, spare, ann, nil)
}

// rackEnvWith is rackEnv with the scheduler's config changed by more.
func rackEnvWith(t *testing.T, spare bool, ann map[string]string, more func(*env, *Config)) (*env, *stepper, *lockedBuffer, *fakeClock) {
	e := newEnv(t)
	for _, n := range []struct{ name, rack string }{{"a1", "r1"}, {"a2", "r1"}, {"b1", "r2"}} {
		e.node(n.name, 8, map[string]string{"corral.test/rack": n.rack})
	}
	spareLabels := map[string]string{"corral.test/rack": "r1"}
	if spare {
		spareLabels["corral.sh/spare"] = "true"
	}
	e.node("s1", 8, spareLabels)
	clock := &fakeClock{now: time.Now()}
	acct := &lockedBuffer{}
	cfg := e.config()
	cfg.Accounting, cfg.Now = acct, clock.Now
	if more != nil {
		more(e, &cfg)
	}
	st := e.stepper(cfg)
	borrower := pod("borrower", 4)
	borrower.Annotations = map[string]string{AnnotationPreemptible: "true", AnnotationRuntime: "30m"}
	borrower.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": "s1"}
	e.create(borrower)
	st.cycles(1)
	if got := e.livePods()["borrower"]; got != "s1" {
		t.Fatalf("borrower on %q, want the spare s1", got)
	}
	groupAnn := map[string]string{AnnotationPack: "rack", AnnotationCheckpoint: "s3://ckpt/step-100",
		AnnotationCheckpointTime: clock.Now().Add(30 * time.Minute).UTC().Format(time.RFC3339)}
	for k, v := range ann {
		groupAnn[k] = v
	}
	e.podGroup("train", 2, groupAnn)
	e.create(inGroup(pod("w-0", 8), "train"), inGroup(pod("w-1", 8), "train"))
	st.cycles(1)
	got := e.livePods()
	if got["w-0"] == "" || got["w-1"] == "" || got["w-0"][0] != 'a' || got["w-1"][0] != 'a' {
		t.Fatalf("gang placed %v, want on a1 and a2", got)
	}
	return e, st, acct, clock
}

// failUnder makes the node of the pod NotReady from an hour after the
// clock's start, moves the clock 10 s past that, and waits until the
// scheduler sees the node.
func failUnder(e *env, st *stepper, clock *fakeClock, pod string) string {
	node := e.livePods()[pod]
	at := clock.Now().Add(time.Hour)
	e.setReadyAt(node, false, at)
	clock.Add(time.Hour + 10*time.Second)
	st.seeNode(node, func(n *corev1.Node) bool { _, nr := notReady(n); return nr })
	return node
}

func TestNodeNotReadyUnderRackGangMovesToSpare(t *testing.T) {
	e, st, acct, clock := rackEnv(t, true, nil)
	failed := failUnder(e, st, clock, "w-1")
	st.cycles(2)
	got := e.livePods()
	if got["w-1-r1"] != "s1" {
		t.Fatalf("pods %v: want w-1's copy w-1-r1 on the spare s1 of the same rack", got)
	}
	if _, ok := got["w-1"]; ok {
		t.Errorf("w-1 still there on the failed node %s", failed)
	}
	if got["w-0"] == "" || got["w-0"] == failed {
		t.Errorf("w-0 on %q: want it left where it ran", got["w-0"])
	}
	if _, ok := got["borrower"]; ok {
		t.Error("the preemptible pod borrowing the spare was not evicted")
	}
	if c := e.getPod("w-1-r1").Annotations[AnnotationResumeFrom]; c != "s3://ckpt/step-100" {
		t.Errorf("resume point %q", c)
	}
	recs := acct.faults(t)
	if len(recs) != 1 {
		t.Fatalf("fault records %+v, want 1", recs)
	}
	r := recs[0]
	// Both pods restart from the checkpoint, 30 min before the fault:
	// 16 GPUs x 0.5 h lost; handled 10 s after the fault.
	if r.Kind != faultrec.NodeFailure || r.Action != faultrec.Replaced || r.To != "s1" || r.Node != failed || r.GPUs != 16 {
		t.Errorf("record %+v", r)
	}
	if math.Abs(r.LostGPUHours-8) > 0.01 || math.Abs(r.RecoverySeconds-10) > 2 {
		t.Errorf("lost %.3f GPU-hours, recovered in %.1f s: want 8 and about 10", r.LostGPUHours, r.RecoverySeconds)
	}
	e.eventually(func() error { return e.groupEvent("train", EventNodeFault) })
}

// TestNodeNotReadyUnderOnePodGroupRequeuesIt: a pod group of one pod is
// a single task to the core's rule (sched.MovesOff): when its node fails
// it is queued again and placed anew, not moved to the rack's spare,
// whose borrower keeps running. Before the rule, any pod group moved.
func TestNodeNotReadyUnderOnePodGroupRequeuesIt(t *testing.T) {
	e := newEnv(t)
	for _, n := range []struct{ name, rack string }{{"a1", "r1"}, {"a2", "r1"}} {
		e.node(n.name, 8, map[string]string{"corral.test/rack": n.rack})
	}
	e.node("s1", 8, map[string]string{"corral.test/rack": "r1", "corral.sh/spare": "true"})
	clock := &fakeClock{now: time.Now()}
	acct := &lockedBuffer{}
	cfg := e.config()
	cfg.Accounting, cfg.Now = acct, clock.Now
	st := e.stepper(cfg)
	borrower := pod("borrower", 4)
	borrower.Annotations = map[string]string{AnnotationPreemptible: "true", AnnotationRuntime: "30m"}
	borrower.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": "s1"}
	e.create(borrower)
	e.podGroup("solo", 1, map[string]string{AnnotationPack: "rack"})
	e.create(inGroup(pod("only", 8), "solo"))
	st.cycles(1)
	if got := e.livePods(); got["only"] == "" || got["only"][0] != 'a' || got["borrower"] != "s1" {
		t.Fatalf("pods %v, want only on an a node and the borrower on the spare s1", got)
	}
	failed := failUnder(e, st, clock, "only")
	st.cycles(2)
	got := e.livePods()
	if to := got["only-r1"]; to == "s1" || to == failed {
		t.Errorf("only's copy on %q: want it placed anew on a healthy node, not moved to the spare", to)
	}
	if got["borrower"] != "s1" {
		t.Errorf("the borrower on the spare was stopped: pods %v", got)
	}
	recs := acct.faults(t)
	if len(recs) != 1 || recs[0].Action != faultrec.Requeued {
		t.Errorf("fault records %+v: want one requeue", recs)
	}
}

func TestNodeNotReadyWithoutSpareRequeuesWhole(t *testing.T) {
	for _, c := range []struct {
		name  string
		spare bool
		ann   map[string]string
	}{
		{"no spare", false, nil},
		{"the gang asks for requeue", true, map[string]string{AnnotationOnNodeFailure: "requeue"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, st, acct, clock := rackEnv(t, c.spare, c.ann)
			created := e.getPod("w-0").CreationTimestamp.UTC().Format(time.RFC3339)
			failUnder(e, st, clock, "w-1")
			st.cycles(2)
			got := e.livePods()
			for _, name := range []string{"w-0", "w-1"} {
				if _, ok := got[name]; ok {
					t.Errorf("%s still running: the gang must stop whole", name)
				}
				cp := e.getPod(name + "-r1")
				if cp.Spec.NodeName != "" && cp.Spec.NodeName[0] == 'a' {
					t.Errorf("%s-r1 bound to %s", name, cp.Spec.NodeName)
				}
				if cp.Annotations[AnnotationQueuedSince] != created || cp.Annotations[AnnotationResumeFrom] != "s3://ckpt/step-100" {
					t.Errorf("%s-r1 annotations %v: want queued since %s and the resume point", name, cp.Annotations, created)
				}
			}
			recs := acct.faults(t)
			if len(recs) != 1 || recs[0].Action != faultrec.Requeued || math.Abs(recs[0].LostGPUHours-8) > 0.01 {
				t.Errorf("fault records %+v: want one requeue with lost GPU-hours", recs)
			}
		})
	}
}

// TestHealthSources marks a node with each configured source of health:
// the checkpointing pod there stops (with the notice annotation when the
// node is about to go) and starts again elsewhere, and no new pod goes
// there.
func TestHealthSources(t *testing.T) {
	custom := HealthConfig{FaultConditions: []string{"ExampleGPUCheckFailed"}, NoticeLabels: []string{"example.com/draining=true"}}
	for _, c := range []struct {
		name   string
		health HealthConfig
		mark   func(n *corev1.Node)
		notice bool
	}{
		{"AWS node termination handler spot taint", HealthConfig{}, taint("aws-node-termination-handler/spot-itn"), true},
		{"Karpenter disruption taint", HealthConfig{}, taint("karpenter.sh/disrupted"), true},
		{"interruption label", HealthConfig{}, label("corral.sh/interruption", "true"), true},
		{"configured notice label", custom, label("example.com/draining", "true"), true},
		{"NVSentinel GPU condition", HealthConfig{}, condition("GpuXidError", corev1.ConditionTrue), false},
		{"GPUHealthy condition false", HealthConfig{}, condition("GPUHealthy", corev1.ConditionFalse), false},
		{"GPU fault taint", HealthConfig{}, taint("corral.sh/gpu-fault"), false},
		{"configured GPU condition", custom, condition("ExampleGPUCheckFailed", corev1.ConditionTrue), false},
		{"cordon with MoveOffCordoned", HealthConfig{MoveOffCordoned: true}, func(n *corev1.Node) { n.Spec.Unschedulable = true }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			e.node("bad", 8, nil)
			cfg := e.config()
			acct := &lockedBuffer{}
			cfg.Health, cfg.Accounting = c.health, acct
			st := e.stepper(cfg)
			p := pod("job", 1)
			p.Annotations = map[string]string{AnnotationCheckpoint: "s3://ckpt/job"}
			p.Finalizers = []string{"corral.test/keep"} // to read it once stopped
			e.create(p)
			st.cycles(1)
			if e.livePods()["job"] != "bad" {
				t.Fatal("job not placed on node bad")
			}
			e.node("good", 8, nil)
			e.markNode("bad", c.mark)
			st.seeNode("bad", func(n *corev1.Node) bool { return st.s.cfg.Health.check(n).kind != "" })
			fresh := pod("fresh", 1)
			e.create(fresh)
			st.cycles(2)
			got := e.livePods()
			if _, ok := got["job"]; ok {
				t.Error("the pod on the marked node was not stopped")
			}
			old := e.getPod("job") // kept by its finalizer
			if noticed := old.Annotations[AnnotationNotice] != ""; c.notice != noticed || old.DeletionTimestamp == nil {
				t.Errorf("stopped pod: deleted at %v, interruption notice %v, want %v", old.DeletionTimestamp, noticed, c.notice)
			}
			e.dropFinalizers("job")
			if cp := e.getPod("job-r1"); cp.Spec.NodeName == "bad" || cp.Annotations[AnnotationResumeFrom] != "s3://ckpt/job" {
				t.Errorf("the copy on %q with %v", cp.Spec.NodeName, cp.Annotations)
			}
			if got["fresh"] != "good" {
				t.Errorf("a new pod went to %q, want good", got["fresh"])
			}
			if recs := acct.faults(t); len(recs) != 1 || recs[0].Action != faultrec.Requeued || (c.notice && recs[0].LostGPUHours != 0) {
				t.Errorf("fault records %+v", recs)
			}
		})
	}
}

func taint(key string) func(*corev1.Node) {
	return func(n *corev1.Node) {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: key, Effect: corev1.TaintEffectNoSchedule})
	}
}

func label(key, value string) func(*corev1.Node) {
	return func(n *corev1.Node) { n.Labels[key] = value }
}

func condition(typ string, status corev1.ConditionStatus) func(*corev1.Node) {
	return func(n *corev1.Node) {
		n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: corev1.NodeConditionType(typ), Status: status,
			LastTransitionTime: metav1.Now()})
	}
}

// markNode changes a node's spec, labels or status with mark.
func (e *env) markNode(name string, mark func(*corev1.Node)) {
	e.t.Helper()
	ctx := context.Background()
	n, err := e.c.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	before := len(n.Status.Conditions)
	mark(n)
	if len(n.Status.Conditions) != before {
		if n, err = e.c.Client.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
			e.t.Fatal(err)
		}
		return
	}
	if _, err := e.c.Client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func TestHealthCheck(t *testing.T) {
	h := HealthConfig{}.withDefaults()
	ready := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue}
	for _, c := range []struct {
		name string
		node corev1.Node
		want string
	}{
		{"ready", corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{ready}}}, ""},
		{"no Ready condition", corev1.Node{}, FaultNotReady},
		{"cordoned", corev1.Node{Spec: corev1.NodeSpec{Unschedulable: true}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{ready}}}, FaultCordoned},
		{"GPU condition wins over a cordon", corev1.Node{Spec: corev1.NodeSpec{Unschedulable: true},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{ready, {Type: "GpuXidError", Status: corev1.ConditionTrue}}}}, FaultGPU},
		{"GPU condition false is healthy", corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{ready, {Type: "GpuXidError", Status: corev1.ConditionFalse}}}}, ""},
		{"Karpenter taint", corev1.Node{Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "karpenter.sh/disrupted", Effect: corev1.TaintEffectNoSchedule}}},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{ready}}}, FaultNotice},
	} {
		if got := h.check(&c.node).kind; got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	if got := (HealthConfig{FaultConditions: []string{}}).withDefaults().FaultConditions; len(got) != 0 {
		t.Errorf("an empty list turns a source off; got %v", got)
	}
}

func TestNextName(t *testing.T) {
	for in, want := range map[string]string{"w-1": "w-1-r1", "w-1-r1": "w-1-r2", "w-1-r9": "w-1-r10", "job-rx": "job-rx-r1"} {
		if got := nextName(in); got != want {
			t.Errorf("nextName(%q) = %q, want %q", in, got, want)
		}
	}
}

// dropFinalizers lets a stopped pod go.
func (e *env) dropFinalizers(name string) {
	e.t.Helper()
	patch := []byte(`{"metadata":{"finalizers":null}}`)
	if _, err := e.c.Client.CoreV1().Pods(e.ns).Patch(context.Background(), name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// A pod queued again after a fault keeps its place: its queued-since
// counts, not its creation.
func TestRequeuedPodKeepsItsPlace(t *testing.T) {
	now := time.Now()
	newer := pod("newer", 1)
	newer.CreationTimestamp = metav1.NewTime(now.Add(-30 * time.Minute))
	requeued := pod("job-r1", 1)
	requeued.CreationTimestamp = metav1.NewTime(now)
	requeued.Annotations = map[string]string{AnnotationQueuedSince: now.Add(-time.Hour).UTC().Format(time.RFC3339)}
	units := buildUnits([]*corev1.Pod{newer, requeued}, nil, newGroupCounts())
	if len(units) != 2 || units[0].pods[0].Name != "job-r1" {
		t.Errorf("order %s, %s: want the requeued pod first", units[0].name, units[1].name)
	}
	requeued.Annotations = nil
	if units := buildUnits([]*corev1.Pod{newer, requeued}, nil, newGroupCounts()); units[0].pods[0].Name != "newer" {
		t.Error("without the annotation the newer-created pod should be first")
	}
}

// A device the kubelet reports Unhealthy in a pod's status
// (allocatedResourcesStatus, from a device plugin or DRA driver) stops the
// pod, which starts again; the pod beside it on the node runs on.
func TestUnhealthyDeviceInPodStatus(t *testing.T) {
	e := newEnv(t)
	e.node("bad", 8, nil)
	acct := &lockedBuffer{}
	cfg := e.config()
	cfg.Accounting = acct
	st := e.stepper(cfg)
	e.create(pod("job", 1), pod("beside", 1))
	st.cycles(1)
	if got := e.livePods(); got["job"] != "bad" || got["beside"] != "bad" {
		t.Fatalf("pods %v, want both on node bad", got)
	}
	p := e.getPod("job")
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", Image: "registry.invalid/train:1",
		AllocatedResourcesStatus: []corev1.ResourceStatus{{Name: ResourceGPU,
			Resources: []corev1.ResourceHealth{{ResourceID: "GPU-8f2d", Health: corev1.ResourceHealthStatusUnhealthy}}}}}}
	p, err := e.c.Client.CoreV1().Pods(e.ns).UpdateStatus(context.Background(), p, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if unhealthyDevice(p) == "" {
		t.Fatal("the API server dropped allocatedResourcesStatus (feature ResourceHealthStatus off?)")
	}
	st.e.eventually(func() error {
		q, err := st.s.pods.Pods(e.ns).Get("job")
		if err != nil || unhealthyDevice(q) == "" {
			return fmt.Errorf("cache has not seen the device health yet")
		}
		return nil
	})
	st.cycles(2)
	got := e.livePods()
	if _, ok := got["job"]; ok || got["job-r1"] == "" || got["beside"] != "bad" {
		t.Errorf("pods %v: want job stopped and started again as job-r1, beside left running", got)
	}
	if recs := acct.faults(t); len(recs) != 1 || recs[0].Kind != faultrec.GPUFault || !strings.Contains(recs[0].Source, "GPU-8f2d") {
		t.Errorf("fault records %+v", recs)
	}
}

// The accounting log in the API server takes every kind of record, a
// fault's among them, and goes on after it: the starts of a pod and of a
// gang, the fault that moved a member to the spare, the end of a pod, and
// the start of a pod bound after the fault (a fault's key the API server
// refused wedged the log: that batch retried forever, no later record
// written).
func TestAccountingLogTakesEveryKindOfRecord(t *testing.T) {
	var at string
	e, st, _, clock := rackEnvWith(t, true, nil, func(e *env, cfg *Config) {
		at = leaseNamespace + "/" + e.ns
		cfg.AccountingConfigMaps = at
	})
	st.s.leading.Store(true)        // as Run leads: ends are recorded
	st.s.continueAccounting(st.ctx) // the log's writer, which Run starts
	failUnder(e, st, clock, "w-1")
	st.cycles(2)
	e.waitRecords(at, "fault", 1)
	e.setPhase("w-0", corev1.PodSucceeded)
	e.create(pod("after", 1))
	st.cycles(2)
	recs := e.waitRecords(at, "start", 4) // borrower, w-0, w-1 and after (w-1's copy is bound by the move)
	e.waitRecords(at, "group-start", 1)
	e.waitRecords(at, "end", 1)
	for _, r := range recs {
		if r.Event == "start" && r.Pod == e.ns+"/after" {
			return
		}
	}
	t.Fatalf("no start record of the pod bound after the fault in %+v", recs)
}

// A move to a spare goes through Kubernetes' filters as every placement
// does: a 2-pod gang whose pods select pool=a, one of its nodes
// NotReady, and the rack's spare labelled pool=b (which a kubelet would
// refuse the copy for): the member is not moved there; the gang is
// queued again whole.
func TestFaultMoveKeepsThePodsNodeSelector(t *testing.T) {
	e := newEnv(t)
	for _, n := range []string{"a1", "a2"} {
		e.node(n, 8, map[string]string{"corral.test/rack": "r1", "pool": "a"})
	}
	e.node("s1", 8, map[string]string{"corral.test/rack": "r1", "pool": "b", "corral.sh/spare": "true"})
	clock := &fakeClock{now: time.Now()}
	cfg := e.config()
	cfg.Now = clock.Now
	st := e.stepper(cfg)
	e.podGroup("train", 2, map[string]string{AnnotationPack: "rack"})
	for _, name := range []string{"w-0", "w-1"} {
		p := inGroup(pod(name, 8), "train")
		p.Spec.NodeSelector = map[string]string{"pool": "a"}
		e.create(p)
	}
	st.cycles(1)
	if got := e.livePods(); got["w-0"] == "" || got["w-1"] == "" {
		t.Fatalf("gang placed %v, want on a1 and a2", got)
	}
	failUnder(e, st, clock, "w-1")
	st.cycles(2)
	for name, node := range e.livePods() {
		if node == "s1" {
			t.Errorf("%s moved to the spare s1 of pool=b, which its nodeSelector (pool=a) refuses", name)
		}
	}
	if _, ok := e.livePods()["w-1-r1"]; !ok {
		t.Errorf("pods %v: want w-1 queued again as w-1-r1", e.livePods())
	}
}
