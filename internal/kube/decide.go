package kube

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/queue"
	"github.com/corral-sched/corral/internal/sched"
)

// binding is one pod to bind to one node.
type binding struct {
	pod  *corev1.Pod
	node string
	unit string
	// at is when the cycle bound it, written on the pod with the binding
	// (AnnotationBoundAt); set by Scheduler.assume.
	at time.Time
	// shareGPU is the GPU a time-sliced share is counted on, written on
	// the pod with the binding (AnnotationShareGPU); "": none.
	shareGPU string
	// prepare writes what the pod claims before it is bound; nil: nothing.
	prepare func(context.Context) error
	// release gives back what the pod's placement reserved (its claims'
	// allocation in flight, their reservation for it) when preparing or
	// binding it fails; nil: nothing.
	release func(context.Context)
}

// rejection is pods left pending and why, in the core's words.
type rejection struct {
	pods    []*corev1.Pod
	message string
	code    sched.Code
	reclaim bool // it waits for quota its queue lent to come back
}

// decisions are what one cycle does.
type decisions struct {
	binds    []binding
	rejects  []rejection
	preempts []*preemption
	// refusals are where the filter plugins refused pods the core placed
	// (by pod uid), for the next cycle.
	refusals map[string]podRefusal
	// reserved are the core's reservations, for its memory (hints for
	// the next cycle's search: sched.Memory.Reserved).
	reserved []sched.Reservation
	// unchecked are the starts Kubernetes' filter plugins are still to
	// confirm (confirm); nil when they are not run.
	unchecked *unchecked
}

// unchecked is what confirm needs of a cycle: its input and its starts.
type unchecked struct {
	in     *cycleInput
	starts []sched.Start
}

// decide runs the shared scheduling cycle (internal/sched) on the
// snapshot: the units become the cycle's pending units, the bound pods its
// running units, and its decisions become binds, evictions and the reasons
// pods stay pending. It performs no I/O: equal snapshots and units give
// equal decisions (TestDecideDoesNoIO). Where Kubernetes' filter plugins
// run, confirm checks the starts against them before anything is bound.
func decide(snap *snapshot, units []*unit, preempting bool) decisions {
	in := newCycleInput(snap, preempting)
	early := map[string]rejection{}
	for _, u := range units {
		if r := in.add(u); r != nil {
			early[u.job] = *r
		}
	}
	out := sched.Cycle(in.snap)
	if snap.ledger != nil {
		for _, st := range out.Starts {
			snap.ledger.Started(st.Unit.Job.Name, st.Unit.Queue, st.Admission.Need)
		}
	}
	in.prs = in.preemptions(out.Preempts, out.Waiting)
	d := decisions{preempts: in.prs, reserved: out.Reservations}
	if snap.filter != nil {
		d.refusals = snap.filter.refusals
		d.unchecked = &unchecked{in: in, starts: out.Starts} // bound once confirmed
	} else {
		d.binds = in.binds(out.Starts)
	}
	waits := map[string]rejection{}
	for _, w := range out.Waiting {
		waits[w.Unit] = in.rejection(w, out.Reservations)
	}
	for _, u := range units {
		if r, ok := early[u.job]; ok {
			d.rejects = append(d.rejects, r)
		} else if r, ok := waits[u.job]; ok {
			d.rejects = append(d.rejects, r)
		}
	}
	d.rejects = append(d.rejects, in.left...)
	return d
}

// confirm runs Kubernetes' filter plugins over the cycle's starts, in the
// order the cycle chose them, each unit's pods beside those placed before
// (recheck): the face's apply step, before anything is bound, and the one
// that writes to the API server (the claims the pods of one unit share).
// A unit the plugins refuse does not start this cycle: its binds are
// dropped, its charge given back, and its pods told why.
func (d *decisions) confirm(ctx context.Context) {
	if d.unchecked == nil {
		return
	}
	in, starts := d.unchecked.in, d.unchecked.starts
	d.unchecked = nil
	left := len(in.left)
	d.binds = in.binds(in.recheck(ctx, starts))
	d.rejects = append(d.rejects, in.left[left:]...)
}

// cycleInput is the shared cycle's snapshot of a Kubernetes snapshot, with
// what it takes to turn decisions back into pods.
type cycleInput struct {
	kube    *snapshot
	snap    *sched.Snapshot
	units   map[string]*unit           // by core job name
	byGroup map[string][][]*corev1.Pod // each unit's pods, by task group
	sets    []victimSet                // the running units
	running map[string]*victimSet      // sets by name, made when first asked (runningSet)
	left    []rejection                // pods of groups started without them
	prs     []*preemption              // the cycle's evictions
}

