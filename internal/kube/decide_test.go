package kube

import (
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/corral-sched/corral/internal/sched"
)

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// fakePod is a pod for the pure tests: uid = name, created at minute.
func fakePod(name string, gpus int, minute int) *corev1.Pod {
	p := pod(name, gpus)
	p.Namespace = "ns"
	p.UID = types.UID(name)
	p.CreationTimestamp = metav1.NewTime(time.Date(2026, 1, 1, 0, minute, 0, 0, time.UTC))
	return p
}

func h100Nodes(n int) []*corev1.Node {
	var out []*corev1.Node
	for i := range n {
		out = append(out, kubeNode(fmt.Sprintf("n%d", i), map[string]string{LabelProduct: "H100-80GB", LabelCount: "8"},
			map[string]string{"nvidia.com/gpu": "8"}))
	}
	return out
}

// runDecide takes a snapshot and decides, returning "pod->node" lines and
// "pod: message" lines.
func runDecide(t *testing.T, nodes []*corev1.Node, pods []*corev1.Pod, groups map[string]*podGroup) ([]string, []string) {
	return runDecideQueues(t, nodes, pods, groups, nil)
}

func runDecideQueues(t *testing.T, nodes []*corev1.Node, pods []*corev1.Pod, groups map[string]*podGroup, queues map[string]*queueSpec) ([]string, []string) {
	t.Helper()
	cfg := (&Config{}).withDefaults()
	snap, err := takeSnapshot(&cfg, nodes, pods, queues, nil, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	d := decide(snap, buildUnits(snap.pending, groups, snap.members), false)
	var b, r []string
	for _, x := range d.binds {
		b = append(b, x.pod.Name+"->"+x.node)
	}
	for _, x := range d.rejects {
		for _, p := range x.pods {
			r = append(r, p.Name+": "+x.message)
		}
	}
	return b, r
}

func TestDecideKeepsBoundPodsInPlace(t *testing.T) {
	bound := fakePod("bound", 6, 0)
	bound.Spec.NodeName = "n1"
	other := fakePod("other", 8, 0)
	other.Spec.NodeName = "n0"
	other.Spec.SchedulerName = "default-scheduler"
	binds, rejects := runDecide(t, h100Nodes(2), []*corev1.Pod{bound, other, fakePod("two", 2, 1), fakePod("three", 3, 2)}, nil)
	if want := []string{"two->n1"}; !reflect.DeepEqual(binds, want) {
		t.Errorf("binds %v, want %v", binds, want)
	}
	if len(rejects) != 1 || !strings.HasPrefix(rejects[0], "three: ") {
		t.Errorf("rejects %v, want three pending", rejects)
	}
}

func TestDecideOrder(t *testing.T) {
	hi := fakePod("hi", 8, 5)
	p := int32(10)
	hi.Spec.Priority = &p
	pods := []*corev1.Pod{fakePod("b-old", 8, 1), fakePod("a-new", 8, 3), fakePod("c-old", 8, 1), hi}
	binds, _ := runDecide(t, h100Nodes(3), pods, nil)
	if want := []string{"hi->n0", "b-old->n1", "c-old->n2"}; !reflect.DeepEqual(binds, want) {
		t.Errorf("binds %v, want %v (priority, then age, then name)", binds, want)
	}
}

func TestDecideGangAllOrNothing(t *testing.T) {
	groups := map[string]*podGroup{"ns/g": {Namespace: "ns", Name: "g", MinMember: 3}}
	var pods []*corev1.Pod
	for i := range 3 {
		pods = append(pods, inGroup(fakePod(fmt.Sprintf("g-%d", i), 8, 0), "g"))
	}
	binds, rejects := runDecide(t, h100Nodes(2), pods, groups)
	if len(binds) != 0 || len(rejects) != 3 {
		t.Fatalf("binds %v rejects %v, want none bound", binds, rejects)
	}
	binds, _ = runDecide(t, h100Nodes(3), pods, groups)
	if len(binds) != 3 {
		t.Errorf("binds %v, want all three", binds)
	}
}

func TestDecideMixedGroupShapes(t *testing.T) {
	groups := map[string]*podGroup{"ns/mpi": {Namespace: "ns", Name: "mpi", MinMember: 3}}
	launcher := inGroup(fakePod("mpi-launcher", 0, 0), "mpi")
	pods := []*corev1.Pod{launcher, inGroup(fakePod("mpi-w0", 8, 0), "mpi"), inGroup(fakePod("mpi-w1", 8, 0), "mpi")}
	binds, rejects := runDecide(t, h100Nodes(2), pods, groups)
	if len(binds) != 3 || len(rejects) != 0 {
		t.Errorf("binds %v rejects %v, want all three", binds, rejects)
	}
}

func TestDemand(t *testing.T) {
	p := podWith("x", corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("1500m"),
		corev1.ResourceMemory: resource.MustParse("3Gi"),
		ResourceShared:        resource.MustParse("2"),
	})
	d, err := demand(p)
	if err != nil || d.Shares != 2 || d.CPUMilli != 1500 || d.MemoryMiB != 3072 {
		t.Errorf("demand %+v, %v", d, err)
	}
	two := podWith("y", corev1.ResourceList{"nvidia.com/mig-1g.10gb": resource.MustParse("2")})
	if _, err := demand(two); err == nil || !strings.Contains(err.Error(), "one MIG instance per pod") {
		t.Errorf("two MIG instances: %v", err)
	}
}

