package main

import (
	"strings"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/server/api"
)

// TestQueueShowsSlurmStates: the STATE column names states as squeue and
// sacct do, TIMEOUT and NODE_FAIL among them, and upper-cases the state
// of a server that sends no Slurm name.
func TestQueueShowsSlurmStates(t *testing.T) {
	now := time.Now()
	jobs := []api.Job{
		{ID: "j000001", Tenant: "a", State: "failed", SlurmState: "TIMEOUT", Started: &now, Ended: &now},
		{ID: "j000002", Tenant: "a", State: "failed", SlurmState: "NODE_FAIL", Started: &now, Ended: &now},
		{ID: "j000003", Tenant: "a", State: "pending"},
	}
	var b strings.Builder
	printQueue(&b, jobs, now)
	lines := strings.Split(b.String(), "\n")
	for i, want := range []string{"TIMEOUT", "NODE_FAIL", "PENDING"} {
		if f := strings.Fields(lines[i+1]); len(f) < 4 || f[3] != want {
			t.Errorf("row %d: %q, want STATE %s", i, lines[i+1], want)
		}
	}
}