func newCycleInput(snap *snapshot, preempting bool) *cycleInput {
	in := &cycleInput{kube: snap, units: map[string]*unit{}, byGroup: map[string][][]*corev1.Pod{}}
	in.snap = &sched.Snapshot{
		Now:   snap.now,
		State: snap.state,
		Book:  snap.book,
		Config: sched.Config{
			Preemption:      preempting,
			FairShare:       true,
			ReclaimPatience: sched.Patience(snap.reclaimPatience),
			Reservations:    snap.reservations,
			Charge:          func(p *gang.Placement) queue.Amounts { return snap.charger.Placed(snap.state, p) },
			Budgets:         snap.budgets,
			Defrag:          snap.defrag,
		},
		Spent: snap.spent,
	}
	if snap.units != nil {
		in.sets, in.snap.Running = snap.units.list(snap)
	} else {
		in.sets = runningUnits(snap)
		in.snap.Running = make([]sched.Running, 0, len(in.sets))
		for _, v := range in.sets {
			in.snap.Running = append(in.snap.Running, runningOf(v, snap, snap.stops[v.name].Preemptions))
		}
	}
	if snap.ledger != nil {
		book, err := snap.ledger.Sync(snap.specs, in.snap.Running, snap.now)
		if err != nil {
			panic(fmt.Sprintf("kube: %v", err)) // the specs were built into snap.book already
		}
		in.snap.Book = book
	}
	return in
}

// runningSet is the running unit of that name (empty when none runs).
func (in *cycleInput) runningSet(name string) victimSet {
	if in.running == nil {
		in.running = make(map[string]*victimSet, len(in.sets))
		for i := range in.sets {
			in.running[in.sets[i].name] = &in.sets[i]
		}
	}
	if v := in.running[name]; v != nil {
		return *v
	}
	return victimSet{}
}

// runningOf is a bound unit as the cycle of snap sees it, stopped
// preemptions times before: only corral's own pods that are not already
// terminating may be preempted.
func runningOf(v victimSet, snap *snapshot, preemptions int) sched.Running {
	r := sched.Running{Name: v.name, Parts: v.jobs(), Priority: int(v.priority), Started: v.started, Preemptible: true,
		Preemptions: preemptions}
	var milli int64
	q := v.pods[0].queue
	queued := snap.queues[q] != nil
	var need queue.Amounts
	if queued {
		need = queue.Amounts{}
	}
	var limit runLimit
	r.CheckpointEvery, r.LastCheckpoint = v.pods[0].checkpointEvery, v.pods[0].checkpointAt
	for _, b := range v.pods {
		r.CheckpointEvery = min(r.CheckpointEvery, b.checkpointEvery) // moved only if every pod may be
		if b.checkpointAt.Before(r.LastCheckpoint) {
			r.LastCheckpoint = b.checkpointAt // the oldest: a pod without one makes it unknown
		}
		milli += b.milli
		if queued {
			for f, amount := range b.need {
				need[f] += amount
			}
		}
		if b.stopping {
			r.StoppingFor = "-"
		}
		if b.scheduler != snap.scheduler {
			r.Preemptible = false
		}
		limit.add(b.deadline)
	}
	if queued {
		r.Queue, r.Need = q, need
	}
	r.GPUs = float64(milli) / queue.Milli
	if d := limit.of(); d > 0 && !v.started.IsZero() {
		r.End = v.started.Add(d) // the kubelet stops its pods by then
	}
	return r
}

// add makes u a pending unit of the cycle, or says why it cannot be one.
func (in *cycleInput) add(u *unit) *rejection {
	j, byGroup, err := unitJob(u, in.kube)
	if err != nil {
		return &rejection{pods: u.pods, message: err.Error(), code: sched.CodeInvalid}
	}
	blocked, freeing := u.blocked, in.kube.filter.freeingOf(u.pods)
	if blocked != "" {
		// It cannot start whatever the fleet (a group missing members):
		// stopping work for the pods it has would free too little, for
		// the wrong pods, and leave its later pods nothing to free.
		freeing = nil
	}
	if why := in.kube.filter.refusal(u.pods); why != "" {
		if len(freeing) == 0 {
			return &rejection{pods: u.pods, message: why, code: sched.CodeCapacity}
		}
		blocked = why // the core may preempt to free a node (freeing.go)
	}
	q := u.queue()
	if q != "" && in.kube.queues[q] == nil {
		return &rejection{pods: u.pods, code: sched.CodeInvalid, message: fmt.Sprintf("queue %q does not exist: create the Queue (%s) or drop the %s label",
			q, QueueResource.GroupResource(), LabelQueue)}
	}
	in.units[j.Name], in.byGroup[j.Name] = u, byGroup
	in.snap.Pending = append(in.snap.Pending, sched.Unit{
		Job: j, Queue: q, Need: in.kube.charger.Need(in.kube.state, j), Arrival: u.created.UnixNano(), Since: u.created,
		NoBorrowUntil: in.kube.stops[u.job].NoBorrowUntil, Claimed: in.kube.stops[u.job].Claimed, ReserveHint: in.kube.hints[u.job],
		Blocked: blocked, Freeing: freeing, NeverPreempts: neverPreempts(u.pods),
	})
	return nil
}

