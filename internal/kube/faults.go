package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/corral-sched/corral/internal/faultrec"
	"github.com/corral-sched/corral/internal/sched"
)

// Annotations of fault handling. A job writes AnnotationCheckpoint (where
// its last checkpoint is) and AnnotationCheckpointTime (RFC 3339, when it
// was written) on its pods or PodGroup; corral copies the checkpoint to
// AnnotationResumeFrom of the pods it starts again.
const (
	// AnnotationOnNodeFailure on a PodGroup says what to do when a node
	// under the running gang fails: "replace" (default) moves its pods
	// there to a spare or free node of the same domain, and the gang
	// resumes from its last checkpoint; "requeue" stops the gang whole
	// and queues it again at the front.
	AnnotationOnNodeFailure  = "corral.sh/on-node-failure"
	AnnotationCheckpoint     = "corral.sh/checkpoint"
	AnnotationCheckpointTime = "corral.sh/checkpoint-time"
	AnnotationResumeFrom     = "corral.sh/resume-from"
	// AnnotationQueuedSince (RFC 3339) on a PodGroup or pod puts it in
	// its queue as if it arrived then: requeued work keeps its place.
	AnnotationQueuedSince = "corral.sh/queued-since"
	// AnnotationNotice is set on a pod whose node is about to go, with the
	// time of the notice; the pod then stops with its own grace period.
	AnnotationNotice = "corral.sh/interruption-notice"
	// AnnotationRequeuedFrom names the pod a requeued or moved pod
	// replaces: corral starts pods it placed (with no controller to
	// recreate them) again as copies.
	AnnotationRequeuedFrom = "corral.sh/requeued-from"
	// EventNodeFault is on the PodGroup (or pod) a fault stopped or moved.
	EventNodeFault = "NodeFault"
)

// stricken is a unit with pods on a faulty node: one pod, or a pod group
// with every bound member.
type stricken struct {
	key      string
	group    *podGroup
	members  []*corev1.Pod // bound and live, in name order
	node     string        // the faulty node
	fault    nodeFault
	failures []*corev1.Pod // the members on the faulty node
}

// handleFaults stops or moves the work on nodes that failed, report a GPU
// fault or have a notice to go. It runs at the start of every cycle;
// each pod is handled once.
func (s *Scheduler) handleFaults(ctx context.Context) {
	nodes, err := s.nodes.List(s.cfg.NodeSelector)
	if err != nil {
		return
	}
	faulty, sick := s.faultyNodes(nodes), s.cfg.Health.deviceFaults(s.podsNow.pods(s.podsNow.sick))
	if len(faulty) == 0 && len(sick) == 0 {
		return
	}
	pods, err := s.pods.List(labels.Everything())
	if err != nil {
		return
	}
	for _, w := range s.strickenUnits(pods, faulty, sick) {
		s.handleUnit(ctx, w, nodes, pods) // marks what it stopped; the rest is tried again next cycle
	}
}

// faultyNodes are the nodes whose work must move: failed (past the
// grace), faulty GPUs, or a notice.
func (s *Scheduler) faultyNodes(nodes []*corev1.Node) map[string]nodeFault {
	out := map[string]nodeFault{}
	now := s.cfg.Now()
	for _, n := range nodes {
		f := s.cfg.Health.check(n)
		switch f.kind {
		case FaultGPU, FaultNotice:
		case FaultCordoned:
			if !s.cfg.Health.MoveOffCordoned {
				continue
			}
		case FaultNotReady:
			if s.cfg.Health.Grace > 0 && !f.since.IsZero() && now.Sub(f.since) < s.cfg.Health.Grace {
				continue
			}
		default:
			continue
		}
		out[n.Name] = f
	}
	return out
}

