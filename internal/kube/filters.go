package kube

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/kube/upstream"
	"github.com/corral-sched/corral/internal/sched"
)

// Kubernetes' own filter plugins (internal/kube/upstream) say on which
// nodes each pending pod may run. The core learns it as it learns node
// selectors: each distinct set of allowed nodes becomes a core taint on
// every node outside it, which the task groups of pods of other sets
// tolerate (a pod group whose pods the plugins allow different nodes is
// several task groups, each kept to its nodes). Pods placed during the
// cycle are then checked again, in the order the core placed them,
// against the nodes with the pods placed before them (anti-affinity,
// spread, ports, pod counts and devices among pods placed together). A
// pod refused there does not start, nor does the rest of its unit; the
// face remembers the refusal (refusals.go), and the next cycle's core
// places the unit knowing that pod may not go to that node.

// filterPrefix starts the core taints made from the filters' verdicts.
const filterPrefix = "corral.sh/filtered="

// filtering is one cycle's verdicts of the filter plugins.
type filtering struct {
	view    *upstream.View
	nodes   int               // nodes the plugins looked at
	allowed [][]string        // each set's nodes, in order
	byNodes map[string]int    // a set's nodes, joined -> the set
	set     map[string]int    // pod uid -> its allowed set (index into taints); absent: every node
	why     map[string]string // pod uid -> why no node is allowed
	// refusals are the nodes where, with the pods placed before them in
	// this cycle, the plugins refused pods the core had placed there.
	refusals map[string]podRefusal // by pod uid
	// freeing are, for pods allowed nowhere, the ways to free a node for
	// them by preemption (freeing.go), by pod uid.
	freeing map[string][]sched.Freeing
	// taints are the core taints of the allowed sets; outside holds, by
	// node, the taints of the sets it is not in.
	taints  []string
	outside map[string][]string
}

// filterPending runs the filters for every pending pod on view, whose
// nodes are nodes. Pods of equal namespace, labels and spec share one run.
// A pod the plugins refused in an earlier cycle where the core had placed
// it (refused: nodes by pod uid) is allowed the rest. onNodes lists the
// pods on nodes, asked only when a pod is refused where preemption might
// make room.
func filterPending(ctx context.Context, view *upstream.View, nodes []*corev1.Node, onNodes func() []*corev1.Pod, pending []*corev1.Pod,
	refused refusedNodes, sigs *signatures, scheduler string) *filtering {
	defer sigs.next()
	f := &filtering{view: view, nodes: len(nodes), byNodes: map[string]int{}, set: map[string]int{}, why: map[string]string{},
		outside: map[string][]string{}, refusals: map[string]podRefusal{}, freeing: map[string][]sched.Freeing{}}
	bySig := map[string]upstream.Verdict{}
	freeing := map[string][]sched.Freeing{}
	var byNode map[string][]*corev1.Pod
	for _, p := range pending {
		sig := sigs.of(view, p)
		v, ok := bySig[sig]
		if !ok || sig == "" {
			v = view.Allowed(ctx, p)
			bySig[sig] = v
		}
		allowed := v.Nodes
		if r := refused.pods[p.UID]; len(r) > 0 {
			allowed = slices.DeleteFunc(slices.Clone(allowed), func(n string) bool { return slices.Contains(r, n) })
		}
		switch {
		case len(v.Nodes) == 0:
			f.why[string(p.UID)] = v.Why(len(nodes))
			if len(v.Resolvable) == 0 {
				break
			}
			if byNode == nil {
				byNode = podsByNode(onNodes())
			}
			ways, ok := freeing[sig]
			if !ok || sig == "" {
				ways = freeingFor(ctx, view, p, v, byNode, scheduler)
				freeing[sig] = ways
			}
			if len(ways) > 0 {
				f.freeing[string(p.UID)] = ways
			}
		case len(allowed) == 0:
			f.why[string(p.UID)] = fmt.Sprintf("Kubernetes' filters allow it only on %v, where they refused it beside the pods placed before it", refused.pods[p.UID])
		case len(allowed) < len(nodes):
			f.set[string(p.UID)] = f.setOf(nodes, allowed)
		}
	}
	return f
}

// setOf is the id of the set of allowed nodes, made when new.
func (f *filtering) setOf(nodes []*corev1.Node, allowed []string) int {
	key := fmt.Sprint(allowed)
	id, ok := f.byNodes[key]
	if !ok {
		id = len(f.taints)
		f.byNodes[key] = id
		f.taints = append(f.taints, filterPrefix+strconv.Itoa(id)+":NoSchedule")
		f.allowed = append(f.allowed, allowed)
		f.markOutside(nodes, allowed, f.taints[id])
	}
	return id
}

func (f *filtering) markOutside(nodes []*corev1.Node, allowed []string, taint string) {
	for _, n := range nodes {
		if _, in := slices.BinarySearch(allowed, n.Name); !in {
			f.outside[n.Name] = append(f.outside[n.Name], taint)
		}
	}
}

// podSignature is what the filters' verdict on a pod depends on besides
// the cluster: its namespace, labels and spec as the plugins are shown
// them (without the CPU, memory and GPUs the core counts, so that pods
// that differ only there share one run), hashed. Pods that claim
// resources or volumes get none ("") and are filtered one by one.
func podSignature(view *upstream.View, p *corev1.Pod) string {
	if view.NeedsPreBind(p) {
		return ""
	}
	b, err := json.Marshal(struct {
		NS     string
		Labels map[string]string
		Spec   *corev1.PodSpec
	}{p.Namespace, p.Labels, filteredSpec(view.Shown(p).Spec)})
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return string(sum[:])
}

