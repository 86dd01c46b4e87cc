package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/corral-sched/corral/internal/kube/upstream"
	"github.com/corral-sched/corral/internal/sched"
)

// Kubernetes' own filter plugins (internal/kube/upstream) say on which
// nodes each pending pod may run. The core learns it as it learns node
// selectors: each distinct set of allowed nodes becomes a core taint on
// every node outside it, which pods of other sets tolerate. Pods placed
// during the cycle are then checked again, in the order the core placed
// them, against the nodes with the pods placed before them (anti-affinity,
// spread, ports, pod counts and devices among pods placed together). A pod
// refused there is placed on another node its filters allow, all its
// requests checked by the plugins, when one takes it; otherwise its unit
// is not started, and the next cycle places it knowing the rest.

// filterPrefix starts the core taints made from the filters' verdicts.
const filterPrefix = "corral.sh/filtered="

// filtering is one cycle's verdicts of the filter plugins.
type filtering struct {
	view    *upstream.View
	nodes   int               // nodes the plugins looked at
	names   []string          // their names, in order
	allowed [][]string        // each set's nodes, in order
	set     map[string]int    // pod uid -> its allowed set (index into taints); absent: every node
	why     map[string]string // pod uid -> why no node is allowed
	// taints are the core taints of the allowed sets; outside holds, by
	// node, the taints of the sets it is not in.
	taints  []string
	outside map[string][]string
}

// filterPending runs the filters for every pending pod on view, whose
// nodes are nodes. Pods of equal namespace, labels and spec share one run.
func filterPending(ctx context.Context, view *upstream.View, nodes []*corev1.Node, pending []*corev1.Pod) *filtering {
	f := &filtering{view: view, nodes: len(nodes), set: map[string]int{}, why: map[string]string{}, outside: map[string][]string{}}
	for _, n := range nodes {
		f.names = append(f.names, n.Name)
	}
	slices.Sort(f.names)
	bySig := map[string]upstream.Verdict{}
	byNodes := map[string]int{} // allowed nodes, joined -> set
	for _, p := range pending {
		sig := podSignature(p)
		v, ok := bySig[sig]
		if !ok || sig == "" {
			v = view.Allowed(ctx, p)
			bySig[sig] = v
		}
		switch {
		case len(v.Nodes) == 0:
			f.why[string(p.UID)] = v.Why(len(nodes))
		case len(v.Nodes) < len(nodes):
			key := fmt.Sprint(v.Nodes)
			id, ok := byNodes[key]
			if !ok {
				id = len(f.taints)
				byNodes[key] = id
				f.taints = append(f.taints, filterPrefix+strconv.Itoa(id)+":NoSchedule")
				f.allowed = append(f.allowed, v.Nodes)
				f.markOutside(nodes, v.Nodes, f.taints[id])
			}
			f.set[string(p.UID)] = id
		}
	}
	return f
}

func (f *filtering) markOutside(nodes []*corev1.Node, allowed []string, taint string) {
	for _, n := range nodes {
		if _, in := slices.BinarySearch(allowed, n.Name); !in {
			f.outside[n.Name] = append(f.outside[n.Name], taint)
		}
	}
}

// podSignature is what the filters' verdict on a pod depends on besides
// the cluster: its namespace, labels and spec. Pods that claim resources
// or volumes get none ("") and are filtered one by one.
func podSignature(p *corev1.Pod) string {
	if upstream.NeedsPreBind(p) {
		return ""
	}
	b, err := json.Marshal(struct {
		NS     string
		Labels map[string]string
		Spec   *corev1.PodSpec
	}{p.Namespace, p.Labels, &p.Spec})
	if err != nil {
		return ""
	}
	return string(b)
}

// addTaints adds the filters' core taints to the nodes' extra taints.
func (f *filtering) addTaints(extra map[string][]string) {
	if f == nil {
		return
	}
	for node, ts := range f.outside {
		extra[node] = append(extra[node], ts...)
	}
}

