package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"sort"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// PodGroup phases beyond Pending and Scheduled that corral writes in a
// coscheduling PodGroup's status.phase.
const (
	PhaseRunning  = "Running"  // at least minMember pods running
	PhaseFinished = "Finished" // at least minMember pods succeeded
)

// EventPreempted is the upstream scheduler's event on a pod evicted to
// make room for another.
const EventPreempted = "Preempted"

// ConditionInitiallyScheduled is the Workload API PodGroup's condition
// that its gang was scheduled once; it never goes back to False.
const ConditionInitiallyScheduled = "PodGroupInitiallyScheduled"

// statusPatch is one status write: a merge (or strategic merge) patch of
// an object's status subresource.
type statusPatch struct {
	res       schema.GroupVersionResource
	ns, name  string
	patchType types.PatchType
	body      []byte
	// same, when set, stands for body in telling whether it was written
	// already (a body with a time in it differs each cycle).
	same string
}

func (p statusPatch) key() string { return p.res.String() + "|" + p.ns + "/" + p.name }

func (p statusPatch) content() string {
	if p.same != "" {
		return p.same
	}
	return string(p.body)
}

// statusWriter keeps the status of PodGroups and Queues current from a
// goroutine of its own: each cycle submits what every status should say,
// and only what differs from the object as the cache shows it, and from
// what was last written, is written.
type statusWriter struct {
	dyn  dynamic.Interface
	log  *slog.Logger
	kick chan struct{}

	writes atomic.Int64 // status writes made

	mu      sync.Mutex
	want    []statusPatch
	written map[string]string // key -> body last written
	failed  map[string]bool   // resources whose status cannot be written, logged once
}

func newStatusWriter(dyn dynamic.Interface, log *slog.Logger) *statusWriter {
	return &statusWriter{dyn: dyn, log: log, kick: make(chan struct{}, 1), written: map[string]string{}, failed: map[string]bool{}}
}

// submit queues the patches not written already, and wakes the writer.
// What was written and the cache shows is forgotten: a status that
// differs from the cache again is written again.
func (w *statusWriter) submit(patches []statusPatch) {
	if w == nil || w.dyn == nil {
		return
	}
	w.mu.Lock()
	var want []statusPatch
	written := map[string]string{} // only what the cache may not show yet
	for _, p := range patches {
		if w.written[p.key()] == p.content() {
			written[p.key()] = p.content()
		} else {
			want = append(want, p)
		}
	}
	w.want, w.written = want, written
	w.mu.Unlock()
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// run writes what is submitted until ctx ends.
func (w *statusWriter) run(ctx context.Context) {
	if w == nil {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.kick:
			w.flush(ctx)
		}
	}
}

func (w *statusWriter) flush(ctx context.Context) {
	w.mu.Lock()
	want := w.want
	w.want = nil
	w.mu.Unlock()
	parallel(len(want), func(i int) {
		p := want[i]
		_, err := w.dyn.Resource(p.res).Namespace(p.ns).Patch(ctx, p.name, p.patchType, p.body, metav1.PatchOptions{}, "status")
		w.mu.Lock()
		defer w.mu.Unlock()
		switch {
		case err == nil:
			w.writes.Add(1)
			w.written[p.key()] = p.content()
		case apierrors.IsNotFound(err) || apierrors.IsConflict(err) || ctx.Err() != nil:
		case !w.failed[p.res.String()]:
			w.failed[p.res.String()] = true
			w.log.Warn("status not written", "resource", p.res.GroupResource().String(), "object", p.ns+"/"+p.name, "err", err)
		}
	})
}

// groupCount is how many pods of a group are in each state; ours: some
// are this scheduler's.
type groupCount struct {
	scheduled, running, succeeded, failed int
	ours                                  bool
}

// countGroups counts the pods of each group (namespace/name): bound ones
// (or assumed bound) not finished, running, succeeded and failed.
func countGroups(pods []*corev1.Pod, assumed map[string]string, scheduler string) map[string]*groupCount {
	out := map[string]*groupCount{}
	for _, p := range pods {
		g := GroupName(p)
		if g == "" {
			continue
		}
		key := p.Namespace + "/" + g
		c := out[key]
		if c == nil {
			c = &groupCount{}
			out[key] = c
		}
		c.ours = c.ours || p.Spec.SchedulerName == scheduler
		switch {
		case p.Status.Phase == corev1.PodSucceeded:
			c.succeeded++
		case p.Status.Phase == corev1.PodFailed:
			c.failed++
		case p.DeletionTimestamp != nil:
		case p.Spec.NodeName != "" || assumed[string(p.UID)] != "":
			c.scheduled++
			if p.Status.Phase == corev1.PodRunning {
				c.running++
			}
		}
	}
	return out
}

// groupPhase is a coscheduling PodGroup's phase given its pods.
func groupPhase(c groupCount, min int) string {
	switch {
	case c.running >= min:
		return PhaseRunning
	case c.scheduled >= min:
		return PhaseScheduled
	case c.succeeded >= min:
		return PhaseFinished
	}
	return PhasePending
}

