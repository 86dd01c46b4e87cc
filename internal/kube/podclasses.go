package kube

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/corral-sched/corral/internal/kube/upstream"
)

// podClass is what a cycle makes of a pod.
type podClass uint8

const (
	classNone    podClass = iota // ended, or waiting for another scheduler or being deleted
	classBound                   // on a node, or assumed bound by this replica
	classGated                   // corral's, with spec.schedulingGates: never placed
	classPending                 // corral's, to place
)

// classed is one pod as the cycle sees it.
type classed struct {
	pod   *corev1.Pod
	node  string // bound to, or assumed bound to; "" when not bound
	class podClass
	// member is the pod group key the pod counts in (members), "" when it
	// counts in none.
	member string
}

// podClasses is the pods a cycle sees, classed as bound, gated or
// pending, and kept from one cycle to the next: set is told only the
// pods that changed, so that a cycle does not look at every pod. The
// bound pods changed since the kept cluster last synced are collected in
// changed for it, and those changed since the filter plugins' view last
// looked in viewChanged.
type podClasses struct {
	scheduler string
	of        map[types.UID]*classed // every pod set, ended ones aside
	pending   map[types.UID]*corev1.Pod
	gated     map[types.UID]*corev1.Pod
	bound     map[types.UID]*classed
	members   groupCounts
	changed   map[types.UID]bool // bound before or after a set, since the last takeChanged
	// viewChanged is the same since the last viewChanges.
	viewChanged map[types.UID]bool
}

func newPodClasses(scheduler string) *podClasses {
	return &podClasses{scheduler: scheduler, of: map[types.UID]*classed{}, pending: map[types.UID]*corev1.Pod{},
		gated: map[types.UID]*corev1.Pod{}, bound: map[types.UID]*classed{}, members: newGroupCounts(), changed: map[types.UID]bool{},
		viewChanged: map[types.UID]bool{}}
}

// classesOf classes every pod of a list at once, pods in assumed (uid ->
// node) as bound there.
func classesOf(scheduler string, pods []*corev1.Pod, assumed map[string]string) *podClasses {
	c := newPodClasses(scheduler)
	c.setList(pods, assumed)
	return c
}

// setList makes the classes those of exactly the pods listed: the pods
// not listed are dropped, a pod listed as the object and node it was set
// with is left as it is.
func (c *podClasses) setList(pods []*corev1.Pod, assumed map[string]string) {
	listed := make(map[types.UID]bool, len(pods))
	for _, p := range pods {
		listed[p.UID] = true
		node := p.Spec.NodeName
		if node == "" {
			node = assumed[string(p.UID)]
		}
		if old := c.of[p.UID]; old != nil && old.pod == p && old.node == node {
			continue
		}
		c.set(p.UID, p, node)
	}
	for uid := range c.of {
		if !listed[uid] {
			c.set(uid, nil, "")
		}
	}
}

// set classes the pod of uid as p, bound to node ("" for none); p nil
// drops it.
func (c *podClasses) set(uid types.UID, p *corev1.Pod, node string) {
	if old := c.of[uid]; old != nil {
		c.drop(uid, old)
	}
	if p == nil || terminal(p) {
		return
	}
	e := &classed{pod: p, node: node}
	group := ""
	if g := GroupName(p); g != "" {
		group = p.Namespace + "/" + g
	}
	switch {
	case node != "":
		e.class = classBound
		c.bound[uid], c.changed[uid], c.viewChanged[uid] = e, true, true
		if p.DeletionTimestamp == nil { // a stopping member is no member
			e.member = group
			c.members.count(c.members.bound, group, 1)
		}
	case p.Spec.SchedulerName != c.scheduler || p.DeletionTimestamp != nil:
	case len(p.Spec.SchedulingGates) > 0:
		e.class, e.member = classGated, group
		c.gated[uid] = p
		c.members.count(c.members.gated, group, 1)
	default:
		e.class = classPending
		c.pending[uid] = p
	}
	c.of[uid] = e
}

// drop takes old, the pod of uid, out of its class.
func (c *podClasses) drop(uid types.UID, old *classed) {
	delete(c.of, uid)
	switch old.class {
	case classBound:
		delete(c.bound, uid)
		c.changed[uid], c.viewChanged[uid] = true, true
		c.members.count(c.members.bound, old.member, -1)
	case classGated:
		delete(c.gated, uid)
		c.members.count(c.members.gated, old.member, -1)
	case classPending:
		delete(c.pending, uid)
	}
}

// pendingPods is the pending pods in namespace, then name order.
func (c *podClasses) pendingPods() []*corev1.Pod { return sortedPods(c.pending) }

// gatedPods is the gated pods in namespace, then name order.
func (c *podClasses) gatedPods() []*corev1.Pod { return sortedPods(c.gated) }

func sortedPods(m map[types.UID]*corev1.Pod) []*corev1.Pod {
	if len(m) == 0 {
		return nil
	}
	out := make([]*corev1.Pod, 0, len(m))
	for _, p := range m {
		out = append(out, p)
	}
	sort.Slice(out, func(a, b int) bool { return podKey(out[a]) < podKey(out[b]) })
	return out
}

// onNodes is every bound pod showing its node, as the filter plugins see
// them.
func (c *podClasses) onNodes() []*corev1.Pod {
	out := make([]*corev1.Pod, 0, len(c.bound))
	for _, e := range c.bound {
		out = append(out, withNode(e.pod, e.node))
	}
	return out
}

// byNode is the bound pods by node.
func (c *podClasses) byNode() map[string][]*corev1.Pod {
	out := map[string][]*corev1.Pod{}
	for _, e := range c.bound {
		out[e.node] = append(out[e.node], e.pod)
	}
	return out
}

// viewChanges hands over the bound pods changed since the last call, as
// the filter plugins' view is told them (upstream.Framework.NewViewOf):
// each on its node, or nil when it left every node.
func (c *podClasses) viewChanges() []upstream.PodChange {
	out := make([]upstream.PodChange, 0, len(c.viewChanged))
	for uid := range c.viewChanged {
		ch := upstream.PodChange{UID: uid}
		if e := c.bound[uid]; e != nil {
			ch.Pod = withNode(e.pod, e.node)
		}
		out = append(out, ch)
	}
	c.viewChanged = map[types.UID]bool{}
	return out
}

// takeChanged hands over the pods changed since the last call, and
// forgets them.
func (c *podClasses) takeChanged() map[types.UID]bool {
	out := c.changed
	c.changed = map[types.UID]bool{}
	return out
}
