package upstream

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	schedutil "k8s.io/kubernetes/pkg/scheduler/util"
)

// View is one cycle's cluster as the plugins see it: the nodes, and the
// pods on them, those placed during the cycle included. A View is used
// by one goroutine, and only one View of a Framework at a time, but for
// PreBind and Release, which the bindings of a cycle call concurrently
// once it has placed its pods.
type View struct {
	f      *Framework
	snap   *cache.Snapshot
	nodes  []fwk.NodeInfo // in name order
	byName map[string]fwk.NodeInfo
	placed []placed // pods placed during the cycle, in order
	// written are the placed pods whose claims PreBind wrote already;
	// PreBind runs in the binding goroutines, so it holds mu.
	mu      sync.Mutex
	written map[types.UID]bool
}

// placed is a pod placed during the cycle, with the plugins' state for it.
type placed struct {
	pod     *corev1.Pod // with its node set
	checked *corev1.Pod // what the plugins were shown
	state   *framework.CycleState
}

// NewView makes the cycle's view: pods must have spec.nodeName set (copies
// for pods bound but not yet seen bound); those on other nodes are left
// out. The view is the framework's kept cluster brought up to date
// (keptCluster): only what changed since the last view is read again.
// Copies of a pod or node of one resourceVersion are taken as unchanged,
// but for a pod's node: a face's copies change nothing else the plugins
// read.
func (f *Framework) NewView(nodes []*corev1.Node, pods []*corev1.Pod) *View {
	f.deltas = false // the next NewViewOf is told a list of its own: it compares every pod
	return f.newView(nodes, nil, func() []*corev1.Pod { return pods })
}

// PodChange is a pod that changed since the last view: Pod is it as it
// is now, on its node (a copy showing it for a pod bound but not yet
// seen bound), nil when it left every node.
type PodChange struct {
	UID types.UID
	Pod *corev1.Pod
}

// NewViewOf is NewView told only the pods that changed since the last
// NewViewOf, as an informer tells its handlers, not every pod: a view
// costs what changed. all lists every pod, as NewView takes them; it is
// asked when the set of nodes changed (pods on a node that joined were
// left out until then), at the first view, after a NewView (told a list
// of its own), and should the cluster be built again.
func (f *Framework) NewViewOf(nodes []*corev1.Node, changed []PodChange, all func() []*corev1.Pod) *View {
	if !f.deltas {
		changed = nil
	}
	f.deltas = true
	return f.newView(nodes, changed, all)
}

// newView brings the kept cluster to nodes and the pods changed, or,
// changed nil, to all.
func (f *Framework) newView(nodes []*corev1.Node, changed []PodChange, all func() []*corev1.Pod) *View {
	if f.last != nil {
		f.last.forget()
	}
	k, err := f.kept.update(nodes, changed, all)
	if err != nil {
		klog.FromContext(f.kept.ctx).Error(err, "keeping the plugins' cluster; this view is built afresh")
		f.kept, f.last = newKeptCluster(f.kept.ctx), nil
		return f.freshView(nodes, all())
	}
	f.kept = k
	v := &View{f: f, snap: k.snap, nodes: k.order, byName: k.named, written: map[types.UID]bool{}}
	f.lister.SharedLister = v.snap
	f.last = v
	return v
}

// forget takes the pods placed in the view out of its snapshot, last
// first, their reservations kept: they are being bound, and the next view
// shows them bound.
func (v *View) forget() {
	logger := klog.FromContext(v.f.kept.ctx)
	for i := len(v.placed) - 1; i >= 0; i-- {
		_ = v.snap.ForgetPod(logger, v.placed[i].pod) // assumed by place
	}
}

// freshView is the view built afresh from nodes and pods, every NodeInfo
// new: what NewView keeps up to date instead.
func (f *Framework) freshView(nodes []*corev1.Node, pods []*corev1.Pod) *View {
	known := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		known[n.Name] = true
	}
	on := make([]*corev1.Pod, 0, len(pods))
	for _, p := range pods {
		if known[p.Spec.NodeName] {
			on = append(on, p)
		}
	}
	v := &View{f: f, snap: cache.NewSnapshot(on, nodes), byName: map[string]fwk.NodeInfo{}, written: map[types.UID]bool{}}
	f.lister.SharedLister = v.snap
	for _, n := range nodes {
		if ni, err := v.snap.Get(n.Name); err == nil {
			v.byName[n.Name] = ni
			v.nodes = append(v.nodes, ni)
		}
	}
	sort.Slice(v.nodes, func(a, b int) bool { return v.nodes[a].Node().Name < v.nodes[b].Node().Name })
	return v
}

