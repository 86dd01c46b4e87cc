package sched

import (
	"testing"
	"time"
)

// Stopping a unit loses its work since its last checkpoint: the one its
// face knows of (Running.LastCheckpoint) when it is of this run, else the
// last periodic one, else everything; and a restart.
func TestStopCostFromTheLastCheckpoint(t *testing.T) {
	c := &cycle{snap: &Snapshot{Now: t0}}
	started := t0.Add(-2 * time.Hour)
	for _, tc := range []struct {
		name  string
		every time.Duration
		last  time.Time
		want  time.Duration // lost work, before the restart
	}{
		{"no checkpoints", 0, time.Time{}, 2 * time.Hour},
		{"periodic, just written", 30 * time.Minute, time.Time{}, 0},
		{"periodic, 50 minutes", 70 * time.Minute, time.Time{}, 50 * time.Minute},
		{"known time", 30 * time.Minute, t0.Add(-50 * time.Minute), 50 * time.Minute},
		{"known time, no period", 0, t0.Add(-20 * time.Minute), 20 * time.Minute},
		{"a time of an earlier run", 0, started.Add(-time.Hour), 2 * time.Hour},
	} {
		r := Running{Name: "r", GPUs: 4, Started: started, CheckpointEvery: tc.every, LastCheckpoint: tc.last}
		if got, want := c.stopCost(r), 4*(tc.want+RestartCost).Hours(); got != want {
			t.Errorf("%s: %.3f GPU-h, want %.3f", tc.name, got, want)
		}
	}
}
