package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// AnnotationIntent on a PodGroup holds the placement corral is binding
// (JSON: the members and their nodes), written before the first binding
// and removed once the gang is whole or undone. A scheduler that finds it
// (a new leader after a crash, or the same one after a refused binding)
// finishes the recorded placement while every member and node is still
// valid, or else undoes it: the bound members are deleted so that the
// gang is queued again whole. A gang is never left running short of its
// minimum.
const AnnotationIntent = "corral.sh/binding"

// EventGangRecovered and EventGangUndone are on a PodGroup whose recorded
// placement was finished or undone.
const (
	EventGangRecovered = "GangBindingFinished"
	EventGangUndone    = "GangBindingUndone"
)

// intent is the placement of a gang being bound.
type intent struct {
	At      time.Time      `json:"at"`
	Members []intentMember `json:"members"`
}

type intentMember struct {
	Pod  string    `json:"pod"`
	UID  types.UID `json:"uid"`
	Node string    `json:"node"`
	// GPU is the GPU of Node a time-sliced share is counted on
	// (binding.shareGPU); "": none.
	GPU string `json:"gpu,omitempty"`
}

// groupObject is the object a pod group's placement is recorded on: its
// PodGroup (corral's coscheduling one, Kubernetes', Volcano's or KAI's).
// Groups inferred from owners (Jobs, JobSets, LeaderWorkerSets) have none:
// their records are kept in the units' memory ConfigMap
// (Config.UnitMemoryConfigMap, memstore.go), and without one they are
// bound without a record.
func (s *Scheduler) groupObject(g *podGroup) (schema.GroupVersionResource, bool) {
	switch g.Kind {
	case KindCoscheduling, "":
		return PodGroupResource, true
	case KindNative:
		return s.nativeRes, s.nativeRes.Resource != ""
	case KindVolcano:
		return VolcanoPodGroupResource, true
	case KindKAI:
		return KAIPodGroupResource, true
	}
	return schema.GroupVersionResource{}, false
}

// inferredKind says whether groups of kind are inferred from the pods'
// owner, with no PodGroup.
func inferredKind(kind string) bool { return kind == KindJob || kind == KindJobSet || kind == KindLWS }

// recordable says whether g's placement can be recorded before it is
// bound: on its PodGroup, or in the units' memory for an inferred group.
func (s *Scheduler) recordable(g *podGroup) bool {
	_, ok := s.groupObject(g)
	return ok || s.inMemory(g)
}

// inMemory says whether g's placement is recorded in the units' memory:
// an inferred group, with a memory ConfigMap.
func (s *Scheduler) inMemory(g *podGroup) bool {
	return inferredKind(g.Kind) && s.unitsStore != nil
}

// writeIntent records the gang's bindings on its PodGroup, or in the
// units' memory for an inferred group.
func (s *Scheduler) writeIntent(ctx context.Context, g *podGroup, binds []binding) error {
	in := intent{At: s.cfg.Now().UTC()}
	for _, b := range binds {
		in.Members = append(in.Members, intentMember{Pod: b.pod.Name, UID: b.pod.UID, Node: b.node, GPU: b.shareGPU})
	}
	if s.inMemory(g) {
		return s.unitsStore.writeBinding(ctx, g, in)
	}
	raw, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return s.annotateGroup(ctx, g, map[string]any{AnnotationIntent: string(raw)})
}

// clearIntent removes the record: the gang is whole, or undone. An
// inferred group's record not removed is looked at again next cycle.
func (s *Scheduler) clearIntent(ctx context.Context, g *podGroup) error {
	if s.inMemory(g) {
		err := s.unitsStore.clearBinding(ctx, g)
		if err != nil {
			s.inferredUnsettled.Store(true)
		}
		return err
	}
	return s.annotateGroup(ctx, g, map[string]any{AnnotationIntent: nil})
}

// annotateGroup merges annotations into the PodGroup (nil removes one).
func (s *Scheduler) annotateGroup(ctx context.Context, g *podGroup, ann map[string]any) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": ann}})
	if err != nil {
		return err
	}
	r, ok := s.groupObject(g)
	if !ok {
		return nil
	}
	_, err = s.dyn.Resource(r).Namespace(g.Namespace).Patch(ctx, g.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("pod group %s annotations: %w", g.key(), err)
	}
	return nil
}

// readIntent reads the record from a PodGroup object; nil when none.
func readIntent(obj *unstructured.Unstructured) (*intent, error) {
	raw := obj.GetAnnotations()[AnnotationIntent]
	if raw == "" {
		return nil, nil
	}
	in := &intent{}
	if err := json.Unmarshal([]byte(raw), in); err != nil {
		return nil, fmt.Errorf("pod group %s/%s: annotation %s: %w", obj.GetNamespace(), obj.GetName(), AnnotationIntent, err)
	}
	return in, nil
}

