package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"

	"github.com/corral-sched/corral/internal/sched"
)

// Reasons of the PodScheduled=False condition of a pod corral leaves
// pending. cluster-autoscaler takes a pending pod for missing capacity
// only when that condition's reason is exactly "Unschedulable"
// (kubernetes/autoscaler, cluster-autoscaler/utils/kubernetes/listers.go:
// UnschedulablePodLister.List and isUnschedulable keep the pods whose
// PodScheduled condition has Status False and Reason
// apiv1.PodReasonUnschedulable; other reasons, such as the API server's
// SchedulingGated, are ignored). So pods that more nodes would help keep
// Unschedulable, and pods that wait for something else carry a reason of
// their own, which the autoscaler leaves alone.
const (
	// ReasonUnschedulable: no room for it now, or none even in an empty
	// fleet: more or bigger nodes help.
	ReasonUnschedulable = corev1.PodReasonUnschedulable
	// ReasonWaitingForQuota: its Queue's quota is spent.
	ReasonWaitingForQuota = "WaitingForQuota"
	// ReasonWaitingForGang: its pod group lacks pods (minMember, gated
	// pods) or its PodGroup does not exist.
	ReasonWaitingForGang = "WaitingForGang"
	// ReasonWaitingForReservation: it fits, but would take room held for
	// a waiting pod group of higher rank.
	ReasonWaitingForReservation = "WaitingForReservation"
	// ReasonWaitingForPreemption: pods are being evicted to make room
	// for it.
	ReasonWaitingForPreemption = "WaitingForPreemption"
	// ReasonWaitingForBudget: its queue's GPU-hour budget for the period
	// would be overrun (spec.budget); more capacity would not help.
	ReasonWaitingForBudget = "WaitingForBudget"
	// ReasonSchedulerError: corral cannot read what it asks for (see the
	// message).
	ReasonSchedulerError = corev1.PodReasonSchedulerError
	// ReasonSchedulingGated is the API server's, on pods created with
	// spec.schedulingGates; corral leaves it alone.
	ReasonSchedulingGated = corev1.PodReasonSchedulingGated
)

// reasonFor is the condition reason of a rejection's code.
func reasonFor(c sched.Code) string {
	switch c {
	case sched.CodeQuota:
		return ReasonWaitingForQuota
	case sched.CodeBlocked:
		return ReasonWaitingForGang
	case sched.CodeReserved:
		return ReasonWaitingForReservation
	case sched.CodePreempting:
		return ReasonWaitingForPreemption
	case sched.CodeInvalid:
		return ReasonSchedulerError
	case sched.CodeBudget:
		return ReasonWaitingForBudget
	default: // capacity, never fits, not tried this cycle: capacity may help
		return ReasonUnschedulable
	}
}

// report is the PodScheduled=False condition one pending pod should carry.
type report struct {
	pod             *corev1.Pod
	reason, message string
}

func (r report) key() string { return r.reason + "\x00" + r.message }

// reporter writes the conditions of pending pods, and a FailedScheduling
// event with each, from a goroutine of its own, so that a cycle never
// waits for them. A condition is written only when its reason or message
// changes; a write that raced with a binding (the pod changed since the
// cycle saw it) is refused by the API server and dropped.
type reporter struct {
	client kubernetes.Interface
	n      *counters
	log    *slog.Logger
	kick   chan struct{}

	mu      sync.Mutex
	events  record.EventRecorder // nil: none
	want    map[types.UID]report // the latest cycle's reports not yet written
	written map[types.UID]string // what was last written or queued, by pod
}

func newReporter(client kubernetes.Interface, n *counters, log *slog.Logger) *reporter {
	return &reporter{client: client, n: n, log: log, kick: make(chan struct{}, 1), written: map[types.UID]string{}}
}

