package kube

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/corral-sched/corral/internal/sched"
)

// keptWorld is a cluster that changes between cycles as informers see
// one change: pods end, bound pods' objects are replaced by status
// updates, join a pod group or are being deleted, nodes are cordoned, pull images or get a
// new label, pods of three priorities arrive.
type keptWorld struct {
	rng     *rand.Rand
	nodes   []*corev1.Node
	bound   []*corev1.Pod
	pending []*corev1.Pod
	next    int
	relabel int // nodes relabelled: each builds the fleet again
	gpus    int // every pod's GPUs
}

func (w *keptWorld) change() {
	w.bound = slices.DeleteFunc(w.bound, func(p *corev1.Pod) bool { return p.DeletionTimestamp != nil || w.rng.IntN(6) == 0 })
	for i, p := range w.bound {
		switch w.rng.IntN(10) {
		case 0, 1:
			c := p.DeepCopy()
			c.Status.Phase = corev1.PodRunning
			w.bound[i] = c
		case 2: // a running unit of several pods, or one pod leaving it
			w.bound[i] = inGroup(p.DeepCopy(), fmt.Sprintf("g-%d", w.rng.IntN(3)))
		}
	}
	if len(w.bound) > 0 && w.rng.IntN(3) == 0 { // being deleted: it holds its GPUs until it ends, next cycle
		i := w.rng.IntN(len(w.bound))
		c := w.bound[i].DeepCopy()
		now := metav1.Now()
		c.DeletionTimestamp = &now
		w.bound[i] = c
	}
	for i, n := range w.nodes {
		c := n.DeepCopy()
		switch w.rng.IntN(120) {
		case 0, 1:
			c.Spec.Unschedulable = !c.Spec.Unschedulable
		case 2, 3:
			c.Status.Images = append(c.Status.Images, corev1.ContainerImage{Names: []string{fmt.Sprintf("registry.invalid/img:%d", w.next)}, SizeBytes: 1 << 30})
		case 4:
			c.Labels["corral.test/rack"] = fmt.Sprintf("rack-%03d", w.rng.IntN(3))
			w.relabel++
		default:
			continue
		}
		w.nodes[i] = c
	}
	for range 2 + w.rng.IntN(8) {
		p := pod(fmt.Sprintf("p-%04d", w.next), w.gpus)
		p.Namespace, p.UID = "kept", types.UID(fmt.Sprintf("u-%d", w.next))
		prio := int32(w.rng.IntN(3))
		p.Spec.Priority = &prio
		w.next++
		w.pending = append(w.pending, p)
	}
}

// stops is what a replica remembers of some bound units' preemptions.
func (w *keptWorld) stops() map[string]sched.Remembered {
	out := map[string]sched.Remembered{}
	for _, p := range w.bound {
		if w.rng.IntN(8) == 0 {
			out[unitName(p)] = sched.Remembered{Preemptions: 1 + w.rng.IntN(2)}
		}
	}
	return out
}

// bind applies a cycle's bindings.
func (w *keptWorld) bind(binds []binding) {
	for _, b := range binds {
		c := b.pod.DeepCopy()
		c.Spec.NodeName = b.node
		w.bound = append(w.bound, c)
		w.pending = slices.DeleteFunc(w.pending, func(p *corev1.Pod) bool { return p.UID == b.pod.UID })
	}
}

// TestKeptClusterDecidesAsAFreshOne runs a changing cluster through two
// snapshots every cycle, one built afresh and one kept from the cycle
// before (the scheduler's): their decisions are the same, and the kept
// one builds its fleet again only when a node changed more than its
// health or images. Each seed's pods have one shape: the kept state
// learns the mix of shapes in the order pods bound, the fresh one in
// node order, so with several shapes they may rightly differ.
func TestKeptClusterDecidesAsAFreshOne(t *testing.T) {
	cfg := Config{SchedulerName: DefaultSchedulerName, Levels: []Level{{Name: "rack", Labels: []string{"corral.test/rack"}}}}
	now := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	allPreempts := 0
	for seed := range uint64(8) {
		nodes, _ := benchCluster(24, 0, 0)
		w := &keptWorld{rng: rand.New(rand.NewPCG(seed, 9)), nodes: nodes, gpus: []int{1, 2, 4, 8}[seed%4]}
		var kept keptCluster
		classes := newPodClasses(cfg.SchedulerName)
		preempts := 0
		for cycle := range 40 {
			w.change()
			pods := append(slices.Clone(w.bound), w.pending...)
			fresh, err := takeSnapshot(&cfg, w.nodes, pods, nil, nil, testLogger())
			if err != nil {
				t.Fatal(err)
			}
			classes.setList(pods, nil)
			kept, err := takeFilteredSnapshot(&cfg, w.nodes, classes, nil, nil, &kept, testLogger())
			if err != nil {
				t.Fatal(err)
			}
			if len(fresh.pending) == 0 {
				continue
			}
			fresh.now, kept.now = now, now
			fresh.stops = w.stops() // the replica's memory of stops
			kept.stops = fresh.stops
			want := decide(fresh, buildUnits(fresh.pending, nil, fresh.members), true)
			got := decide(kept, buildUnits(kept.pending, nil, kept.members), true)
			if g, w := decisionsText(got), decisionsText(want); g != w {
				t.Fatalf("seed %d cycle %d: kept decided\n%s\nfresh decided\n%s", seed, cycle, g, w)
			}
			if !reflect.DeepEqual(boundText(kept.boundPods()), boundText(fresh.boundPods())) {
				t.Fatalf("seed %d cycle %d: the kept bound pods differ from the fresh ones", seed, cycle)
			}
			if g, w := runningText(kept), runningText(fresh); g != w {
				t.Fatalf("seed %d cycle %d: kept running units\n%s\nfresh running units\n%s", seed, cycle, g, w)
			}
			preempts += len(want.preempts)
			w.bind(want.binds)
			now = now.Add(time.Minute)
		}
		t.Logf("seed %d: %d fleets built for %d relabelled nodes in 40 cycles, %d preemptions", seed, kept.builds, w.relabel, preempts)
		allPreempts += preempts
		if kept.builds > w.relabel+1 {
			t.Errorf("seed %d: the fleet was built %d times for %d relabelled nodes: the kept cluster is rebuilt when it need not be", seed, kept.builds, w.relabel)
		}
	}
	if allPreempts == 0 {
		t.Error("no cycle preempted: the running units the core may stop are not compared")
	}
}

func decisionsText(d decisions) string {
	s := ""
	for _, b := range d.binds {
		s += fmt.Sprintf("bind %s %s\n", b.pod.Name, b.node)
	}
	for _, r := range d.rejects {
		names := ""
		for _, p := range r.pods {
			names += p.Name + " "
		}
		s += fmt.Sprintf("reject %s%s\n", names, r.message)
	}
	for _, p := range d.preempts {
		s += fmt.Sprintf("preempt for %s %d pods\n", p.unit, len(p.pods))
	}
	return s
}

func boundText(bs []boundPod) []string {
	var out []string
	for _, b := range bs {
		out = append(out, fmt.Sprintf("%s %s %d %v %s", podKey(b.pod), b.job, b.milli, b.need, b.pod.Status.Phase))
	}
	return out
}

// runningText is the core's running units of a snapshot, by name.
func runningText(snap *snapshot) string {
	running := slices.Clone(newCycleInput(snap, true).snap.Running)
	slices.SortFunc(running, func(a, b sched.Running) int { return strings.Compare(a.Name, b.Name) })
	s := ""
	for _, r := range running {
		s += fmt.Sprintf("%+v\n", r)
	}
	return s
}