// binds are the pods of the started units on their nodes; a group that
// starts with fewer pods than it has leaves the rest pending.
func (in *cycleInput) binds(starts []sched.Start) []binding {
	var out []binding
	for _, st := range starts {
		u, p := in.units[st.Unit.Job.Name], st.Placement
		placed, left := assignPods(p, in.byGroup[st.Unit.Job.Name])
		for i, pod := range placed {
			out = append(out, binding{pod: pod, node: p.Tasks[i].NodeName, unit: u.name, shareGPU: sharedOn(p.Tasks[i], pod),
				prepare: in.kube.filter.prepare(pod), release: in.kube.filter.release(pod)})
		}
		if len(left) > 0 {
			in.left = append(in.left, rejection{pods: left, code: sched.CodeCapacity,
				message: fmt.Sprintf("pod group %s started with %d pods; no room for the rest now", u.name, len(placed))})
		}
	}
	return out
}

// sharedOn is the GPU task t, pod's, counts a time-sliced share on; ""
// for a task that is no such share (whole GPUs, MIG, or a share a DRA
// driver allocates and says where).
func sharedOn(t gang.Task, pod *corev1.Pod) string {
	if t.Milli == 0 || len(t.GPUs) != 1 || pod.Annotations[annotationDRA] != "" {
		return ""
	}
	return strconv.Itoa(t.GPUs[0])
}

// preemptions are the evictions the cycle chose, one per unit they make
// room for, in the order it chose them; waits give what moves gain.
func (in *cycleInput) preemptions(preempts []sched.Preempt, waits []sched.Wait) []*preemption {
	var list []*preemption
	byUnit := map[string]*preemption{}
	for _, p := range preempts {
		pr := byUnit[p.For]
		if pr == nil {
			pr = &preemption{unit: in.units[p.For].name, forJob: p.For, reclaim: p.Reclaim, move: p.Move, victims: map[string]time.Time{}}
			byUnit[p.For] = pr
			list = append(list, pr)
		}
		for _, b := range in.runningSet(p.Victim).pods {
			pr.pods = append(pr.pods, b.pod)
		}
		pr.victims[p.Victim] = p.NoBorrowUntil
	}
	for _, w := range waits {
		if pr := byUnit[w.Unit]; pr != nil && w.Defrag != nil {
			pr.gain = fmt.Sprintf("it gains %.1f GPU-hours by starting now, they lose %.1f", w.Defrag.GainGPUH, w.Defrag.LostGPUH)
		}
	}
	for _, pr := range list {
		pr.reason = in.preemptionReason(pr)
	}
	return list
}

func (in *cycleInput) preemptionReason(pr *preemption) string {
	names := make([]string, len(pr.pods))
	for i, p := range pr.pods {
		names[i] = podKey(p)
	}
	if pr.move {
		return fmt.Sprintf("moving %d pods out of its way (%s): the GPUs it needs are free, only scattered, and %s; starts when they stop, and their controllers start them again elsewhere",
			len(names), strings.Join(names, ", "), pr.gain)
	}
	if pr.reclaim {
		u := in.unitNamed(pr.unit)
		q := u.queue()
		return fmt.Sprintf("reclaiming the quota queue %s lent to cohort %s: evicting %d pods of borrowing queues (%s); starts when they stop",
			q, in.kube.queues[q].Cohort, len(names), strings.Join(names, ", "))
	}
	return fmt.Sprintf("preempting %d lower-priority pods (%s); starts when they stop", len(names), strings.Join(names, ", "))
}

func (in *cycleInput) unitNamed(name string) *unit {
	for _, u := range in.units {
		if u.name == name {
			return u
		}
	}
	return nil
}