// gangBinds splits binds into those of gangs (by pod group key, whose
// placement is recorded first) and the rest.
func (s *Scheduler) gangBinds(units []*unit, binds []binding) (gangs map[string][]binding, groups map[string]*podGroup) {
	gangs, groups = map[string][]binding{}, map[string]*podGroup{}
	byName := map[string]*unit{}
	for _, u := range units {
		byName[u.name] = u
	}
	for _, b := range binds {
		u := byName[b.unit]
		if u == nil || u.group == nil || !s.recordable(u.group) {
			continue
		}
		gangs[u.name] = append(gangs[u.name], b)
		groups[u.name] = u.group
	}
	return gangs, groups
}

// recordIntents writes each gang's placement before any of its pods is
// bound, and returns the bindings to make: a gang whose record could not
// be written is not bound this cycle.
func (s *Scheduler) recordIntents(ctx context.Context, units []*unit, binds []binding) []binding {
	if s.dyn == nil {
		return binds
	}
	gangs, groups := s.gangBinds(units, binds)
	names := slices.Sorted(maps.Keys(gangs))
	failed := make([]bool, len(names))
	parallel(len(names), func(i int) { // several gangs' records at once, as bindings go
		if err := s.writeIntent(ctx, groups[names[i]], gangs[names[i]]); err != nil {
			s.log.Warn("recording a gang's placement; not binding it this cycle", "group", names[i], "err", err)
			failed[i] = true
		}
	})
	if !slices.Contains(failed, true) {
		return binds
	}
	return slices.DeleteFunc(slices.Clone(binds), func(b binding) bool {
		i, ok := slices.BinarySearch(names, b.unit)
		return ok && failed[i]
	})
}

// settleIntents clears the record of each gang bound whole, and finishes
// or undoes at once each gang with a refused binding.
func (s *Scheduler) settleIntents(ctx context.Context, units []*unit, binds []binding, errs []error) {
	if s.dyn == nil {
		return
	}
	gangs, groups := s.gangBinds(units, binds)
	refused := map[string]bool{}
	for i, err := range errs {
		if err != nil {
			refused[binds[i].unit] = true
		}
	}
	var whole []string
	for name := range gangs {
		if refused[name] {
			s.resolveGroup(ctx, groups[name])
		} else {
			whole = append(whole, name)
		}
	}
	parallel(len(whole), func(i int) {
		if err := s.clearIntent(ctx, groups[whole[i]]); err != nil {
			s.log.Warn("clearing a gang's placement record", "group", whole[i], "err", err)
		}
	})
}

// recoverIntents finds the PodGroups with a recorded placement (a
// previous leader died between two bindings, or a record was not cleared)
// and finishes or undoes each. It runs at the start of every cycle; the
// inferred groups' records are read from the units' memory when this
// replica starts leading, and again while one is left unsettled.
func (s *Scheduler) recoverIntents(ctx context.Context) {
	for kind, l := range map[string]cache.GenericLister{KindCoscheduling: s.groups, KindNative: s.native,
		KindVolcano: s.more.volcano, KindKAI: s.more.kai} {
		for _, obj := range s.listCustom(l) {
			if obj.GetAnnotations()[AnnotationIntent] != "" {
				s.resolveGroup(ctx, &podGroup{Namespace: obj.GetNamespace(), Name: obj.GetName(), Kind: kind, Native: kind == KindNative})
			}
		}
	}
	if s.inferredUnsettled.Swap(false) {
		s.recoverInferred(ctx)
	}
}

// recoverInferred finishes or undoes every inferred group's recorded
// placement.
func (s *Scheduler) recoverInferred(ctx context.Context) {
	records := s.bindingRecords(ctx)
	for _, key := range slices.Sorted(maps.Keys(records)) {
		b := records[key]
		s.settle(ctx, b.podGroup(), &b.intent)
	}
}

// bindingRecords reads the inferred groups' records from the units'
// memory; what cannot be read is logged and looked at again next cycle.
func (s *Scheduler) bindingRecords(ctx context.Context) map[string]*storedBinding {
	if s.unitsStore == nil {
		return nil
	}
	records, err := s.unitsStore.bindings(ctx)
	if err != nil {
		s.log.Warn("gangs' placement records", "err", err)
		if records == nil {
			s.inferredUnsettled.Store(true)
		}
	}
	return records
}

