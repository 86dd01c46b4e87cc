package kube

import (
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/placement"
	"github.com/corral-sched/corral/internal/sched"
)

// keptCluster is the cluster as the core holds it, kept from one cycle to
// the next the way kube-scheduler keeps its cache: the fleet built from
// the nodes, and every bound pod adopted on its node. Each cycle it is
// told the node objects the informers hold and the bound pods that
// changed since it last looked (podClasses.changed); it changes only
// what changed (an object the informer replaced), and the cycle decides
// in a trial (gang.State.Begin) that the next cycle undoes first. A node
// that changes more than its health or images, a new selector taint or a
// node added or gone builds the fleet again, and every bound pod is
// adopted again.
type keptCluster struct {
	nodes     map[string]*corev1.Node // the objects the fleet was built from
	extra     string                  // the selector taints in the fleet, as a key
	nvlink    string                  // the NVLink level the domains were read with
	state     *gang.State
	skipped   map[string]error
	described map[string]string
	charger   sched.Charger
	pods      map[types.UID]*keptPod
	order     []*keptPod // the kept pods in node, then pod order, as of the last merge
	adopted   []*keptPod // the pods adopted since, merged into order when the bound pods are asked for
	dirty     bool       // a pod released or its object replaced since the last merge
	bound     []boundPod // order's pods as the cycle sees them; nil until asked
	units     *keptUnits // the running units the kept pods make
	builds    int        // fleets built, for tests
	// all: the next sync adopts every bound pod, not only those changed
	// (the fleet was built again).
	all bool
	// learned is what the packing policy had learned from the bound pods
	// when the last cycle began (learned.go). carry, when set, is the mix
	// the state takes at the next cycle, before it adopts the pods: the
	// old state's after a rebuild, or the one a former leader kept; the
	// pods it counts (known, or all with knownAll) are adopted without
	// being learned again.
	learned  placement.Learned
	carry    *placement.Learned
	known    map[types.UID]bool
	knownAll bool
}

// keptPod is a bound pod as the state holds it.
type keptPod struct {
	obj    *corev1.Pod // the object it was last seen as
	node   string
	order  string // node and pod key: where it comes in the bound pods
	demand job.Demand
	gpu    string // the GPU of its share (shareGPU), as text
	b      boundPod
	gone   bool // released
}

// fleetOf is the cycle's fleet, state and bound pods: kept, or built
// afresh when k is nil.
func (k *keptCluster) fleetOf(nodes []*corev1.Node, cfg *Config, extra map[string][]string, classes *podClasses,
	charger sched.Charger, log *slog.Logger) (*gang.State, map[string]error, map[string]string, []boundPod, error) {
	if k == nil {
		f, skipped, described := buildFleet(nodes, cfg, extra)
		st, err := gang.New(f)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		return st, skipped, described, pinBound(st, classes.byNode(), charger, log), nil
	}
	if k.state != nil && k.state.InTrial() {
		if err := k.state.Undo(); err != nil {
			return nil, nil, nil, nil, err
		}
	}
	if err := k.syncNodes(nodes, cfg, extra); err != nil {
		return nil, nil, nil, nil, err
	}
	k.takeCarry(log)
	k.syncPods(classes, charger, log)
	k.known, k.knownAll, k.learned = nil, false, k.state.Learned()
	if err := k.state.Begin(); err != nil {
		return nil, nil, nil, nil, err
	}
	return k.state, k.skipped, k.described, nil, nil
}

// syncNodes keeps the fleet, changing a node's health and images in
// place, or builds it again.
func (k *keptCluster) syncNodes(nodes []*corev1.Node, cfg *Config, extra map[string][]string) error {
	key := extraKey(extra)
	nvlink := nvlinkLevel(nodes, cfg)
	if k.state == nil || key != k.extra || nvlink != k.nvlink || len(nodes) != len(k.nodes) || !k.onlyHealthOrImages(nodes, cfg, extra) {
		return k.build(nodes, cfg, extra, key, nvlink)
	}
	return nil
}

