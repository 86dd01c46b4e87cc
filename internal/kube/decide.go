package kube

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/corral-sched/corral/internal/gang"
	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/queue"
)

// binding is one pod to bind to one node.
type binding struct {
	pod  *corev1.Pod
	node string
	unit string
}

// rejection is pods left pending and why, in the core's words.
type rejection struct {
	pods    []*corev1.Pod
	message string
}

// decisions are what one cycle does.
type decisions struct {
	binds    []binding
	rejects  []rejection
	preempts []*preemption
}

// decide places the units in order on the snapshot's state; with
// preemption on, a unit that does not fit may evict lower-priority work.
// It performs no I/O: equal snapshots and units give equal decisions.
func decide(snap *snapshot, units []*unit, preempting bool) decisions {
	var binds []binding
	var rejects []rejection
	var preempts []*preemption
	for _, u := range units {
		if u.blocked != "" {
			rejects = append(rejects, rejection{u.pods, u.blocked})
			continue
		}
		j, byGroup, err := unitJob(u, snap)
		if err != nil {
			rejects = append(rejects, rejection{u.pods, err.Error()})
			continue
		}
		if q := u.queue(); q != "" && snap.queues[q] == nil {
			rejects = append(rejects, rejection{u.pods, fmt.Sprintf("queue %q does not exist: create the Queue (%s) or drop the %s label", q, QueueResource.GroupResource(), LabelQueue)})
			continue
		}
		p, unfit := snap.state.Place(j)
		if unfit != nil {
			msg := unfitMessage(snap, unfit)
			if preempting {
				pr, wait := preempt(snap, u, j)
				if pr != nil {
					preempts = append(preempts, pr)
					msg += "; " + pr.reason
				} else if wait != "" {
					msg += "; " + wait
				}
			}
			rejects = append(rejects, rejection{u.pods, msg})
			continue
		}
		need := placementMilli(snap.state, p)
		if err := admit(snap, u, p); err != nil {
			msg := err.Error()
			if preempting {
				if pr := reclaim(snap, u, need); pr != nil {
					preempts = append(preempts, pr)
					msg += "; " + pr.reason
				}
			}
			rejects = append(rejects, rejection{u.pods, msg})
			continue
		}
		placed, left := assignPods(p, byGroup)
		for i, pod := range placed {
			binds = append(binds, binding{pod: pod, node: p.Tasks[i].NodeName, unit: u.name})
		}
		if len(left) > 0 {
			rejects = append(rejects, rejection{left, fmt.Sprintf("pod group %s started with %d pods; no room for the rest now", u.name, len(placed))})
		}
	}
	return decisions{binds, rejects, preempts}
}

// admit charges a placed unit to its queue, or undoes the placement when
// the queue's quota cannot hold it.
func admit(snap *snapshot, u *unit, p *gang.Placement) error {
	q := u.queue()
	need := placementMilli(snap.state, p)
	if q == "" || need == 0 {
		return nil
	}
	if _, err := snap.book.Admit(q, queue.Amounts{anyGPU: need}); err != nil {
		if rerr := snap.state.Release(p.Job); rerr != nil {
			panic(rerr) // p was just placed
		}
		var qe *queue.QuotaError
		if errors.As(err, &qe) {
			return fmt.Errorf("over quota: queue %q has room for %s GPUs of its %s; this needs %s",
				q, gpuString(qe.Room), gpuString(snap.queues[q].GPUs*queue.Milli), gpuString(need))
		}
		return fmt.Errorf("over quota: %w", err)
	}
	return nil
}

// gpuString writes milli-GPUs as GPUs: "4", "0.5".
func gpuString(milli int64) string {
	return strconv.FormatFloat(float64(milli)/queue.Milli, 'f', -1, 64)
}

// unitJob makes the core's job for a unit: one task group per distinct pod
// demand, in the order of the pods; byGroup lists each group's pods.
func unitJob(u *unit, snap *snapshot) (*job.Job, [][]*corev1.Pod, error) {
	tolerations := append(tolerated(u.pods, snap.taints), selectorTolerations(u.pods, snap.selectors)...)
	j := &job.Job{Name: u.job, Priority: int(u.priority), Tolerations: tolerations}
	var byGroup [][]*corev1.Pod
	for _, p := range u.pods {
		d, err := demand(p)
		if err != nil {
			return nil, nil, fmt.Errorf("pod %s %w", p.Name, err)
		}
		if d.Shares > 0 && !slices.Contains(j.Tolerations, sharedOnly) {
			j.Tolerations = append(j.Tolerations, sharedOnly)
		}
		g := groupFor(j, d)
		if g == len(j.Groups) {
			j.Groups = append(j.Groups, job.Group{Name: fmt.Sprintf("shape-%d", g), Task: d})
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
	return j, byGroup, nil
}

func groupFor(j *job.Job, d job.Demand) int {
	for i, g := range j.Groups {
		if sameDemand(g.Task, d) {
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

// unfitMessage is the core's reasons, with a note on nodes corral could not
// describe.
func unfitMessage(snap *snapshot, u *gang.Unfit) string {
	msg := strings.Join(u.Reasons, "; ")
	if msg == "" {
		msg = "does not fit"
	}
	if snap.nodes == 0 {
		msg = "no nodes to place on; " + msg
	}
	if len(snap.skipped) > 0 {
		msg += fmt.Sprintf(" (%d nodes left out: GPUs corral cannot describe)", len(snap.skipped))
	}
	return msg
}