// coschedulingStatus is the status patch of a coscheduling PodGroup, or
// false when its status says so already.
func coschedulingStatus(obj *unstructured.Unstructured, c groupCount) (statusPatch, bool) {
	min, _, _ := unstructured.NestedInt64(obj.Object, "spec", "minMember")
	want := map[string]any{
		"phase": groupPhase(c, max(int(min), 1)), "scheduled": int64(c.scheduled), "running": int64(c.running),
		"succeeded": int64(c.succeeded), "failed": int64(c.failed),
	}
	return mergeStatus(obj, PodGroupResource, want)
}

// mergeStatus is a merge patch of obj's status fields to want, or false
// when its status has them already.
func mergeStatus(obj *unstructured.Unstructured, res schema.GroupVersionResource, want map[string]any) (statusPatch, bool) {
	cur, _, _ := unstructured.NestedMap(obj.Object, "status")
	same := true
	for k, v := range want {
		if !reflect.DeepEqual(cur[k], v) {
			same = false
		}
	}
	if same {
		return statusPatch{}, false
	}
	body, _ := json.Marshal(map[string]any{"status": want})
	return statusPatch{res: res, ns: obj.GetNamespace(), name: obj.GetName(), patchType: types.MergePatchType, body: body}, true
}

// volcanoStatus is the status patch of a Volcano PodGroup, as Volcano's
// own scheduler keeps it, or false when its status says so already:
// Running once minMember pods are bound (or done), Completed when they all
// succeeded, else Pending; with running, succeeded and failed counts.
func volcanoStatus(obj *unstructured.Unstructured, c groupCount) (statusPatch, bool) {
	min, _, _ := unstructured.NestedInt64(obj.Object, "spec", "minMember")
	phase := "Pending"
	switch {
	case c.scheduled == 0 && c.succeeded >= int(max(min, 1)):
		phase = "Completed"
	case c.scheduled+c.succeeded >= int(max(min, 1)):
		phase = "Running"
	}
	want := map[string]any{"phase": phase, "running": int64(c.running), "succeeded": int64(c.succeeded), "failed": int64(c.failed)}
	return mergeStatus(obj, VolcanoPodGroupResource, want)
}

// nativeStatus sets the Workload API PodGroup's PodGroupInitiallyScheduled
// condition to True once minCount pods are bound, unless it is True
// already; it never writes False over True.
func nativeStatus(obj *unstructured.Unstructured, res schema.GroupVersionResource, c groupCount) (statusPatch, bool) {
	min, found, _ := unstructured.NestedInt64(obj.Object, "spec", "schedulingPolicy", "gang", "minCount")
	if !found {
		min = 1
	}
	if c.scheduled+c.succeeded < int(max(min, 1)) {
		return statusPatch{}, false
	}
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, x := range conds {
		if m, _ := x.(map[string]any); m["type"] == ConditionInitiallyScheduled && m["status"] == "True" {
			return statusPatch{}, false
		}
	}
	cond := metav1.Condition{Type: ConditionInitiallyScheduled, Status: metav1.ConditionTrue, Reason: "Scheduled",
		Message: fmt.Sprintf("%d pods bound by corral, of minCount %d", c.scheduled, min), LastTransitionTime: metav1.Now(),
		ObservedGeneration: obj.GetGeneration()}
	body, _ := json.Marshal(map[string]any{"status": map[string]any{"conditions": []metav1.Condition{cond}}})
	return statusPatch{res: res, ns: obj.GetNamespace(), name: obj.GetName(), patchType: types.StrategicMergePatchType, body: body,
		same: ConditionInitiallyScheduled + "=True"}, true
}

// queueUse is what a Queue holds and waits for.
type queueUse struct {
	admitted, pending int
	gpus              float64
}

// queueStatus is the status patch of a Queue, or false when its status
// says so already: pods admitted (bound) and pending, GPUs in use, and
// those borrowed beyond its quota from its cohort.
func queueStatus(obj *unstructured.Unstructured, q *queueSpec, u queueUse) (statusPatch, bool) {
	round := func(f float64) float64 { return math.Round(f*1000) / 1000 }
	borrowed := 0.0
	if q.GPUs >= 0 && u.gpus > float64(q.GPUs) {
		borrowed = u.gpus - float64(q.GPUs)
	}
	want := map[string]any{
		"admitted": int64(u.admitted), "pending": int64(u.pending),
		"usage": map[string]any{"gpus": round(u.gpus)}, "borrowed": map[string]any{"gpus": round(borrowed)},
	}
	cur, _, _ := unstructured.NestedMap(obj.Object, "status")
	if sameJSON(cur, want) {
		return statusPatch{}, false
	}
	body, _ := json.Marshal(map[string]any{"status": want})
	return statusPatch{res: QueueResource, name: obj.GetName(), patchType: types.MergePatchType, body: body}, true
}