// resolveGroup reads the group's record and its members from the API
// server (not the cache, which may lag) and finishes or undoes the
// placement.
func (s *Scheduler) resolveGroup(ctx context.Context, g *podGroup) {
	r, ok := s.groupObject(g)
	if !ok {
		s.resolveInferred(ctx, g)
		return
	}
	obj, err := s.dyn.Resource(r).Namespace(g.Namespace).Get(ctx, g.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return
	}
	if err != nil {
		s.log.Warn("reading a gang's placement record", "group", g.key(), "err", err)
		return
	}
	in, err := readIntent(obj)
	if err != nil || in == nil {
		if err != nil {
			s.log.Warn("gang placement record", "err", err)
			_ = s.clearIntent(ctx, g)
		}
		return
	}
	if pg := s.parseGroup(obj, g.Kind); pg != nil {
		g = pg
	}
	s.settle(ctx, g, in)
}

// resolveInferred reads an inferred group's record from the units'
// memory and finishes or undoes the placement.
func (s *Scheduler) resolveInferred(ctx context.Context, g *podGroup) {
	if !s.inMemory(g) {
		return
	}
	if b := s.bindingRecords(ctx)[bindingKey(g)]; b != nil {
		s.settle(ctx, b.podGroup(), &b.intent)
	}
}

// settle finishes or undoes the recorded placement and removes the
// record.
func (s *Scheduler) settle(ctx context.Context, g *podGroup, in *intent) {
	if err := s.finishOrUndo(ctx, g, in); err != nil {
		s.log.Warn("gang placement", "group", g.key(), "err", err)
		if inferredKind(g.Kind) {
			s.inferredUnsettled.Store(true)
		}
		return
	}
	if err := s.clearIntent(ctx, g); err != nil {
		s.log.Warn("clearing a gang's placement record", "group", g.key(), "err", err)
	}
}

// parseGroup reads a PodGroup object of a kind; nil when it is no gang.
func (s *Scheduler) parseGroup(obj *unstructured.Unstructured, kind string) *podGroup {
	var g *podGroup
	var err error
	switch kind {
	case KindNative:
		g, err = parseNativePodGroup(obj, s.cfg.Levels)
	case KindVolcano, KindKAI:
		g, err = parseMinMemberGroup(obj, kind)
	default:
		g, err = parsePodGroup(obj)
	}
	if err != nil {
		return nil
	}
	return g
}

// members lists the group's pods as the API server has them now, by name:
// not terminal and not being deleted.
func (s *Scheduler) members(ctx context.Context, g *podGroup) (map[string]*corev1.Pod, error) {
	list, err := s.client.CoreV1().Pods(g.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("pods of %s: %w", g.key(), err)
	}
	out := map[string]*corev1.Pod{}
	for i := range list.Items {
		p := &list.Items[i]
		if GroupName(p) == g.Name && !terminal(p) && p.DeletionTimestamp == nil {
			out[p.Name] = p
		}
	}
	return out, nil
}

// finishOrUndo binds the recorded members not yet bound when every one of
// them still exists and its node can take it; otherwise, or when a
// binding is refused, it deletes the bound members unless enough of them
// are bound to run.
func (s *Scheduler) finishOrUndo(ctx context.Context, g *podGroup, in *intent) error {
	pods, err := s.members(ctx, g)
	if err != nil {
		return err
	}
	todo, why := s.remaining(ctx, pods, in)
	if why == "" && len(todo) > 0 {
		s.assume(todo, s.cfg.Now())
		for _, b := range todo {
			if err := bind(ctx, s.client, b, &s.n); err != nil {
				s.forget(b.pod)
				why = err.Error()
				break
			}
			s.bound(b)
		}
	}
	if why == "" {
		msg := fmt.Sprintf("finished the recorded placement of %d pods (%d bound now)", len(in.Members), len(todo))
		s.log.Info("gang placement finished", "group", g.key(), "bound_now", len(todo))
		s.groupEvent(g, corev1.EventTypeNormal, EventGangRecovered, msg)
		return nil
	}
	return s.undo(ctx, g, why)
}

// remaining are the recorded members still to bind, or why the record
// cannot be finished.
func (s *Scheduler) remaining(ctx context.Context, pods map[string]*corev1.Pod, in *intent) ([]binding, string) {
	var todo []binding
	planned := map[string]corev1.ResourceList{} // node -> requests of the members to bind there
	for _, m := range in.Members {
		p := pods[m.Pod]
		switch {
		case p == nil || p.UID != m.UID:
			return nil, fmt.Sprintf("member %s was deleted", m.Pod)
		case p.Spec.NodeName != "":
			continue
		}
		if why := s.nodeTakes(ctx, m.Node, p, planned); why != "" {
			return nil, fmt.Sprintf("member %s cannot go to %s: %s", m.Pod, m.Node, why)
		}
		todo = append(todo, binding{pod: p, node: m.Node, shareGPU: m.GPU})
	}
	return todo, ""
}