// onlyHealthOrImages applies the changes of nodes the informer replaced
// when they change only a node's health or images, and reports whether
// they did (false: build the fleet again).
func (k *keptCluster) onlyHealthOrImages(nodes []*corev1.Node, cfg *Config, extra map[string][]string) bool {
	f := k.state.Fleet()
	type change struct {
		at   int
		fn   fleet.Node
		note string // how its GPUs were described, if the catalog lacks them
	}
	var changes []change
	for _, n := range nodes {
		old, ok := k.nodes[n.Name]
		if !ok {
			return false
		}
		if old == n {
			continue
		}
		if _, left := k.skipped[n.Name]; left {
			return false
		}
		i, err := k.state.NodeIndex(n.Name)
		if err != nil {
			return false
		}
		fn, note, err := describeNode(n, cfg, k.nvlink)
		if err != nil {
			return false
		}
		addTaints(&fn, extra[n.Name])
		same, now := f.Nodes[i], fn
		same.Health, same.Images, now.Health, now.Images = "", nil, "", nil
		if !reflect.DeepEqual(same, now) {
			return false
		}
		changes = append(changes, change{i, fn, note})
	}
	images := false
	for _, c := range changes {
		if f.Nodes[c.at].Health != c.fn.Health {
			if err := k.state.SetHealth(c.fn.Name, c.fn.Health); err != nil {
				return false
			}
		}
		if !maps.Equal(f.Nodes[c.at].Images, c.fn.Images) {
			f.Nodes[c.at].Images, images = c.fn.Images, true
		}
		f.Nodes[c.at].Labels = c.fn.Labels
		if c.note != "" {
			k.described[c.fn.Name] = c.note
		} else {
			delete(k.described, c.fn.Name)
		}
	}
	for _, n := range nodes {
		k.nodes[n.Name] = n
	}
	if images {
		k.state.ImagesChanged()
	}
	return true
}

// build builds the fleet and state afresh; every bound pod is adopted
// again.
func (k *keptCluster) build(nodes []*corev1.Node, cfg *Config, extra map[string][]string, key, nvlink string) error {
	f, skipped, described := buildFleet(nodes, cfg, extra)
	st, err := gang.New(f)
	if err != nil {
		return err
	}
	if k.state != nil && k.carry == nil { // the new state would learn the bound pods again, in node order
		old := k.state.Learned()
		k.carry, k.known = &old, make(map[types.UID]bool, len(k.pods))
		for uid := range k.pods {
			k.known[uid] = true
		}
	}
	k.state, k.skipped, k.described, k.extra, k.nvlink = st, skipped, described, key, nvlink
	k.nodes = make(map[string]*corev1.Node, len(nodes))
	for _, n := range nodes {
		k.nodes[n.Name] = n
	}
	k.pods, k.order, k.adopted, k.bound, k.all, k.units = map[types.UID]*keptPod{}, nil, nil, nil, true, newKeptUnits()
	k.builds++
	return nil
}

// syncPods releases the bound pods changed since the last sync that are
// gone or moved, adopts the new ones in node then pod order, and takes up
// a replaced object whose demand is the same; after a build, it adopts
// every bound pod.
func (k *keptCluster) syncPods(classes *podClasses, charger sched.Charger, log *slog.Logger) {
	changed := classes.takeChanged()
	if k.all {
		changed = make(map[types.UID]bool, len(classes.bound))
		for uid := range classes.bound {
			changed[uid] = true
		}
		k.all = false
	}
	var adopt []*keptPod
	for uid := range changed {
		e := classes.bound[uid]
		if e != nil {
			if _, err := k.state.NodeIndex(e.node); err != nil {
				e = nil // a node outside the fleet: its pods hold nothing corral places on
			}
		}
		if e == nil {
			if kp := k.pods[uid]; kp != nil {
				k.release(uid, kp)
			}
			continue
		}
		if !k.keep(e.pod, e.node) {
			adopt = append(adopt, &keptPod{obj: e.pod, node: e.node, order: e.node + "\x00" + podKey(e.pod)})
		}
	}
	if charger != k.charger {
		k.charger, k.dirty = charger, true
		for _, kp := range k.pods {
			kp.b.need = charger.Placed(k.state, k.state.Job(kp.b.job))
		}
		k.units.all()
	}
	sort.Slice(adopt, func(a, b int) bool { return adopt[a].order < adopt[b].order })
	for _, kp := range adopt {
		if k.adopt(kp, log) {
			k.adopted = append(k.adopted, kp)
		}
	}
}