// Verdict is where a pod may run, and why not elsewhere.
type Verdict struct {
	Nodes []string // allowed nodes, in name order
	// Refused counts the nodes refused, by the plugins' reasons
	// ("node(s) didn't match pod anti-affinity rules").
	Refused map[string]int
	// Resolvable are the refused nodes whose refusal only pods there
	// cause (ports, anti-affinity, the pod count: Unschedulable, not
	// UnschedulableAndUnresolvable), where preemption may help; by name.
	Resolvable []string
	Err        error // the plugins failed; no node is allowed
}

// Why summarises the refusals as kube-scheduler does: "0/4 nodes are
// available: 3 node(s) had untolerated taint, 1 Too many pods."
func (v Verdict) Why(total int) string {
	if v.Err != nil {
		return v.Err.Error()
	}
	reasons := slices.Sorted(maps.Keys(v.Refused))
	parts := make([]string, len(reasons))
	for i, r := range reasons {
		parts[i] = fmt.Sprintf("%d %s", v.Refused[r], r)
	}
	return fmt.Sprintf("%d/%d nodes are available: %s.", len(v.Nodes), total, strings.Join(parts, ", "))
}

// Allowed runs PreFilter once and Filter on every node for pod.
func (v *View) Allowed(ctx context.Context, pod *corev1.Pod) Verdict {
	out := Verdict{Refused: map[string]int{}}
	state := framework.NewCycleState()
	checked := v.f.checked(pod)
	res, st, _ := v.f.fw.RunPreFilterPlugins(ctx, state, checked)
	if !st.IsSuccess() {
		if !st.IsRejected() {
			out.Err = fmt.Errorf("scheduler plugin %s: %w", st.Plugin(), st.AsError())
			return out
		}
		for _, r := range st.Reasons() {
			out.Refused[r] = len(v.nodes)
		}
		return out
	}
	for _, ni := range v.nodes {
		name := ni.Node().Name
		if !res.AllNodes() && !res.NodeNames.Has(name) {
			out.Refused["node(s) didn't satisfy plugin(s) ["+st.Plugin()+"]"]++
			continue
		}
		fst := v.f.fw.RunFilterPlugins(ctx, state, checked, ni)
		switch {
		case fst.IsSuccess():
			out.Nodes = append(out.Nodes, name)
		case fst.IsRejected():
			for _, r := range fst.Reasons() {
				out.Refused[r]++
			}
			if fst.Code() == fwk.Unschedulable {
				out.Resolvable = append(out.Resolvable, name)
			}
		default:
			out.Err = fmt.Errorf("scheduler plugin %s on node %s: %w", fst.Plugin(), name, fst.AsError())
			return Verdict{Refused: map[string]int{}, Err: out.Err}
		}
	}
	return out
}

// Freeing says which of candidates, pods on node, must leave it for the
// plugins to allow pod there, as kube-scheduler's DefaultPreemption
// chooses victims on a node: every candidate removed, then each put back
// in turn, the most important first (candidates in that order), where
// pod still passes without it. false when pod does not pass even with
// them all gone. The view is left as it was.
func (v *View) Freeing(ctx context.Context, pod *corev1.Pod, node string, candidates []*corev1.Pod) ([]*corev1.Pod, bool) {
	ni, ok := v.byName[node]
	if !ok || len(candidates) == 0 {
		return nil, false
	}
	checked := v.f.checked(pod)
	state := framework.NewCycleState()
	res, st, _ := v.f.fw.RunPreFilterPlugins(ctx, state, checked)
	if !st.IsSuccess() || !res.AllNodes() && !res.NodeNames.Has(node) {
		return nil, false
	}
	w := &without{v: v, ctx: ctx, state: state, pod: checked, node: ni.Snapshot()}
	infos := make([]fwk.PodInfo, len(candidates))
	for i, c := range candidates {
		pi, err := framework.NewPodInfo(c)
		if err != nil || !w.remove(pi) {
			return nil, false
		}
		infos[i] = pi
	}
	if !w.passes() {
		return nil, false
	}
	var victims []*corev1.Pod
	for i, pi := range infos {
		if w.add(pi) && w.passes() {
			continue // reprieved
		}
		if !w.remove(pi) {
			return nil, false
		}
		victims = append(victims, candidates[i])
	}
	return victims, true
}

