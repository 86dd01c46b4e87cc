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