// tolerations are the filter taints pods may ignore: those of every
// allowed set but their own, so that only nodes every pod allows remain.
func (f *filtering) tolerations(pods []*corev1.Pod) []string {
	if f == nil {
		return nil
	}
	own := map[int]bool{}
	for _, p := range pods {
		if id, ok := f.set[string(p.UID)]; ok {
			own[id] = true
		}
	}
	var out []string
	for id, t := range f.taints {
		if !own[id] {
			out = append(out, t)
		}
	}
	return out
}

// refusal says why no node is allowed for one of pods, or "".
func (f *filtering) refusal(pods []*corev1.Pod) string {
	if f == nil {
		return ""
	}
	for _, p := range pods {
		if why, ok := f.why[string(p.UID)]; ok {
			if len(pods) > 1 {
				return fmt.Sprintf("pod %s: %s", p.Name, why)
			}
			return why
		}
	}
	return ""
}

// recheck checks the started units' pods against the filters in the order
// the core placed them, each with the pods placed before it, reserving
// what they claim; a pod refused where the core placed it goes to another
// node that takes it (moved, by pod uid). A unit with a pod no node takes
// is not started: its reservations are released and its pods wait for the
// next cycle.
func (in *cycleInput) recheck(ctx context.Context, starts []sched.Start) []sched.Start {
	f := in.kube.filter
	if f == nil {
		return starts
	}
	kept := starts[:0]
	for _, st := range starts {
		mark := f.view.Mark()
		placed, _ := assignPods(st.Placement, in.byGroup[st.Unit.Job.Name])
		var err error
		for i, pod := range placed {
			if err = f.writeShared(ctx, pod, placed[:i]); err != nil {
				break
			}
			if err = f.place(ctx, pod, st.Placement.Tasks[i].NodeName, in.moved); err != nil {
				break
			}
		}
		if err == nil {
			kept = append(kept, st)
			continue
		}
		f.view.Undo(ctx, mark)
		for _, pod := range placed {
			delete(in.moved, string(pod.UID))
		}
		u := in.units[st.Unit.Job.Name]
		in.left = append(in.left, rejection{pods: u.pods, code: sched.CodeCapacity,
			message: fmt.Sprintf("with the pods placed before it, Kubernetes' filters refuse %v", err)})
	}
	return kept
}

// place places pod where the core did, or on another node its filters
// allow when the plugins refuse that one, recorded in moved.
func (f *filtering) place(ctx context.Context, pod *corev1.Pod, node string, moved map[string]string) error {
	err := f.view.Place(ctx, pod, node)
	if err == nil {
		return nil
	}
	if other, err2 := f.view.PlaceElsewhere(ctx, pod, f.nodesFor(pod)); err2 == nil {
		moved[string(pod.UID)] = other
		return nil
	}
	return fmt.Errorf("pod %s on node %s: %w", pod.Name, node, err)
}

// writeShared writes the claims of the pods placed before pod in its unit
// that share a ResourceClaim with it: a claim allocated in this cycle is
// in the API server before its next pod is placed, so that pod follows it
// to its node. Should the unit not start, the claim stays allocated, and
// reserved for none of its pods.
func (f *filtering) writeShared(ctx context.Context, pod *corev1.Pod, before []*corev1.Pod) error {
	names := upstream.ClaimNames(pod)
	if len(names) == 0 {
		return nil
	}
	for _, b := range before {
		if !slices.ContainsFunc(upstream.ClaimNames(b), func(n string) bool { return slices.Contains(names, n) }) {
			continue
		}
		if err := f.view.PreBind(ctx, b); err != nil {
			return fmt.Errorf("writing the claims pod %s shares with pod %s: %w", b.Name, pod.Name, err)
		}
	}
	return nil
}

// nodesFor are the nodes the filters allowed pod, in name order.
func (f *filtering) nodesFor(pod *corev1.Pod) []string {
	if id, ok := f.set[string(pod.UID)]; ok {
		return f.allowed[id]
	}
	return f.names
}

// prepare is what a binding does before it binds: write the pod's claims
// (ResourceClaim allocations, volume bindings); nil when it has none.
func (f *filtering) prepare(pod *corev1.Pod) func(context.Context) error {
	if f == nil || !upstream.NeedsPreBind(pod) {
		return nil
	}
	return func(ctx context.Context) error { return f.view.PreBind(ctx, pod) }
}