func TestDecideQueueQuota(t *testing.T) {
	queues := map[string]*queueSpec{"team": {Name: "team", GPUs: 10}, "open": {Name: "open", GPUs: -1}}
	inQueue := func(p *corev1.Pod, q string) *corev1.Pod { p.Labels[LabelQueue] = q; return p }
	running := inQueue(fakePod("running", 4, 0), "team")
	running.Spec.NodeName = "n0"
	pods := []*corev1.Pod{running,
		inQueue(fakePod("fits", 4, 1), "team"),    // 8 of 10
		inQueue(fakePod("over", 4, 2), "team"),    // 12 of 10: waits
		inQueue(fakePod("small", 2, 3), "team"),   // 10 of 10
		inQueue(fakePod("free", 8, 4), "open"),    // no limit
		inQueue(fakePod("lost", 1, 5), "missing"), // no such queue
	}
	binds, rejects := runDecideQueues(t, h100Nodes(3), pods, nil, queues)
	// Queues go in fair-share order (equal here, so by name: open, then
	// team), each queue's pods by priority, then age.
	if want := []string{"free->n1", "fits->n0", "small->n2"}; !reflect.DeepEqual(binds, want) {
		t.Errorf("binds %v, want %v", binds, want)
	}
	if len(rejects) != 2 || !strings.Contains(rejects[0], `over: over quota: queue "team" has room for 2 GPUs of its 10; this needs 4`) || !strings.Contains(rejects[1], `queue "missing" does not exist`) {
		t.Errorf("rejects %v", rejects)
	}
}

func TestDecidePreemptsFewestLowerPriority(t *testing.T) {
	prio := func(p *corev1.Pod, v int32) *corev1.Pod { p.Spec.Priority = &v; return p }
	on := func(p *corev1.Pod, node string) *corev1.Pod { p.Spec.NodeName = node; return p }
	pods := []*corev1.Pod{
		on(prio(fakePod("low-a", 8, 0), 1), "n0"),
		on(prio(fakePod("low-b", 4, 1), 1), "n1"),
		on(prio(fakePod("mid-c", 4, 0), 5), "n1"),
		prio(fakePod("high", 8, 2), 10),
		prio(fakePod("peer", 8, 3), 1), // no preemption among equals
	}
	cfg := (&Config{}).withDefaults()
	snap, err := takeSnapshot(&cfg, h100Nodes(2), pods, nil, nil, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	d := decide(snap, buildUnits(snap.pending, nil, snap.members), true)
	if len(d.binds) != 0 || len(d.preempts) != 1 {
		t.Fatalf("binds %v preempts %v, want one preemption", d.binds, d.preempts)
	}
	var victims []string
	for _, p := range d.preempts[0].pods {
		victims = append(victims, p.Name)
	}
	if !reflect.DeepEqual(victims, []string{"low-a"}) {
		t.Errorf("victims %v, want [low-a]: the one pod whose node then fits", victims)
	}
	if msg := d.rejects[0].message; !strings.Contains(msg, "preempting 1 lower-priority pods (ns/low-a)") {
		t.Errorf("message %q", msg)
	}
	// Once the victim is terminating, nothing more is evicted.
	now := metav1.Now()
	pods[0].DeletionTimestamp = &now
	snap, _ = takeSnapshot(&cfg, h100Nodes(2), pods, nil, nil, quietLog())
	d = decide(snap, buildUnits(snap.pending, nil, snap.members), true)
	if len(d.preempts) != 0 || !strings.Contains(d.rejects[0].message, "waiting for 1 terminating pods") {
		t.Errorf("preempts %v rejects %v, want a wait", d.preempts, d.rejects)
	}
}

// The lister returns pods in no particular order: decisions must not
// depend on it.
func TestDecideIgnoresInputOrder(t *testing.T) {
	groups := map[string]*podGroup{"ns/g": {Namespace: "ns", Name: "g", MinMember: 3}}
	var pods []*corev1.Pod
	for i := range 12 {
		p := fakePod(fmt.Sprintf("p%02d", i), 1+i%4, i%3)
		if i%5 == 0 {
			p.Spec.NodeName = fmt.Sprintf("n%d", i%4)
		}
		pods = append(pods, p)
	}
	for i := range 3 {
		pods = append(pods, inGroup(fakePod(fmt.Sprintf("g-%d", i), 4, 1), "g"))
	}
	wantB, wantR := runDecide(t, h100Nodes(4), pods, groups)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		shuffled := slices.Clone(pods)
		rng.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
		nodes := h100Nodes(4)
		rng.Shuffle(len(nodes), func(a, b int) { nodes[a], nodes[b] = nodes[b], nodes[a] })
		gotB, gotR := runDecide(t, nodes, shuffled, groups)
		if !reflect.DeepEqual(gotB, wantB) || !reflect.DeepEqual(gotR, wantR) {
			t.Fatalf("shuffled input: binds %v rejects %v, want %v %v", gotB, gotR, wantB, wantR)
		}
	}
}