// submit replaces the reports to write with those of rejects that change
// a pod's condition, and wakes the writer. A pod the cycle did not reach
// (its attempts ran out first) gets no new report, as a pod waiting in
// kube-scheduler's queue gets none: it is not unschedulable, only not
// tried yet, and a drain of thousands of pods would otherwise write a
// condition and an event for each before binding most of them.
func (r *reporter) submit(rejects []rejection) {
	r.mu.Lock()
	defer r.mu.Unlock()
	want, written := map[types.UID]report{}, map[types.UID]string{}
	for _, rj := range rejects {
		for _, p := range rj.pods {
			if rj.code == sched.CodeNotConsidered {
				if key, ok := r.written[p.UID]; ok {
					written[p.UID] = key
				}
				if queued, ok := r.want[p.UID]; ok {
					want[p.UID] = queued
				}
				continue
			}
			rep := report{pod: p, reason: reasonFor(rj.code), message: rj.message}
			switch {
			case hasCondition(p, rep.reason, rep.message):
				written[p.UID] = rep.key()
			case r.written[p.UID] == rep.key():
				written[p.UID] = rep.key() // written, the cache not yet showing it, or queued still
				if queued, ok := r.want[p.UID]; ok {
					want[p.UID] = queued
				}
			default:
				want[p.UID], written[p.UID] = rep, rep.key()
			}
		}
	}
	r.want, r.written = want, written
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// run writes what is submitted until ctx ends.
func (r *reporter) run(ctx context.Context, events record.EventRecorder) {
	r.mu.Lock()
	r.events = events
	r.mu.Unlock()
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.kick:
			r.flush(ctx)
		}
	}
}

// flush writes the pending reports, several at a time.
func (r *reporter) flush(ctx context.Context) {
	r.mu.Lock()
	want, events := r.want, r.events
	r.want = nil
	r.mu.Unlock()
	items := make([]report, 0, len(want))
	for _, rep := range want {
		items = append(items, rep)
	}
	sort.Slice(items, func(a, b int) bool { return podKey(items[a].pod) < podKey(items[b].pod) })
	parallel(len(items), func(i int) {
		rep := items[i]
		err := writeCondition(ctx, r.client, rep)
		if err != nil {
			r.forget(rep)
			if !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) && ctx.Err() == nil {
				r.log.Warn("pending reason", "err", err)
			}
			return
		}
		r.n.unfit.Add(1)
		if events != nil {
			events.Event(rep.pod, corev1.EventTypeWarning, EventFailedScheduling, rep.message)
		}
	})
}

// forget drops what was queued for rep's pod, so that the next cycle
// writes it again.
func (r *reporter) forget(rep report) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.written[rep.pod.UID] == rep.key() {
		delete(r.written, rep.pod.UID)
	}
}

// writeCondition sets PodScheduled=False with the report's reason and
// message, only if the pod is as the cycle saw it (its resourceVersion):
// a pod bound since keeps its PodScheduled=True.
func writeCondition(ctx context.Context, client kubernetes.Interface, rep report) error {
	p := rep.pod
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": p.ResourceVersion},
		"status": map[string]any{"conditions": []corev1.PodCondition{{
			Type:               corev1.PodScheduled,
			Status:             corev1.ConditionFalse,
			Reason:             rep.reason,
			Message:            rep.message,
			LastTransitionTime: transitionTime(p),
		}}},
	})
	if err != nil {
		return fmt.Errorf("pod %s condition: %w", podKey(p), err)
	}
	_, err = client.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil {
		return fmt.Errorf("pod %s condition: %w", podKey(p), err)
	}
	return nil
}

// transitionTime is when PodScheduled last became False: kept while it
// stays False, as the upstream scheduler keeps it, and now otherwise.
func transitionTime(p *corev1.Pod) metav1.Time {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime
		}
	}
	return metav1.Now()
}

// hasCondition reports whether p carries PodScheduled=False with reason
// and message already.
func hasCondition(p *corev1.Pod, reason, message string) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return c.Status == corev1.ConditionFalse && c.Reason == reason && c.Message == message
		}
	}
	return false
}
