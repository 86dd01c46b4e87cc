package kube

import (
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/queue"
	"github.com/corral-sched/corral/internal/sched"
)

// snapshot is the cluster as one cycle sees it: the core's state with
// every bound pod in place, and the pods still to place.
type snapshot struct {
	state   *gang.State
	nodes   int              // nodes in the fleet
	skipped map[string]error // nodes left out of the fleet, and why
	taints  []corev1.Taint   // every taint in the cluster
	pending []*corev1.Pod
	// members counts the bound and the gated pods of each pod group.
	members groupCounts
	// gated are corral's pods that carry spec.schedulingGates: never
	// placed, holding nothing, their SchedulingGated condition left alone.
	gated []*corev1.Pod
	// described are the GPU nodes whose model the catalog lacks, described
	// from their labels, and how.
	described map[string]string
	bound     []boundPod // in node, then pod order; nil when kept (boundPods)
	// kept is the cluster kept from cycle to cycle, and units its running
	// units; nil when the snapshot is built afresh (decide then groups
	// bound into units).
	kept   *keptCluster
	units  *keptUnits
	queues map[string]*queueSpec
	// budgets are the queues' budgets (spec.budget) and spent what their
	// ended pods used in each budget's current period.
	budgets   map[string]sched.Budget
	spent     map[string]float64
	scheduler string // the scheduler name: only its pods are preempted
	// reclaimPatience is Config.ReclaimPatience.
	reclaimPatience time.Duration
	// reservations is Config.Reservations.
	reservations int
	// defrag is what the cycle may move (Config.Defrag, less this hour's
	// moves); nil: off.
	defrag *sched.Defrag
	// boundAt is when this replica bound the pods it knows it bound.
	boundAt map[types.UID]time.Time
	// nodeCaps are units whose pods a node took only so many of, in an
	// earlier cycle's check by the filter plugins (refusals.go).
	nodeCaps map[string]int
	// stops is what this replica remembers of the units it preempted,
	// by unit name.
	stops map[string]sched.Remembered
	// hints are how many running units each unit's reservation released
	// in the last cycle that gave it one (sched.Unit.ReserveHint).
	hints   map[string]int
	book    *queue.Book // quota in use per queue, learnt afresh
	specs   []queue.Spec
	charger sched.Charger // how the queues count pods (chargerFor)
	// ledger, when set, is the scheduler's quota book kept across cycles
	// (fair share remembers past use); book is then not used. now is the
	// cycle's time.
	ledger    *sched.Ledger
	now       time.Time
	selectors []selector // the pending pods' node selectors
	// filter is the verdicts of Kubernetes' filter plugins on the pending
	// pods; nil when they are not run.
	filter *filtering
}

// boundPods is every bound pod, in node, then pod order.
func (snap *snapshot) boundPods() []boundPod {
	if snap.kept != nil {
		return snap.kept.boundList()
	}
	return snap.bound
}

// filterFunc runs the filter plugins for the pending pods, given the pods
// on nodes (those assumed bound with their node set).
type filterFunc func(classes *podClasses, pending []*corev1.Pod) *filtering

// boundPod is a pod running on a node, as the core holds it.
type boundPod struct {
	pod   *corev1.Pod
	job   string        // its job in the core's state
	milli int64         // GPU it holds, in milli-GPUs
	need  queue.Amounts // what it charges its queue: its GPUs, CPU and memory
	podFacts
}

// podFacts are what a cycle reads of a bound pod's object, read once per
// object: a cycle then walks the bound pods without reading each object
// again.
type podFacts struct {
	unit      string // the unit it was placed as (unitName)
	queue     string // its Queue label
	scheduler string
	priority  int32
	created   metav1.Time
	// recorded is when the object says the pod was bound (boundTime
	// without this replica's memory).
	recorded time.Time
	stopping bool          // it has a deletion timestamp
	deadline time.Duration // its activeDeadlineSeconds; 0 for none
	// checkpointEvery is its AnnotationCheckpointEvery; 0 for none or for
	// a pod no controller owns (nothing would start it again if moved).
	// checkpointAt is its AnnotationCheckpointTime; zero for none.
	checkpointEvery time.Duration
	checkpointAt    time.Time
}