// strickenUnits groups the live pods of this scheduler on faulty nodes,
// or with a faulty device, into units, in key order.
func (s *Scheduler) strickenUnits(pods []*corev1.Pod, faulty map[string]nodeFault, sick map[types.UID]nodeFault) []*stricken {
	groups := s.podGroups(pods)
	byKey := map[string]*stricken{}
	for _, p := range pods {
		f, ok := faulty[p.Spec.NodeName]
		if df, bad := sick[p.UID]; bad && !ok {
			f, ok = df, true
		}
		if !ok || !s.runsHere(p) || s.handled[p.UID] {
			continue
		}
		key := unitName(p)
		w := byKey[key]
		if w == nil {
			w = &stricken{key: key, node: p.Spec.NodeName, fault: f, group: groups[p.Namespace+"/"+GroupName(p)]}
			byKey[key] = w
		}
		w.failures = append(w.failures, p)
	}
	for _, w := range byKey {
		w.members = w.failures
		if w.group != nil {
			w.members = nil
			for _, p := range pods {
				if p.Namespace == w.group.Namespace && GroupName(p) == w.group.Name && s.runsHere(p) {
					w.members = append(w.members, p)
				}
			}
		}
		slices.SortFunc(w.members, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	}
	out := slices.Collect(maps.Values(byKey))
	slices.SortFunc(out, func(a, b *stricken) int { return strings.Compare(a.key, b.key) })
	return out
}

// runsHere: bound by this scheduler, running or about to, not being deleted.
func (s *Scheduler) runsHere(p *corev1.Pod) bool {
	return p.Spec.NodeName != "" && p.Spec.SchedulerName == s.cfg.SchedulerName && !terminal(p) && p.DeletionTimestamp == nil
}

// handleUnit moves a gang's pods off a failed node to a spare when its
// PodGroup allows and one is there, and otherwise stops the unit whole
// and queues it again at the front.
func (s *Scheduler) handleUnit(ctx context.Context, w *stricken, nodes []*corev1.Node, pods []*corev1.Pod) {
	ann := s.groupAnnotations(w.group)
	rec := faultrec.Record{Event: faultrec.Event, Time: s.cfg.Now().UTC(), Kind: recordKind(w.fault.kind), Node: w.node, Source: w.fault.source,
		Work: strings.TrimPrefix(w.key, "group "), GPUs: gpusOf(w.members)}
	rec.LostGPUHours = s.lostGPUHours(w, ann)
	move, why := sched.MovesOff(sched.Struck{Tasks: len(w.members), Notice: w.fault.graceful(), Requeue: ann[AnnotationOnNodeFailure] == "requeue"})
	if move && w.group != nil {
		to, err := s.replace(ctx, w, ann, nodes, pods)
		if err == nil {
			rec.Action, rec.To = faultrec.Replaced, to
			s.reportFault(w, rec, fmt.Sprintf("node %s: %s; moved its %d pods there to %s, the gang resumes from its last checkpoint",
				w.node, w.fault, len(w.failures), to))
			return
		}
		why = err.Error()
	}
	if why != "" {
		s.log.Info("requeueing whole", "unit", w.key, "node", w.node, "why", why)
	}
	if err := s.requeueUnit(ctx, w, ann); err != nil {
		s.log.Warn("requeueing after a node fault", "unit", w.key, "err", err)
		return
	}
	rec.Action = faultrec.Requeued
	s.reportFault(w, rec, fmt.Sprintf("node %s: %s; stopped all %d pods and queued them again at the front", w.node, w.fault, len(w.members)))
}

func recordKind(kind string) string {
	switch kind {
	case FaultNotReady:
		return faultrec.NodeFailure
	case FaultNotice:
		return faultrec.SpotNotice
	case FaultCordoned:
		return faultrec.Maintenance
	}
	return faultrec.GPUFault
}

// reportFault writes the fault's event and accounting line.
func (s *Scheduler) reportFault(w *stricken, rec faultrec.Record, msg string) {
	if !w.fault.since.IsZero() {
		rec.RecoverySeconds = max(rec.Time.Sub(w.fault.since).Seconds(), 0)
	}
	s.ledger.writeFault(recordKey("fault", string(w.failures[0].UID)), rec)
	s.log.Warn("node fault handled", "unit", w.key, "node", w.node, "fault", w.fault.String(), "action", rec.Action, "to", rec.To,
		"lost_gpu_hours", rec.LostGPUHours)
	if s.events == nil {
		return
	}
	if w.group != nil {
		s.groupEvent(w.group, corev1.EventTypeWarning, EventNodeFault, msg)
		return
	}
	s.events.Event(w.members[0], corev1.EventTypeWarning, EventNodeFault, msg)
}

// writeFault writes a fault record as a line of the accounting log (and
// of the log kept in the API server); key names the incident.
func (l *ledger) writeFault(key string, r faultrec.Record) {
	if l.off() {
		return
	}
	if line, err := json.Marshal(r); err == nil {
		l.store.addLine(key, line)
	}
	if l.enc == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_ = l.enc.Encode(r)
}

// groupAnnotations are the PodGroup's annotations from the cache.
func (s *Scheduler) groupAnnotations(g *podGroup) map[string]string {
	if g == nil {
		return map[string]string{}
	}
	l := map[string]cache.GenericLister{KindCoscheduling: s.groups, KindNative: s.native, KindVolcano: s.more.volcano, KindKAI: s.more.kai}[g.Kind]
	if l == nil {
		return map[string]string{}
	}
	obj, err := l.ByNamespace(g.Namespace).Get(g.Name)
	if err != nil {
		return map[string]string{}
	}
	if u, ok := obj.(*unstructured.Unstructured); ok && u.GetAnnotations() != nil {
		return u.GetAnnotations()
	}
	return map[string]string{}
}

func gpusOf(pods []*corev1.Pod) float64 {
	var n float64
	for _, p := range pods {
		if d, err := demand(p); err == nil {
			n += float64(d.GPUs) + float64(d.GPUMilli)/1000
		}
	}
	return n
}

// lostGPUHours is the work of the unit since its last checkpoint (or its
// start), up to the fault: all of the unit's GPUs stop or restart. A unit
// that checkpoints loses nothing on a notice: it checkpoints then.
func (s *Scheduler) lostGPUHours(w *stricken, ann map[string]string) float64 {
	end := w.fault.since
	if end.IsZero() {
		end = s.cfg.Now()
	}
	var lost float64
	for _, p := range w.members {
		ckpt, checkpoints := checkpointTime(p.Annotations, ann)
		if w.fault.graceful() && checkpoints {
			continue
		}
		from := boundAt(p)
		if ckpt.After(from) {
			from = ckpt
		}
		if from.IsZero() || !end.After(from) {
			continue
		}
		lost += gpusOf([]*corev1.Pod{p}) * end.Sub(from).Hours()
	}
	return lost
}

// checkpointTime is the latest checkpoint time the pod or its group
// record, and whether either says the work checkpoints at all.
func checkpointTime(pod, group map[string]string) (time.Time, bool) {
	var t time.Time
	checkpoints := false
	for _, ann := range []map[string]string{pod, group} {
		if ann[AnnotationCheckpoint] != "" || ann[AnnotationCheckpointTime] != "" {
			checkpoints = true
		}
		if at, err := time.Parse(time.RFC3339, ann[AnnotationCheckpointTime]); err == nil && at.After(t) {
			t = at
		}
	}
	return t, checkpoints
}

// resumeFrom is the checkpoint to resume from: the group's, else a
// member's.
func resumeFrom(members []*corev1.Pod, group map[string]string) string {
	if c := group[AnnotationCheckpoint]; c != "" {
		return c
	}
	for _, p := range members {
		if c := p.Annotations[AnnotationCheckpoint]; c != "" {
			return c
		}
	}
	return ""
}

// queuedSince is when the unit first queued: an earlier requeue's
// record, else its oldest pod's creation.
func queuedSince(members []*corev1.Pod, group map[string]string) time.Time {
	if t, err := time.Parse(time.RFC3339, group[AnnotationQueuedSince]); err == nil {
		return t
	}
	var first time.Time
	for _, p := range members {
		t := p.CreationTimestamp.Time
		if at, err := time.Parse(time.RFC3339, p.Annotations[AnnotationQueuedSince]); err == nil {
			t = at
		}
		if first.IsZero() || t.Before(first) {
			first = t
		}
	}
	return first
}

// podQueuedSince is the pod's place in its queue: AnnotationQueuedSince
// when an earlier start was stopped (or its controller knows when its job
// was submitted), else its creation. The annotation may not put the pod
// later than it was created, to the second the API server keeps; within
// that second it orders pods created together.
func podQueuedSince(p *corev1.Pod) time.Time {
	created := p.CreationTimestamp.Time
	if at, err := time.Parse(time.RFC3339, p.Annotations[AnnotationQueuedSince]); err == nil && at.Before(created.Add(time.Second)) {
		return at
	}
	return created
}

// requeueUnit stops every member of the unit and queues it again at the
// front, with its last checkpoint as the resume point: members on a
// failed node are deleted at once, others with their own grace period
// (after a notice annotation when the node is about to go); members no
// controller recreates are created again as copies.
func (s *Scheduler) requeueUnit(ctx context.Context, w *stricken, ann map[string]string) error {
	since := queuedSince(w.members, ann).UTC().Format(time.RFC3339Nano)
	resume := resumeFrom(w.members, ann)
	if w.group != nil {
		set := map[string]any{AnnotationQueuedSince: since}
		if resume != "" {
			set[AnnotationResumeFrom] = resume
		}
		if err := s.annotateGroup(ctx, w.group, set); err != nil {
			return err
		}
	}
	if w.fault.graceful() {
		s.notify(ctx, w.members)
	}
	extra := map[string]string{AnnotationQueuedSince: since}
	if resume != "" {
		extra[AnnotationResumeFrom] = resume
	}
	return s.requeueWith(ctx, w.members, w.node, extra)
}

// requeue stops pods and queues them again (copies for those without a
// controller), as requeueUnit does, without a fault.
func (s *Scheduler) requeue(ctx context.Context, pods []*corev1.Pod, why string) error {
	return s.requeueWith(ctx, pods, "", map[string]string{AnnotationQueuedSince: queuedSince(pods, nil).UTC().Format(time.RFC3339Nano)})
}

// requeueWith deletes the pods (at once on the failed node, else with
// their own grace) and creates copies of those without a controller. It
// goes on past a pod it cannot stop, so that as few as possible run on
// short of the rest, and returns the errors.
func (s *Scheduler) requeueWith(ctx context.Context, pods []*corev1.Pod, failed string, extra map[string]string) error {
	var errs []error
	for _, p := range pods {
		if s.handled[p.UID] {
			continue // stopped already (a move that failed halfway)
		}
		errs = append(errs, s.requeuePod(ctx, p, failed, extra))
	}
	return errors.Join(errs...)
}

// requeuePod stops one pod and creates its copy when no controller will.
func (s *Scheduler) requeuePod(ctx context.Context, p *corev1.Pod, failed string, extra map[string]string) error {
	opts := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}}
	if failed != "" && p.Spec.NodeName == failed {
		zero := int64(0)
		opts.GracePeriodSeconds = &zero
	}
	if err := s.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, opts); err != nil && !isGone(err) {
		return fmt.Errorf("stopping %s: %w", podKey(p), err)
	}
	s.handled[p.UID] = true
	if metav1.GetControllerOf(p) != nil {
		return nil // its controller creates it again
	}
	if _, err := s.client.CoreV1().Pods(p.Namespace).Create(ctx, podCopy(p, extra), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("queueing %s again: %w", podKey(p), err)
	}
	return nil
}