// without is a copy of one node's view with pods taken off it, and the
// plugins' state for one pod kept up to date with it.
type without struct {
	v     *View
	ctx   context.Context
	state fwk.CycleState
	pod   *corev1.Pod
	node  fwk.NodeInfo
}

func (w *without) remove(pi fwk.PodInfo) bool {
	if err := w.node.RemovePod(klog.FromContext(w.ctx), pi.GetPod()); err != nil {
		return false
	}
	return w.v.f.fw.RunPreFilterExtensionRemovePod(w.ctx, w.state, w.pod, pi, w.node).IsSuccess()
}

func (w *without) add(pi fwk.PodInfo) bool {
	w.node.AddPodInfo(pi)
	return w.v.f.fw.RunPreFilterExtensionAddPod(w.ctx, w.state, w.pod, pi, w.node).IsSuccess()
}

func (w *without) passes() bool {
	return w.v.f.fw.RunFilterPlugins(w.ctx, w.state, w.pod, w.node).IsSuccess()
}

// Place checks pod on node against the view, the pods placed before it in
// the cycle included, and when the plugins allow it reserves what it
// claims and adds it to the view. It returns the plugins' refusal.
func (v *View) Place(ctx context.Context, pod *corev1.Pod, node string) error {
	return v.place(ctx, pod, v.f.checked(pod), node)
}

func (v *View) place(ctx context.Context, pod, checked *corev1.Pod, node string) error {
	ni, ok := v.byName[node]
	if !ok {
		return fmt.Errorf("node %s is not in the cluster's view", node)
	}
	state := framework.NewCycleState()
	res, st, _ := v.f.fw.RunPreFilterPlugins(ctx, state, checked)
	if !st.IsSuccess() {
		return fmt.Errorf("%s", strings.Join(st.Reasons(), ", "))
	}
	if !res.AllNodes() && !res.NodeNames.Has(node) {
		return fmt.Errorf("node %s is not among the nodes plugin %s allows", node, st.Plugin())
	}
	if st := v.f.fw.RunFilterPlugins(ctx, state, checked, ni); !st.IsSuccess() {
		return fmt.Errorf("%s", strings.Join(st.Reasons(), ", "))
	}
	if st := v.f.fw.RunReservePluginsReserve(ctx, state, checked, node); !st.IsSuccess() {
		v.f.fw.RunReservePluginsUnreserve(ctx, state, checked, node)
		return fmt.Errorf("reserving: %s", st.Message())
	}
	on := pod.DeepCopy()
	on.Spec.NodeName = node
	pi, err := framework.NewPodInfo(on)
	if err == nil {
		err = v.snap.AssumePod(pi)
	}
	if err != nil {
		v.f.fw.RunReservePluginsUnreserve(ctx, state, checked, node)
		return fmt.Errorf("adding the pod to the view: %w", err)
	}
	v.placed = append(v.placed, placed{pod: on, checked: checked, state: state})
	return nil
}

// Mark is how many pods were placed so far; Undo(mark) takes back those
// placed after it.
func (v *View) Mark() int { return len(v.placed) }

// Undo takes back, last first, the pods placed since mark: their
// reservations are released and they leave the view.
func (v *View) Undo(ctx context.Context, mark int) {
	for i := len(v.placed) - 1; i >= mark; i-- {
		p := v.placed[i]
		v.f.fw.RunReservePluginsUnreserve(ctx, p.state, p.checked, p.pod.Spec.NodeName)
		_ = v.snap.ForgetPod(klog.FromContext(ctx), p.pod)
	}
	v.placed = v.placed[:mark]
}