func factsOf(p *corev1.Pod) podFacts {
	return podFacts{unit: unitName(p), queue: p.Labels[LabelQueue], scheduler: p.Spec.SchedulerName, priority: podPriority(p),
		created: p.CreationTimestamp, recorded: boundTime(p, nil), stopping: p.DeletionTimestamp != nil, deadline: podDeadline(p),
		checkpointEvery: checkpointEvery(p), checkpointAt: podCheckpoint(p)}
}

// boundTime is boundTime of the pod, its object read once (recorded).
func (b *boundPod) boundTime(boundAt map[types.UID]time.Time) time.Time {
	if at, ok := boundAt[b.pod.UID]; ok {
		return at
	}
	return b.recorded
}

// takeSnapshot builds the core state from nodes and pods, unless no pod
// waits. Pods in assumed (uid -> node) were bound by this scheduler and
// count as bound even if the cache does not show it yet.
func takeSnapshot(cfg *Config, nodes []*corev1.Node, pods []*corev1.Pod, queues map[string]*queueSpec, assumed map[string]string, log *slog.Logger) (*snapshot, error) {
	return takeFilteredSnapshot(cfg, nodes, classesOf(cfg.SchedulerName, pods, assumed), queues, nil, nil, log)
}

// takeFilteredSnapshot is takeSnapshot of the pods as classed, with the
// filter plugins run, when filter is not nil, on the pending pods, and
// the fleet and bound pods kept from the last cycle when kept is not nil:
// then only the bound pods changed since (classes.changed) are looked at.
func takeFilteredSnapshot(cfg *Config, nodes []*corev1.Node, classes *podClasses, queues map[string]*queueSpec,
	filter filterFunc, kept *keptCluster, log *slog.Logger) (*snapshot, error) {
	snap := &snapshot{taints: clusterTaints(nodes), members: classes.members, queues: queues, scheduler: cfg.SchedulerName,
		reclaimPatience: cfg.ReclaimPatience, reservations: cfg.Reservations}
	snap.pending, snap.gated = classes.pendingPods(), classes.gatedPods()
	if len(snap.pending) == 0 {
		return snap, nil // nothing to place: no state needed
	}
	snap.selectors = nodeSelectors(snap.pending)
	extra := selectorTaints(nodes, snap.selectors)
	if filter != nil {
		snap.filter = filter(classes, snap.pending)
		snap.filter.addTaints(extra)
	}
	snap.charger = chargerFor(queues)
	st, skipped, described, bound, err := kept.fleetOf(nodes, cfg, extra, classes, snap.charger, log)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	f := st.Fleet()
	snap.specs = queueSpecs(queues, fleetGPUs(f), f.GPUModels())
	book, err := queue.NewBook(snap.specs, 0)
	if err != nil {
		return nil, fmt.Errorf("snapshot: queues: %w", err)
	}
	snap.state, snap.nodes, snap.skipped, snap.described, snap.book, snap.bound = st, len(f.Nodes), skipped, described, book, bound
	if kept != nil {
		snap.kept, snap.units = kept, kept.units
	}
	if len(queues) == 0 {
		return snap, nil // no quota to charge
	}
	for _, b := range snap.boundPods() {
		q := b.pod.Labels[LabelQueue]
		if queues[q] == nil || b.need.IsZero() {
			continue
		}
		if _, err := book.Admit(q, b.need); err != nil {
			log.Warn("bound pod over its queue's quota", "pod", b.pod.Namespace+"/"+b.pod.Name, "err", err)
		}
	}
	return snap, nil
}