// notify sets the notice annotation on each pod, which a pod reads
// through the downward API to checkpoint before its grace period ends.
func (s *Scheduler) notify(ctx context.Context, pods []*corev1.Pod) {
	at := s.cfg.Now().UTC().Format(time.RFC3339Nano)
	for _, p := range pods {
		patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, AnnotationNotice, at)
		if _, err := s.client.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
			s.log.Warn("interruption notice", "pod", podKey(p), "err", err)
		}
	}
}

// podCopy is a pending copy of p under the next name, with extra
// annotations: the pod started again.
func podCopy(p *corev1.Pod, extra map[string]string) *corev1.Pod {
	c := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: nextName(p.Name), Namespace: p.Namespace, Labels: maps.Clone(p.Labels), Annotations: maps.Clone(p.Annotations),
	}}
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	// The notice, and what the old pod's binding wrote (when and on which
	// GPU of its node it was counted), are the old pod's, not the copy's.
	delete(c.Annotations, AnnotationNotice)
	delete(c.Annotations, AnnotationBoundAt)
	delete(c.Annotations, AnnotationShareGPU)
	maps.Copy(c.Annotations, extra)
	c.Annotations[AnnotationRequeuedFrom] = p.Name
	c.Spec = *p.Spec.DeepCopy()
	c.Spec.NodeName = ""
	// The token volume the API server added is added again to the copy.
	c.Spec.Volumes = slices.DeleteFunc(c.Spec.Volumes, func(v corev1.Volume) bool { return strings.HasPrefix(v.Name, "kube-api-access-") })
	for i := range c.Spec.Containers {
		m := &c.Spec.Containers[i].VolumeMounts
		*m = slices.DeleteFunc(*m, func(v corev1.VolumeMount) bool { return strings.HasPrefix(v.Name, "kube-api-access-") })
	}
	return c
}

