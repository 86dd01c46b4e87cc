package kube

import (
	"log/slog"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/corral-sched/corral/internal/sched"
)

// A pending reason queued by one cycle and not yet written stays queued
// when the next cycle, before the writer runs, reports the same: it was
// dropped, and never written, since every later cycle took it for written.
func TestReporterKeepsAReasonQueuedAcrossCycles(t *testing.T) {
	r := newReporter(nil, &counters{}, slog.New(slog.DiscardHandler))
	p := &corev1.Pod{}
	p.UID, p.Name = types.UID("lost"), "lost"
	rejects := []rejection{{pods: []*corev1.Pod{p}, message: "waits for its group", code: sched.CodeInvalid}}
	r.submit(rejects)
	r.submit(rejects) // the next cycle, before the writer flushed
	if _, ok := r.want[p.UID]; !ok {
		t.Fatalf("the reason of pod %s was dropped from the queue before it was written", p.Name)
	}
	r.want = nil // written
	r.submit(rejects)
	if _, ok := r.want[p.UID]; ok {
		t.Fatal("a written reason was queued again")
	}
}

// A pod a cycle did not reach gets no report: nothing is queued for it,
// and what was queued or written for it before stays as it was.
func TestReporterWritesNothingForPodsNotReached(t *testing.T) {
	r := newReporter(nil, &counters{}, slog.New(slog.DiscardHandler))
	fresh, told := &corev1.Pod{}, &corev1.Pod{}
	fresh.UID, told.UID = "fresh", "told"
	r.submit([]rejection{{pods: []*corev1.Pod{told}, message: "no room", code: sched.CodeCapacity}})
	notReached := []rejection{
		{pods: []*corev1.Pod{fresh}, message: "not considered this cycle", code: sched.CodeNotConsidered},
		{pods: []*corev1.Pod{told}, message: "not considered this cycle", code: sched.CodeNotConsidered},
	}
	r.submit(notReached)
	if _, ok := r.want[fresh.UID]; ok {
		t.Error("a pod the cycle did not reach has a report queued")
	}
	if q, ok := r.want[told.UID]; !ok || q.message != "no room" {
		t.Errorf("the queued report of a pod not reached since is %+v, want the earlier one kept", q)
	}
	r.want = nil // written
	r.submit(notReached)
	if got := r.written[told.UID]; got != (report{reason: ReasonUnschedulable, message: "no room"}).key() {
		t.Errorf("what was written for a pod not reached since is forgotten (%q): it would be written again", got)
	}
}