// pinBound records every bound pod on its node in st (gang.State.Adopt:
// the state learns what runs, nothing is chosen), nodes and pods in name
// order.
func pinBound(st *gang.State, byNode map[string][]*corev1.Pod, charger sched.Charger, log *slog.Logger) []boundPod {
	var out []boundPod
	names := make([]string, 0, len(byNode))
	for n := range byNode {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		if _, err := st.NodeIndex(name); err != nil {
			continue // a node outside the fleet: its pods hold nothing corral places on
		}
		pods := byNode[name]
		sort.Slice(pods, func(a, b int) bool { return podKey(pods[a]) < podKey(pods[b]) })
		for _, p := range pods {
			pl, err := pinPod(st, name, p)
			if err != nil {
				log.Warn("bound pod does not fit its node in corral's view", "pod", podKey(p), "node", name, "err", err)
				continue
			}
			out = append(out, newBoundPod(st, p, pl, charger))
		}
	}
	return out
}

// newBoundPod is p, placed as pl in st, as the cycle holds it.
func newBoundPod(st *gang.State, p *corev1.Pod, pl *gang.Placement, charger sched.Charger) boundPod {
	return boundPod{pod: p, job: pl.Job, milli: st.PlacedMilli(pl), need: charger.Placed(st, pl), podFacts: factsOf(p)}
}

// withNode is p on node: p itself when it shows the node, else a copy
// that does.
func withNode(p *corev1.Pod, node string) *corev1.Pod {
	if p.Spec.NodeName == node {
		return p
	}
	c := p.DeepCopy()
	c.Spec.NodeName = node
	return c
}

func podKey(p *corev1.Pod) string { return p.Namespace + "/" + p.Name }

// pinPod records p on node; a share a DRA driver allocated on the GPU it
// allocated (annotationDRAGPU), a time-sliced share on the GPU corral
// counted it on (AnnotationShareGPU), when that GPU has the room in
// corral's view.
func pinPod(st *gang.State, node string, p *corev1.Pod) (*gang.Placement, error) {
	d, err := demand(p)
	if err != nil {
		return nil, err
	}
	return pinDemand(st, node, p, d)
}

// pinDemand is pinPod for p, whose demand d is read already.
func pinDemand(st *gang.State, node string, p *corev1.Pod, d job.Demand) (*gang.Placement, error) {
	j := &job.Job{Name: boundJobName(p), Groups: []job.Group{{Name: "pod", Count: 1, Task: d}}}
	if g, ok := shareGPU(p); ok {
		if pl, err := st.AdoptShareOn(j, node, g); err == nil {
			return pl, nil
		}
	}
	return st.Adopt(j, node)
}

// shareGPU is the GPU p's share is on: the one a DRA driver allocated, or
// else the one corral counted it on when it bound it.
func shareGPU(p *corev1.Pod) (int, bool) {
	for _, key := range []string{annotationDRAGPU, AnnotationShareGPU} {
		if g, err := strconv.Atoi(p.Annotations[key]); err == nil && g >= 0 {
			return g, true
		}
	}
	return 0, false
}

func boundJobName(p *corev1.Pod) string { return "bound " + string(p.UID) }

// fleetGPUs counts the fleet's GPUs.
func fleetGPUs(f *fleet.Fleet) int {
	n := 0
	for i := range f.Nodes {
		n += f.Nodes[i].GPUs
	}
	return n
}

// nodePrice is what one GPU of the named node costs an hour (its
// AnnotationGPUPrice), 0 when it has none or is not in the fleet.
func (snap *snapshot) nodePrice(name string) float64 {
	i, err := snap.state.NodeIndex(name)
	if err != nil {
		return 0
	}
	return snap.state.Fleet().Nodes[i].PricePerGPUHour
}

// podCheckpoint is the pod's own AnnotationCheckpointTime (checkpointTime
// without a group), zero when it has none.
func podCheckpoint(p *corev1.Pod) time.Time {
	at, _ := checkpointTime(p.Annotations, nil)
	return at
}