func TestDecideNodeSelector(t *testing.T) {
	nodes := h100Nodes(2)
	nodes[1].Labels["pool"] = "b"
	first := fakePod("first", 4, 0)
	first.Spec.NodeName = "n0"
	picky := fakePod("picky", 1, 1)
	picky.Spec.NodeSelector = map[string]string{"pool": "b"}
	binds, rejects := runDecide(t, nodes, []*corev1.Pod{first, picky, fakePod("free", 1, 2)}, nil)
	// free has no selector: the packing policy puts it beside picky on n1,
	// where one more 4-GPU pod still fits, rather than on n0's last four.
	if want := []string{"picky->n1", "free->n1"}; !reflect.DeepEqual(binds, want) || len(rejects) != 0 {
		t.Errorf("binds %v rejects %v, want %v", binds, rejects, want)
	}
}

// Queues of a cohort lend each other what they do not use, within each
// borrower's limit.
func TestDecideCohortBorrowing(t *testing.T) {
	queues := map[string]*queueSpec{
		"a": {Name: "a", GPUs: 8, Cohort: "lab", Borrow: -1},
		"b": {Name: "b", GPUs: 0, Cohort: "lab", Borrow: 4},
		"c": {Name: "c", GPUs: 0, Borrow: -1}, // no cohort: nothing to borrow
	}
	inQueue := func(p *corev1.Pod, q string) *corev1.Pod { p.Labels[LabelQueue] = q; return p }
	pods := []*corev1.Pod{
		inQueue(fakePod("b1", 4, 0), "b"), // borrows 4 of a's 8
		inQueue(fakePod("b2", 4, 1), "b"), // would borrow 8: over b's limit
		inQueue(fakePod("a1", 4, 2), "a"), // a's own 4 left
		inQueue(fakePod("c1", 1, 3), "c"), // no quota, no cohort
	}
	binds, rejects := runDecideQueues(t, h100Nodes(3), pods, nil, queues)
	if len(binds) != 2 || !strings.HasPrefix(binds[0], "a1->") || !strings.HasPrefix(binds[1], "b1->") {
		t.Errorf("binds %v, want a1, then b1 (borrowing; queues in fair-share order)", binds)
	}
	if len(rejects) != 2 || !strings.Contains(rejects[0], "b2: over quota") || !strings.Contains(rejects[1], "c1: over quota") {
		t.Errorf("rejects %v", rejects)
	}
}