// filteredSpec is spec as far as any filter reads it: without the
// volumes that hold nothing on a node (the service account token, config
// maps, secrets, the downward API, empty dirs), which differ by name from
// pod to pod, nor the containers' mounts. spec itself is not changed.
func filteredSpec(spec corev1.PodSpec) *corev1.PodSpec {
	spec.Volumes = slices.DeleteFunc(slices.Clone(spec.Volumes), func(v corev1.Volume) bool {
		s := v.VolumeSource
		return s.Projected != nil || s.ConfigMap != nil || s.Secret != nil || s.DownwardAPI != nil || s.EmptyDir != nil
	})
	unmounted := func(cs []corev1.Container) []corev1.Container {
		cs = slices.Clone(cs)
		for i := range cs {
			cs[i].VolumeMounts = nil
		}
		return cs
	}
	spec.Containers, spec.InitContainers = unmounted(spec.Containers), unmounted(spec.InitContainers)
	return &spec
}

// signatures keeps the pending pods' signatures from cycle to cycle: a
// pod's object stays the same until the informer replaces it, and so
// does its signature while the resources DeviceClasses stand for do.
type signatures struct {
	last, now map[*corev1.Pod]signature
}

type signature struct{ mapped, sig string }

// of is p's signature, computed when p is new or a DeviceClass changed
// what the plugins are shown of it.
func (s *signatures) of(view *upstream.View, p *corev1.Pod) string {
	if s == nil {
		return podSignature(view, p)
	}
	if s.now == nil {
		s.now = map[*corev1.Pod]signature{}
	}
	mapped := view.Mapped(p)
	if old, ok := s.last[p]; ok && old.mapped == mapped {
		s.now[p] = old
		return old.sig
	}
	sig := podSignature(view, p)
	s.now[p] = signature{mapped: mapped, sig: sig}
	return sig
}

// next forgets the pods not asked about since the last call.
func (s *signatures) next() {
	if s != nil {
		s.last, s.now = s.now, nil
	}
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

// tolerations are the filter taints a pod's task may ignore: those of
// every allowed set but its own, so that only the nodes it is allowed
// remain.
func (f *filtering) tolerations(p *corev1.Pod) []string {
	if f == nil {
		return nil
	}
	own, ok := f.set[string(p.UID)]
	var out []string
	for id, t := range f.taints {
		if !ok || id != own {
			out = append(out, t)
		}
	}
	return out
}

// freeingOf are, for each of pods that no node allows, the ways to free a
// node for it (freeing.go); nil when one of them has none, or none is
// refused.
func (f *filtering) freeingOf(pods []*corev1.Pod) [][]sched.Freeing {
	if f == nil {
		return nil
	}
	var out [][]sched.Freeing
	for _, p := range pods {
		if _, blocked := f.why[string(p.UID)]; !blocked {
			continue
		}
		ways := f.freeing[string(p.UID)]
		if len(ways) == 0 {
			return nil
		}
		out = append(out, ways)
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
// what they claim. A unit with a pod refused where the core placed it is
// not started: its reservations are undone, the quota the cycle admitted
// it for is given back, and the refusal is kept for the next cycle, whose
// core places the unit without that pod on that node.
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
			node := st.Placement.Tasks[i].NodeName
			if err = f.view.Place(ctx, pod, node); err != nil {
				f.refusals[string(pod.UID)] = podRefusal{unit: st.Unit.Job.Name, node: node, besideOwn: placedOn(st.Placement.Tasks[:i], node)}
				err = fmt.Errorf("pod %s on node %s: %w", pod.Name, node, err)
				break
			}
		}
		if err == nil {
			kept = append(kept, st)
			continue
		}
		f.view.Undo(ctx, mark)
		switch a := st.Admission; {
		case in.kube.ledger != nil:
			in.kube.ledger.Release(st.Unit.Job.Name) // what the cycle admitted it for
		case a.Queue != "" && in.snap.Book != nil:
			_ = in.snap.Book.Release(a.Queue, a.Need)
		}
		u := in.units[st.Unit.Job.Name]
		in.left = append(in.left, rejection{pods: u.pods, code: sched.CodeCapacity,
			message: fmt.Sprintf("with the pods placed before it, Kubernetes' filters refuse %v; the next cycle places it elsewhere", err)})
	}
	return kept
}

// placedOn counts the tasks on node.
func placedOn(tasks []gang.Task, node string) int {
	n := 0
	for _, t := range tasks {
		if t.NodeName == node {
			n++
		}
	}
	return n
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

// release is what a binding does when it fails: run the plugins' Unreserve
// for the pod, as kube-scheduler does after a failed PreBind or Bind, so
// that its claims are neither left in the process of being allocated
// nor reserved for a pod that is not bound; nil when it claims nothing.
func (f *filtering) release(pod *corev1.Pod) func(context.Context) {
	if f == nil || !f.view.NeedsPreBind(pod) {
		return nil
	}
	return func(ctx context.Context) { f.view.Release(ctx, pod) }
}

// prepare is what a binding does before it binds: write the pod's claims
// (ResourceClaim allocations, volume bindings); nil when it has none.
func (f *filtering) prepare(pod *corev1.Pod) func(context.Context) error {
	if f == nil || !f.view.NeedsPreBind(pod) {
		return nil
	}
	return func(ctx context.Context) error { return f.view.PreBind(ctx, pod) }
}
