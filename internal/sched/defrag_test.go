package sched

import (
	"strings"
	"testing"
	"time"
)

// defragWorld is two 8-GPU nodes, each half held by a small unit of 4
// GPUs (s1 on one, s2 on the other, both checkpointing every 30 minutes,
// s1 started 10 minutes ago, s2 20), and an 8-GPU unit that waits: 8 GPUs
// are free, scattered. Both small units end in 20 hours.
func defragWorld(t *testing.T, end time.Duration) *world {
	t.Helper()
	w := newWorld(t, 2, 8)
	for i, name := range []string{"s1", "s2"} {
		w.run(gpuJob(name, 1, 4, 0), "", t0.Add(end), false)
		r := &w.running[i]
		r.GPUs, r.CheckpointEvery, r.Started = 4, 30*time.Minute, t0.Add(-time.Duration(i+1)*10*time.Minute)
		if i == 0 { // fill s1's node while s2 is placed, so that s2 goes to the other
			if _, u := w.state.Place(gpuJob("pad", 1, 4, 0)); u != nil {
				t.Fatal(u)
			}
			defer func() {
				if err := w.state.Release("pad"); err != nil {
					t.Fatal(err)
				}
			}()
		}
	}
	if w.state.Job("s1").Tasks[0].Node == w.state.Job("s2").Tasks[0].Node {
		t.Fatal("the small units should be on two nodes")
	}
	return w.submit(gpuJob("big", 1, 8, 0), "") // pad leaves before the cycle
}

// The waiting unit gains 8 GPUs x 20 hours by starting now; moving s1,
// the cheaper, loses 4 GPUs x (10 minutes + a restart): s1 is moved (a
// Preempt marked Move) and the unit waits for it, told the numbers.
func TestCycleMovesASmallUnitForAWaitingGang(t *testing.T) {
	w := defragWorld(t, 20*time.Hour)
	d := Cycle(w.snapshot(Config{Defrag: &Defrag{Moves: 4}}))
	if len(d.Preempts) != 1 || d.Preempts[0] != (Preempt{Victim: "s1", For: "big", Move: true}) {
		t.Fatalf("preempts %+v, want s1 moved for big; %q", d.Preempts, transcript(d))
	}
	wt, ok := waitOf(d, "big")
	if !ok || wt.Code != CodePreempting || wt.Defrag == nil {
		t.Fatalf("big should wait for the move: %+v", wt)
	}
	if g, l := wt.Defrag.GainGPUH, wt.Defrag.LostGPUH; g != 8*20 || l != 4*(15*time.Minute).Hours() {
		t.Errorf("gain %.2f, lost %.2f GPU-h; want 160 and 1", g, l)
	}
	if !strings.Contains(wt.Reason, "moving 1 small units out of its way") {
		t.Errorf("reason %q does not say what moves", wt.Reason)
	}
	if len(d.Reservations) != 1 || d.Reservations[0].Releasing[0] != "s1" || !d.Reservations[0].At.Equal(t0) {
		t.Errorf("reservations %+v, want big's over s1, now", d.Reservations)
	}
}

// Nothing moves when the rule says no: defragmentation off, no moves left
// this hour, the unit would start soon anyway (the move loses more than it
// gains), the small units do not checkpoint, or GPUs are short rather than
// scattered.
func TestCycleMovesNothingWhenItDoesNotPay(t *testing.T) {
	for _, tc := range []struct {
		name   string
		end    time.Duration
		cfg    Config
		change func(*world)
		reason string
	}{
		{name: "off", end: 20 * time.Hour, cfg: Config{}},
		{name: "no moves left", end: 20 * time.Hour, cfg: Config{Defrag: &Defrag{Moves: 0}}},
		{name: "starts soon anyway", end: 5 * time.Minute, cfg: Config{Defrag: &Defrag{Moves: 4}},
			reason: "moving 1 small units would lose 1.0 GPU-h to gain 0.7"},
		{name: "no checkpoints", end: 20 * time.Hour, cfg: Config{Defrag: &Defrag{Moves: 4}}, change: func(w *world) {
			w.running[0].CheckpointEvery, w.running[1].CheckpointEvery = 0, 0
		}},
		{name: "GPUs short", end: 20 * time.Hour, cfg: Config{Defrag: &Defrag{Moves: 4}}, change: func(w *world) {
			w.run(gpuJob("third", 1, 2, 0), "", noTime, false)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := defragWorld(t, tc.end)
			if tc.change != nil {
				tc.change(w)
			}
			d := Cycle(w.snapshot(tc.cfg))
			if len(d.Preempts) != 0 {
				t.Fatalf("moved %+v", d.Preempts)
			}
			wt, ok := waitOf(d, "big")
			if !ok || wt.Code != CodeCapacity || wt.Defrag != nil {
				t.Fatalf("big should wait for room: %+v", wt)
			}
			if !strings.Contains(wt.Reason, tc.reason) {
				t.Errorf("reason %q, want it to say %q", wt.Reason, tc.reason)
			}
		})
	}
}
