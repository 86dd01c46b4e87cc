package sim

import (
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/workload"
)

// PrioritySort orders by priority, then creation: a job preempted at 30m
// has new pods from then, so it queues behind a job of its priority that
// arrived at 10m, though it arrived first.
func TestByPriorityThenCreation(t *testing.T) {
	mk := func(name string, prio int, at, requeued time.Duration) *pendingJob {
		return &pendingJob{a: &workload.Arrival{At: at, Job: &job.Job{Name: name, Priority: prio}}, requeued: requeued}
	}
	pending := []*pendingJob{
		mk("preempted", 1, 0, 30*time.Minute),
		mk("later", 1, 10*time.Minute, 0),
		mk("high", 2, 20*time.Minute, 0),
		mk("latest", 1, 40*time.Minute, 0),
	}
	var got []string
	for _, p := range byPriorityThenCreation(pending) {
		got = append(got, p.a.Job.Name)
	}
	want := []string{"high", "later", "preempted", "latest"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
}