// rejection is why a unit stays pending, in Kubernetes' terms.
func (in *cycleInput) rejection(w sched.Wait, resvs []sched.Reservation) rejection {
	u := in.units[w.Unit]
	r := rejection{pods: u.pods, code: w.Code, message: w.Reason, reclaim: w.Reclaim != nil}
	switch w.Code {
	case sched.CodeQuota:
		r.message = in.quotaMessage(u, w)
	case sched.CodeCapacity, sched.CodeNeverFits:
		if w.Cause != "" {
			r.message = in.capacityNote(in.kube.unfitMessage(w))
		} else {
			r.message = in.capacityNote(w.Reason)
		}
	case sched.CodeReserved:
		r.message = in.capacityNote(w.Reason)
	case sched.CodePreempting:
		r.message = in.preemptingMessage(u, w, resvs)
	}
	if pr := in.preemptionFor(u); pr != nil && w.Code == sched.CodeQuota {
		r.message += "; " + in.preemptionReason(pr)
	}
	return r
}

func (in *cycleInput) quotaMessage(u *unit, w sched.Wait) string {
	qe := w.Quota
	if qe == nil {
		return "over quota: " + w.Reason
	}
	q := u.queue()
	if qe.Flavor.IsModelCap() {
		var of int64
		if n, ok := in.kube.queues[q].Models[qe.Flavor.Model]; ok {
			of = n * queue.Milli
		}
		return fmt.Sprintf("over quota: queue %q has room for %s GPUs of its %s %s (spec.quota.models); this needs %s",
			q, gpuString(qe.Room), gpuString(of), qe.Flavor.Model, gpuString(qe.Need))
	}
	if qe.Flavor == queue.CPU || qe.Flavor == queue.Memory {
		spec := in.kube.queues[q]
		own := spec.CPUMilli
		if qe.Flavor == queue.Memory {
			own = spec.MemoryMiB
		}
		var of int64
		if own != nil {
			of = *own
		}
		return fmt.Sprintf("over quota: queue %q has room for %s of its %s (spec.quota.%s); this needs %s", q,
			sched.Amount(qe.Flavor, qe.Room), sched.Amount(qe.Flavor, of), qe.Flavor.Model, sched.Amount(qe.Flavor, qe.Need))
	}
	msg := fmt.Sprintf("over quota: queue %q has room for %s GPUs of its %s; this needs %s",
		q, gpuString(qe.Room), gpuString(in.kube.queues[q].GPUs*queue.Milli), gpuString(qe.Need))
	if rw := w.Reclaim; rw != nil {
		msg += fmt.Sprintf("; %s of its GPUs are lent to cohort %s, borrowed by queue %s",
			gpuString(qe.Reclaimable), rw.Cohort, strings.Join(rw.Borrowers, ", queue "))
		if !rw.At.IsZero() {
			msg += fmt.Sprintf("; corral evicts their pods to take them back at %s, once this has waited the reclaim patience (%s, --reclaim-patience), and before then only their lower-priority pods",
				rw.At.UTC().Format(time.RFC3339), sched.Patience(in.kube.reclaimPatience))
		}
	}
	return msg
}

// preemptingMessage says what a unit waits for while room is freed for it.
func (in *cycleInput) preemptingMessage(u *unit, w sched.Wait, resvs []sched.Reservation) string {
	why := in.kube.unfitCause(w)
	if pr := in.preemptionFor(u); pr != nil {
		return in.capacityNote(why) + "; " + pr.reason
	}
	pods := 0
	for _, r := range resvs {
		if r.Unit == w.Unit {
			for _, name := range r.Releasing {
				pods += len(in.runningSet(name).pods)
			}
		}
	}
	return in.capacityNote(why) + fmt.Sprintf("; waiting for %d terminating pods to free their resources", pods)
}

func (in *cycleInput) preemptionFor(u *unit) *preemption {
	for _, p := range in.prs {
		if p.unit == u.name {
			return p
		}
	}
	return nil
}

// capacityNote adds what the snapshot knows about missing nodes.
func (in *cycleInput) capacityNote(msg string) string {
	if msg == "" {
		msg = "does not fit"
	}
	if in.kube.nodes == 0 {
		msg = "no nodes to place on; " + msg
	}
	if len(in.kube.skipped) > 0 {
		msg += fmt.Sprintf(" (%d nodes left out: GPUs corral cannot describe)", len(in.kube.skipped))
	}
	return msg
}

// neverPreempts reports whether any of the pods says preemptionPolicy
// Never.
func neverPreempts(pods []*corev1.Pod) bool {
	return slices.ContainsFunc(pods, func(p *corev1.Pod) bool {
		return p.Spec.PreemptionPolicy != nil && *p.Spec.PreemptionPolicy == corev1.PreemptNever
	})
}