// nodeTakes says why node cannot take pod p besides what is planned
// there, or "" when it can: the node must exist, be healthy, and have the
// room the pod asks for beside the pods bound there now.
func (s *Scheduler) nodeTakes(ctx context.Context, name string, p *corev1.Pod, planned map[string]corev1.ResourceList) string {
	n, err := s.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "node " + name + ": " + err.Error()
	}
	if h := s.cfg.Health.check(n); h.kind != "" {
		return h.String()
	}
	pods, err := s.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + name})
	if err != nil {
		return err.Error()
	}
	used := corev1.ResourceList{}
	for i := range pods.Items {
		if !terminal(&pods.Items[i]) {
			addResources(used, podRequests(&pods.Items[i]))
		}
	}
	addResources(used, planned[name])
	want := podRequests(p)
	for r, q := range want {
		free := n.Status.Allocatable[r].DeepCopy()
		free.Sub(used[r])
		if free.Cmp(q) < 0 {
			return fmt.Sprintf("%s: %s free, %s asked", r, free.String(), q.String())
		}
	}
	if planned[name] == nil {
		planned[name] = corev1.ResourceList{}
	}
	addResources(planned[name], want)
	return ""
}

func addResources(to, l corev1.ResourceList) {
	for r, q := range l {
		sum := to[r].DeepCopy()
		sum.Add(q)
		to[r] = sum
	}
}

// undo stops the gang's bound members so that the gang is placed again
// whole, unless at least minMember of them are bound.
func (s *Scheduler) undo(ctx context.Context, g *podGroup, why string) error {
	pods, err := s.members(ctx, g)
	if err != nil {
		return err
	}
	var bound []*corev1.Pod
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			bound = append(bound, p)
		}
	}
	if len(bound) >= g.MinMember || len(bound) == 0 {
		s.log.Info("gang placement left as it is", "group", g.key(), "bound", len(bound), "why", why)
		return nil
	}
	slices.SortFunc(bound, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	if err := s.requeue(ctx, bound, "undone: "+why); err != nil {
		return err
	}
	msg := fmt.Sprintf("%d of minMember %d pods were bound when the placement could not be finished (%s); stopped them so that the gang is placed again whole",
		len(bound), g.MinMember, why)
	s.log.Warn("gang placement undone", "group", g.key(), "bound", len(bound), "why", why)
	s.groupEvent(g, corev1.EventTypeWarning, EventGangUndone, msg)
	return nil
}

// groupEvent records an event on a pod group's object: its PodGroup, or
// the owner an inferred group is read from.
func (s *Scheduler) groupEvent(g *podGroup, typ, reason, msg string) {
	if s.events == nil {
		return
	}
	if r, ok := s.groupObject(g); ok {
		s.events.Event(&corev1.ObjectReference{Kind: "PodGroup", APIVersion: r.GroupVersion().String(), Namespace: g.Namespace, Name: g.Name}, typ, reason, msg)
		return
	}
	if ref := ownerRef(g); ref != nil {
		s.events.Event(ref, typ, reason, msg)
	}
}

// ownerRef is the object an inferred group is read from: its Job, its
// JobSet or its LeaderWorkerSet; nil for other groups.
func ownerRef(g *podGroup) *corev1.ObjectReference {
	kind, apiVersion := "", ""
	switch g.Kind {
	case KindJob:
		kind, apiVersion = "Job", "batch/v1"
	case KindJobSet:
		kind, apiVersion = "JobSet", JobSetResource.GroupVersion().String()
	case KindLWS:
		kind, apiVersion = "LeaderWorkerSet", "leaderworkerset.x-k8s.io/v1"
	default:
		return nil
	}
	name := strings.TrimPrefix(g.Name, g.Kind+":")
	if g.Kind == KindLWS {
		name, _, _ = strings.Cut(name, ":") // lws:NAME:GROUP-INDEX
	}
	return &corev1.ObjectReference{Kind: kind, APIVersion: apiVersion, Namespace: g.Namespace, Name: name}
}

// bindEach binds as bindAll does; with a beforeBind hook, one at a time
// through it.
func (s *Scheduler) bindEach(ctx context.Context, binds []binding) []error {
	if s.beforeBind == nil {
		return bindAll(ctx, s.client, binds, &s.n)
	}
	errs := make([]error, len(binds))
	for i, b := range binds {
		if errs[i] = s.beforeBind(b); errs[i] == nil {
			errs[i] = bind(ctx, s.client, b, &s.n)
		}
	}
	return errs
}