// sameJSON compares two JSON-like maps by their encoding: numbers read
// back from the API server may be int64 where float64 was written.
func sameJSON(a, b map[string]any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// statusPatches computes the status every PodGroup and Queue should show
// now and returns the patches of those that differ, given the pods of pod
// groups (grouped) and those in a Queue (queued).
func (s *Scheduler) statusPatches(grouped, queued []*corev1.Pod, assumed map[string]string, queues map[string]*queueSpec) []statusPatch {
	counts := countGroups(grouped, assumed, s.cfg.SchedulerName)
	owned := map[string]bool{}
	// mine is a group's pod counts, or nil when its status is not this
	// scheduler's to write: none of its pods is this scheduler's, nor was
	// in an earlier cycle (a group whose pods all went away is written
	// once more, with none).
	mine := func(obj *unstructured.Unstructured) *groupCount {
		key := obj.GetNamespace() + "/" + obj.GetName()
		c := counts[key]
		switch {
		case c != nil && c.ours:
		case s.ownedGroups[key]:
			c = &groupCount{}
		default:
			return nil
		}
		owned[key] = true
		return c
	}
	var out []statusPatch
	for _, obj := range s.listCustom(s.groups) {
		if c := mine(obj); c != nil {
			if p, ok := coschedulingStatus(obj, *c); ok {
				out = append(out, p)
			}
		}
	}
	for _, obj := range s.listCustom(s.native) {
		if c := mine(obj); c != nil {
			if p, ok := nativeStatus(obj, s.nativeRes, *c); ok {
				out = append(out, p)
			}
		}
	}
	for _, obj := range s.listCustom(s.more.volcano) {
		if c := mine(obj); c != nil {
			if p, ok := volcanoStatus(obj, *c); ok {
				out = append(out, p)
			}
		}
	}
	s.ownedGroups = owned
	use := s.queueUse(queued, assumed, queues)
	for _, obj := range s.listCustom(s.crds.lister(keyQueues)) {
		if q := queues[obj.GetName()]; q != nil {
			if p, ok := queueStatus(obj, q, use[q.Name]); ok {
				out = append(out, p)
			}
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].key() < out[b].key() })
	return out
}

// queueUse sums, per Queue, the bound pods of this scheduler and the GPUs
// they hold, and the pods that wait.
func (s *Scheduler) queueUse(pods []*corev1.Pod, assumed map[string]string, queues map[string]*queueSpec) map[string]queueUse {
	out := map[string]queueUse{}
	for _, p := range pods {
		q := p.Labels[LabelQueue]
		if queues[q] == nil || terminal(p) || p.Spec.SchedulerName != s.cfg.SchedulerName {
			continue
		}
		u := out[q]
		node := p.Spec.NodeName
		if node == "" {
			node = assumed[string(p.UID)]
		}
		switch {
		case node != "":
			bound := p
			if p.Spec.NodeName == "" {
				bound = p.DeepCopy()
				bound.Spec.NodeName = node
			}
			u.admitted++
			u.gpus += podRecord("", bound, s.node(node), queues, s.cfg.Now()).GPUs
		case p.DeletionTimestamp == nil && len(p.Spec.SchedulingGates) == 0:
			u.pending++
		}
		out[q] = u
	}
	return out
}

// preempted records a Preempted event on a pod evicted for another unit,
// as the upstream scheduler does on its victims.
func (s *Scheduler) preempted(v *corev1.Pod, p *preemption) {
	if s.events == nil {
		return
	}
	s.events.Event(v, corev1.EventTypeNormal, EventPreempted, fmt.Sprintf("Preempted by corral on node %s to make room for %s: %s", v.Spec.NodeName, p.unit, p.reason))
}

// disrupted sets the DisruptionTarget condition of the Workload API
// PodGroups of the victims, as the upstream scheduler does when it
// preempts a gang: once per group and preemption.
func (s *Scheduler) disrupted(ctx context.Context, victims []*corev1.Pod, p *preemption) {
	if s.dyn == nil || s.nativeRes.Version == "" {
		return
	}
	done := map[string]bool{}
	for _, v := range victims {
		name, kind := groupOf(v)
		if kind != KindNative || done[v.Namespace+"/"+name] {
			continue
		}
		done[v.Namespace+"/"+name] = true
		cond := metav1.Condition{Type: "DisruptionTarget", Status: metav1.ConditionTrue, Reason: "PreemptionByScheduler",
			Message: fmt.Sprintf("preempted by corral to make room for %s", p.unit), LastTransitionTime: metav1.Now()}
		body, _ := json.Marshal(map[string]any{"status": map[string]any{"conditions": []metav1.Condition{cond}}})
		_, err := s.dyn.Resource(s.nativeRes).Namespace(v.Namespace).Patch(ctx, name, types.StrategicMergePatchType, body, metav1.PatchOptions{}, "status")
		if err != nil && !apierrors.IsNotFound(err) {
			s.log.Warn("pod group disruption condition", "group", v.Namespace+"/"+name, "err", err)
		}
	}
}