// gpuString writes milli-GPUs as GPUs: "4", "0.5".
func gpuString(milli int64) string {
	return strconv.FormatFloat(float64(milli)/queue.Milli, 'f', -1, 64)
}

// coreTolerations are the core taints a pod of demand d may ignore: a
// share those of nodes that offer only time-sliced GPUs, a pod whose GPUs
// come by DRA those of nodes whose GPUs only DRA publishes (dra.go).
func coreTolerations(p *corev1.Pod, d job.Demand) []string {
	var out []string
	if d.Shares > 0 {
		out = append(out, sharedOnly)
	}
	if p.Annotations[annotationDRA] == "true" {
		out = append(out, draOnly)
	}
	return out
}

// unitJob makes the core's job for a unit: one task group per distinct pod
// demand, in the order of the pods; byGroup lists each group's pods.
func unitJob(u *unit, snap *snapshot) (*job.Job, [][]*corev1.Pod, error) {
	tolerations := append(tolerated(u.pods, snap.taints), selectorTolerations(u.pods, snap.selectors)...)
	j := &job.Job{Name: u.job, Priority: int(u.priority), Tolerations: tolerations, Images: podImages(u.pods)}
	j.Preemptible, j.Runtime = lendable(u.pods)
	if j.Runtime == 0 {
		j.Runtime = deadline(u.pods) // a limit the kubelet enforces
	}
	var byGroup [][]*corev1.Pod
	for _, p := range u.pods {
		d, err := demand(p)
		if err != nil {
			return nil, nil, fmt.Errorf("pod %s %w", p.Name, err)
		}
		for _, t := range coreTolerations(p, d) {
			if !slices.Contains(j.Tolerations, t) {
				j.Tolerations = append(j.Tolerations, t)
			}
		}
		// Pods the filter plugins allow different nodes are groups of
		// their own, each kept to its nodes.
		allowed := snap.filter.tolerations(p)
		g := groupFor(j, d, allowed)
		if g == len(j.Groups) {
			j.Groups = append(j.Groups, job.Group{Name: fmt.Sprintf("shape-%d", g), Task: d, Tolerations: allowed})
			byGroup = append(byGroup, nil)
		}
		j.Groups[g].Count++
		byGroup[g] = append(byGroup[g], p)
	}
	if u.group != nil {
		j.Topology = u.group.Topology
		if need := u.group.MinMember - u.bound; need < len(u.pods) {
			j.MinMember = max(need, 1)
		}
	}
	if n := snap.nodeCaps[u.job]; n > 0 && !slices.ContainsFunc(j.Topology, func(c job.Constraint) bool { return c.Spread }) {
		// The filter plugins took only n of its pods on a node: at most n
		// a node (refusals.go).
		j.Topology = append(slices.Clip(j.Topology), job.Constraint{Level: fleet.NodeLevel, Required: true, Spread: true, MaxPerDomain: n})
	}
	ask, err := memoryAsk(u.pods)
	if err != nil || ask == nil {
		return j, byGroup, err
	}
	if j, err = byGPUMemory(j, ask, snap.state); err != nil {
		return nil, nil, err
	}
	return j, byGroup, nil
}

// groupFor is the index of j's group of tasks like d that tolerate
// tolerations, or len(j.Groups) when it has none yet.
func groupFor(j *job.Job, d job.Demand, tolerations []string) int {
	for i, g := range j.Groups {
		if sameDemand(g.Task, d) && slices.Equal(g.Tolerations, tolerations) {
			return i
		}
	}
	return len(j.Groups)
}

func sameDemand(a, b job.Demand) bool {
	return a.GPUs == b.GPUs && a.MIG == b.MIG && a.Shares == b.Shares &&
		a.CPUMilli == b.CPUMilli && a.MemoryMiB == b.MemoryMiB &&
		strings.Join(a.Models, ",") == strings.Join(b.Models, ",")
}

// assignPods matches the placement's tasks to pods: the k-th task of a
// group runs the group's k-th pod. Pods with no task are returned as left.
func assignPods(p *gang.Placement, byGroup [][]*corev1.Pod) (placed, left []*corev1.Pod) {
	next := make([]int, len(byGroup))
	for _, t := range p.Tasks {
		placed = append(placed, byGroup[t.Group][next[t.Group]])
		next[t.Group]++
	}
	for g, pods := range byGroup {
		left = append(left, pods[next[g]:]...)
	}
	return placed, left
}