// PreBind writes what the placed pod claims to the API server (its
// ResourceClaims' allocation and reservation, its volumes' bindings); it
// is to be called before the pod is bound.
// Claims are written once: a pod's second PreBind does nothing.
func (v *View) PreBind(ctx context.Context, pod *corev1.Pod) error {
	for _, p := range v.placed {
		if p.pod.UID != pod.UID {
			continue
		}
		v.mu.Lock()
		done := v.written[pod.UID]
		v.mu.Unlock()
		if done {
			return nil
		}
		if st := v.f.fw.RunPreBindPlugins(ctx, p.state, p.checked, p.pod.Spec.NodeName); !st.IsSuccess() {
			return fmt.Errorf("preparing %s/%s for node %s: %w", pod.Namespace, pod.Name, p.pod.Spec.NodeName, st.AsError())
		}
		v.mu.Lock()
		v.written[pod.UID] = true
		v.mu.Unlock()
		return nil
	}
	return fmt.Errorf("pod %s/%s was not placed in this cycle", pod.Namespace, pod.Name)
}

// Release gives back the reservations of a placed pod that is not to be
// bound after all (its binding failed).
func (v *View) Release(ctx context.Context, pod *corev1.Pod) {
	for _, p := range v.placed {
		if p.pod.UID == pod.UID {
			v.f.fw.RunReservePluginsUnreserve(ctx, p.state, p.checked, p.pod.Spec.NodeName)
		}
	}
}

// NeedsPreBind reports whether pod claims anything PreBind may write: a
// ResourceClaim, a PersistentVolumeClaim, or an extended resource that a
// DeviceClass may stand for (KEP-5004: the DynamicResources plugin then
// makes the pod's claim and maps its requests in the pod's status).
func (v *View) NeedsPreBind(pod *corev1.Pod) bool {
	if len(pod.Spec.ResourceClaims) > 0 || v.asksExtended(pod) {
		return true
	}
	return slices.ContainsFunc(pod.Spec.Volumes, func(v corev1.Volume) bool {
		return v.PersistentVolumeClaim != nil || v.Ephemeral != nil
	})
}

// asksExtended reports whether pod requests an extended resource a
// DeviceClass may stand for: any but those corral's core counts
// (upstream's own test of the names), and those a DeviceClass names.
func (v *View) asksExtended(pod *corev1.Pod) bool {
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			for name := range cs[i].Resources.Requests {
				if schedutil.IsDRAExtendedResourceName(name) && (!coreResource(name) || v.f.mapped(name)) {
					return true
				}
			}
		}
	}
	return false
}

// ClaimNames are the names of the ResourceClaims pod uses: named in its
// spec, made for it from a template (its status says which), or made for
// its extended resources (KEP-5004, its status again).
func ClaimNames(pod *corev1.Pod) []string {
	var out []string
	for _, c := range pod.Spec.ResourceClaims {
		if c.ResourceClaimName != nil {
			out = append(out, *c.ResourceClaimName)
		}
	}
	for _, st := range pod.Status.ResourceClaimStatuses {
		if st.ResourceClaimName != nil {
			out = append(out, *st.ResourceClaimName)
		}
	}
	if st := pod.Status.ExtendedResourceClaimStatus; st != nil && st.ResourceClaimName != "" {
		out = append(out, st.ResourceClaimName)
	}
	return out
}

// Shown is pod as the plugins are shown it: without the resources corral's
// core counts itself (withoutCoreResources). Pods shown alike get the same
// verdicts.
func (v *View) Shown(pod *corev1.Pod) *corev1.Pod { return v.f.checked(pod) }

// Mapped lists, joined, the resources of pod that a DeviceClass stands
// for: what besides pod itself decides what Shown keeps of it.
func (v *View) Mapped(pod *corev1.Pod) string {
	var out []string
	each := func(l corev1.ResourceList) {
		for name := range l {
			if coreResource(name) && v.f.mapped(name) {
				out = append(out, string(name))
			}
		}
	}
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			each(cs[i].Resources.Requests)
			each(cs[i].Resources.Limits)
		}
	}
	if r := pod.Spec.Resources; r != nil {
		each(r.Requests)
		each(r.Limits)
	}
	each(pod.Spec.Overhead)
	slices.Sort(out)
	return strings.Join(out, ",")
}