// keep reports whether p, bound to node, is held as it is: the same
// object, or one with the same node and demand (its object taken up).
func (k *keptCluster) keep(p *corev1.Pod, node string) bool {
	kp := k.pods[p.UID]
	if kp == nil {
		return false
	}
	if kp.obj == p && kp.node == node {
		return true
	}
	d, err := demand(p)
	facts := factsOf(p)
	if err == nil && kp.node == node && kp.gpu == shareGPUKey(p) && facts.unit == kp.b.unit && reflect.DeepEqual(d, kp.demand) {
		kp.obj, kp.b.pod, kp.b.podFacts, k.dirty = p, p, facts, true
		k.units.replaced(kp)
		return true
	}
	k.release(p.UID, kp)
	return false
}

func (k *keptCluster) release(uid types.UID, kp *keptPod) {
	if err := k.state.Release(kp.b.job); err != nil {
		panic(fmt.Sprintf("kube: kept pod %s: %v", podKey(kp.obj), err)) // every kept pod is placed
	}
	delete(k.pods, uid)
	kp.gone, k.dirty = true, true
	k.units.remove(kp)
}

// adopt records kp's pod on its node, as pinBound does; false when it
// does not fit there in corral's view.
func (k *keptCluster) adopt(kp *keptPod, log *slog.Logger) bool {
	p := kp.obj
	d, err := demand(p)
	var pl *gang.Placement
	if err == nil {
		pin := func() { pl, err = pinDemand(k.state, kp.node, p, d) }
		if k.knownAll || k.known[p.UID] {
			k.state.Counted(pin) // the carried mix counts it already
		} else {
			pin()
		}
	}
	if err != nil {
		log.Warn("bound pod does not fit its node in corral's view", "pod", podKey(p), "node", kp.node, "err", err)
		return false
	}
	kp.demand = d
	kp.gpu = shareGPUKey(p)
	kp.b = newBoundPod(k.state, p, pl, k.charger)
	k.pods[p.UID] = kp
	k.units.add(kp)
	return true
}

// merge drops the released pods from the order and merges in those
// adopted since the last merge and still kept.
func (k *keptCluster) merge() {
	if len(k.adopted) == 0 && !k.dirty {
		return
	}
	adopted := slices.DeleteFunc(k.adopted, func(kp *keptPod) bool { return kp.gone })
	sort.Slice(adopted, func(a, b int) bool { return adopted[a].order < adopted[b].order })
	out := make([]*keptPod, 0, len(k.pods))
	i := 0
	for _, kp := range k.order {
		if kp.gone {
			continue
		}
		for i < len(adopted) && adopted[i].order < kp.order {
			out = append(out, adopted[i])
			i++
		}
		out = append(out, kp)
	}
	k.order, k.adopted, k.dirty, k.bound = append(out, adopted[i:]...), nil, false, nil
}

// boundList is the bound pods in node, then pod order, as pinBound gives
// them. A cycle without Queues does not ask for them: its running units
// are kept (keptUnits).
func (k *keptCluster) boundList() []boundPod {
	k.merge()
	if k.bound == nil && len(k.order) > 0 {
		k.bound = make([]boundPod, len(k.order))
		for i, kp := range k.order {
			k.bound[i] = kp.b
		}
	}
	return k.bound
}

// shareGPUKey is shareGPU as text, "" for none.
func shareGPUKey(p *corev1.Pod) string {
	if g, ok := shareGPU(p); ok {
		return strconv.Itoa(g)
	}
	return ""
}

// extraKey is the selector taints as one string.
func extraKey(extra map[string][]string) string {
	if len(extra) == 0 {
		return ""
	}
	var b strings.Builder
	for _, node := range slices.Sorted(maps.Keys(extra)) {
		fmt.Fprintf(&b, "%s=%s;", node, strings.Join(extra[node], ","))
	}
	return b.String()
}