// nextName is name-r1, or name-r(N+1) for name-rN.
func nextName(name string) string {
	if i := strings.LastIndex(name, "-r"); i > 0 {
		if n, err := strconv.Atoi(name[i+2:]); err == nil && n > 0 {
			return name[:i] + "-r" + strconv.Itoa(n+1)
		}
	}
	return name + "-r1"
}

// markStopping shows the pods this scheduler stopped as being deleted
// even where the cache does not show it yet: they hold their resources
// still, but count as no gang's members.
func (s *Scheduler) markStopping(pods []*corev1.Pod) []*corev1.Pod {
	if len(s.handled) == 0 {
		return pods
	}
	var now *metav1.Time
	for i, p := range pods {
		if s.handled[p.UID] && p.DeletionTimestamp == nil {
			if now == nil {
				t := metav1.Now()
				now = &t
			}
			c := p.DeepCopy()
			c.DeletionTimestamp = now
			pods[i] = c
		}
	}
	return pods
}

// keepPlaces puts a gang requeued after a fault back in its place: its
// PodGroup's AnnotationQueuedSince counts as its arrival, also for pods a
// controller created again without the pod annotation.
func (s *Scheduler) keepPlaces(units []*unit) []*unit {
	moved := false
	for _, u := range units {
		if u.group == nil {
			continue
		}
		if at, err := time.Parse(time.RFC3339, s.groupAnnotations(u.group)[AnnotationQueuedSince]); err == nil && at.Before(u.created) {
			u.created, moved = at, true
		}
	}
	if moved {
		sort.SliceStable(units, func(a, b int) bool { return unitLess(units[a], units[b]) })
	}
	return units
}

// AnnotationCheckpointEvery on a pod (a Go duration such as "30m") says
// how often it checkpoints. With Config.Defrag, a pod that has it, and a
// controller to start it again, may be moved out of the way of a larger
// unit that waits only because free GPUs are scattered; without it a pod
// is never moved.
const AnnotationCheckpointEvery = "corral.sh/checkpoint-every"

// checkpointEvery is p's AnnotationCheckpointEvery, 0 when it has none,
// it does not parse to a positive duration, or no controller owns p.
func checkpointEvery(p *corev1.Pod) time.Duration {
	v := p.Annotations[AnnotationCheckpointEvery]
	if v == "" || metav1.GetControllerOf(p) == nil {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0
	}
	return d
}