// A queue within its own quota takes back what its cohort borrowed, once
// it has waited the reclaim patience: the youngest borrowing pods are
// evicted, just enough of them; a queue asking beyond its own quota takes
// nothing.
func TestDecideReclaimsLentQuota(t *testing.T) {
	queues := map[string]*queueSpec{
		"owner":    {Name: "owner", GPUs: 8, Cohort: "lab", Borrow: -1},
		"borrower": {Name: "borrower", GPUs: 8, Cohort: "lab", Borrow: -1},
	}
	inQueue := func(p *corev1.Pod, q, node string) *corev1.Pod {
		p.Labels[LabelQueue] = q
		p.Spec.NodeName = node
		return p
	}
	pods := []*corev1.Pod{
		// borrower holds 16: its own 8 and the owner's 8.
		inQueue(fakePod("old", 8, 0), "borrower", "n0"),
		inQueue(fakePod("young-a", 4, 5), "borrower", "n1"),
		inQueue(fakePod("young-b", 4, 6), "borrower", "n1"),
		inQueue(fakePod("mine", 4, 10), "owner", ""),
	}
	cfg := (&Config{}).withDefaults()
	// mine queued at minute 10: within the default patience it waits for
	// room to appear by itself; after it, it takes its quota back.
	decideAt := func(minutes int) decisions {
		t.Helper()
		snap, err := takeSnapshot(&cfg, h100Nodes(3), pods, queues, nil, quietLog())
		if err != nil {
			t.Fatal(err)
		}
		snap.now = time.Date(2026, 1, 1, 0, minutes, 0, 0, time.UTC)
		return decide(snap, buildUnits(snap.pending, nil, snap.members), true)
	}
	d := decideAt(10 + 59)
	if len(d.preempts) != 0 {
		t.Fatalf("preemptions %+v within the reclaim patience (%v)", d.preempts, sched.DefaultReclaimPatience)
	}
	if want := `over quota: queue "owner" has room for 0 GPUs of its 8; this needs 4; 8 of its GPUs are lent to cohort lab, borrowed by queue borrower; ` +
		`corral evicts their pods to take them back at 2026-01-01T01:10:00Z, once this has waited the reclaim patience (1h0m0s, --reclaim-patience)`; len(d.rejects) != 1 || !strings.Contains(d.rejects[0].message, want) {
		t.Errorf("rejects %+v within the patience, want the borrowers and the time named: %q", d.rejects, want)
	}
	d = decideAt(10 + 61)
	if len(d.preempts) != 1 || len(d.preempts[0].pods) != 1 || d.preempts[0].pods[0].Name != "young-b" {
		t.Fatalf("preemptions %+v, want young-b alone (the youngest borrowing pod, enough for 4 GPUs)", d.preempts)
	}
	if len(d.rejects) != 1 || !strings.Contains(d.rejects[0].message, "reclaiming the quota queue owner lent to cohort lab") {
		t.Errorf("rejects %+v", d.rejects)
	}
	// Beyond its own 8 (6 running, 4 more asked), the owner reclaims
	// nothing from a borrower of 2, though there is room to place it.
	pods = []*corev1.Pod{
		inQueue(fakePod("old", 8, 0), "borrower", "n0"),
		inQueue(fakePod("young-a", 2, 5), "borrower", "n1"),
		inQueue(fakePod("running", 6, 1), "owner", "n2"),
		inQueue(fakePod("greedy", 4, 10), "owner", ""),
	}
	snap, err := takeSnapshot(&cfg, h100Nodes(4), pods, queues, nil, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	d = decide(snap, buildUnits(snap.pending, nil, snap.members), true)
	if len(d.preempts) != 0 || len(d.rejects) != 1 || !strings.Contains(d.rejects[0].message, "over quota") {
		t.Errorf("a queue asking beyond its quota: preemptions %+v, rejects %+v", d.preempts, d.rejects)
	}
}

// A waiting gang's reservation comes back from decide for the core's
// memory, and the hint it leaves (how many running units it released)
// changes nothing when handed to the next cycle.
func TestDecideReportsReservationsAndTakesHints(t *testing.T) {
	nodes := h100Nodes(2)
	pods := []*corev1.Pod{}
	for i, n := range nodes {
		p := fakePod(fmt.Sprintf("small-%d", i), 1, 0)
		p.Spec.NodeName = n.Name
		pods = append(pods, p)
	}
	groups := map[string]*podGroup{"ns/g": {Namespace: "ns", Name: "g", MinMember: 2}}
	for i := range 2 {
		pods = append(pods, inGroup(fakePod(fmt.Sprintf("g-%d", i), 8, 1), "g"))
	}
	cfg := (&Config{}).withDefaults()
	run := func(hints map[string]int) decisions {
		snap, err := takeSnapshot(&cfg, nodes, pods, nil, nil, quietLog())
		if err != nil {
			t.Fatal(err)
		}
		snap.hints = hints
		return decide(snap, buildUnits(snap.pending, groups, snap.members), false)
	}
	first := run(nil)
	if len(first.reserved) != 1 || first.reserved[0].Unit != "group ns/g" || len(first.reserved[0].Releasing) != 2 {
		t.Fatalf("reserved %+v; want the gang's reservation, releasing both small pods", first.reserved)
	}
	again := run(map[string]int{"group ns/g": len(first.reserved[0].Releasing)})
	if fmt.Sprint(again.reserved) != fmt.Sprint(first.reserved) || fmt.Sprint(again.rejects) != fmt.Sprint(first.rejects) {
		t.Errorf("with the hint: reserved %+v, rejects %+v; want what the first cycle said: %+v, %+v", again.reserved, again.rejects, first.reserved, first.rejects)
	}
}
