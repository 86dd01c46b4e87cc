package sched

import (
	"reflect"
	"slices"
	"testing"
	"time"
)

// Among victims of one priority, the one that loses the least work goes
// first: an old unit that has just checkpointed before a young one that
// never does.
func TestCycleStopsCheapestFirst(t *testing.T) {
	for _, tc := range []struct {
		name       string
		checkpoint time.Duration
		want       string
	}{
		{"old one checkpoints hourly", time.Hour, "old"},
		{"nothing checkpoints: youngest", 0, "young"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, 1, 8)
			w.run(gpuJob("old", 1, 4, 0), "", noTime, true)
			w.run(gpuJob("young", 1, 4, 0), "", noTime, true)
			w.running[0].Started, w.running[0].GPUs, w.running[0].CheckpointEvery = t0.Add(-3*time.Hour), 4, tc.checkpoint
			w.running[1].Started, w.running[1].GPUs = t0.Add(-10*time.Minute), 4
			w.submit(gpuJob("urgent", 1, 4, 10), "")
			d := Cycle(w.snapshot(Config{Preemption: true}))
			if len(d.Preempts) != 1 || d.Preempts[0].Victim != tc.want {
				t.Fatalf("preempts %v, want only %s", d.Preempts, tc.want)
			}
		})
	}
}

// borrowWorld: queue b borrows half of a's quota, filling the one node; a
// unit of a asks for 2 GPUs, within a's own quota.
func borrowWorld(t *testing.T) *world {
	a, b := quota("a", 12), quota("b", 4)
	a.Cohort, b.Cohort = "c", "c"
	w := newWorld(t, 1, 8, a, b)
	w.runMany("b", 8, 0, "b", true)
	w.submit(gpuJob("a-job", 1, 2, 0), "a")
	return w
}

// A queue takes back lent quota when the fleet, not its quota, has no room
// for it: borrowers are stopped until it fits.
func TestCycleReclaimsRoomFromBorrowers(t *testing.T) {
	d := Cycle(borrowWorld(t).snapshot(Config{Preemption: true, Grace: time.Minute}))
	var victims []string
	for _, p := range d.Preempts {
		if !p.Reclaim || p.Grace != time.Minute {
			t.Errorf("preempt %+v: want a reclaim with a minute's grace", p)
		}
		victims = append(victims, p.Victim)
	}
	if want := []string{"b0", "b1"}; !slices.Equal(victims, want) {
		t.Fatalf("victims %v, want %v", victims, want)
	}
}

// Reclaim waits for its patience, and stays within the preemption budget.
func TestCycleReclaimPatienceAndBudget(t *testing.T) {
	for _, tc := range []struct {
		name   string
		waited time.Duration
		budget int
		stops  int
	}{
		{"waited long enough", 2 * time.Hour, 0, 2},
		{"too soon", 10 * time.Minute, 0, 0},
		{"budget of one", 2 * time.Hour, 1, 0},
		{"budget of two", 2 * time.Hour, 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := borrowWorld(t)
			w.pending[0].Since = t0.Add(-tc.waited)
			d := Cycle(w.snapshot(Config{Preemption: true, ReclaimPatience: time.Hour, PreemptionBudget: tc.budget}))
			if len(d.Preempts) != tc.stops {
				t.Fatalf("preempts %v, want %d", d.Preempts, tc.stops)
			}
		})
	}
}

// A unit preempted to give quota back may not borrow again until its
// back-off ends; within its own quota it still starts.
func TestCycleBorrowBackOff(t *testing.T) {
	a, b := quota("a", 2), quota("b", 6)
	a.Cohort, b.Cohort = "c", "c"
	for _, tc := range []struct {
		name    string
		until   time.Duration
		gpus    int
		started bool
	}{
		{"borrowing during back-off", time.Hour, 4, false},
		{"within its own quota during back-off", time.Hour, 2, true},
		{"borrowing after back-off", -time.Minute, 4, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, 1, 8, a, b)
			w.submit(gpuJob("a-job", 1, tc.gpus, 0), "a")
			w.pending[0].NoBorrowUntil = t0.Add(tc.until)
			d := Cycle(w.snapshot(Config{}))
			if started(d, "a-job") != tc.started {
				t.Fatalf("decisions %v: started %v, want %v", transcript(d), !tc.started, tc.started)
			}
		})
	}
}

// The search for a reservation finds the same answer whatever its hint.
func TestFirstFitFromAnyHint(t *testing.T) {
	for n := 1; n <= 12; n++ {
		for want := 1; want <= n+1; want++ {
			fits := func(k int) bool { return k >= want }
			for bound := 1; bound <= min(want, n); bound++ {
				for hint := 0; hint <= n+1; hint++ {
					k, ok := firstFitFrom(bound, hint, n, fits)
					if ok != (want <= n) || ok && k != want {
						t.Fatalf("n %d want %d bound %d hint %d: got %d %v", n, want, bound, hint, k, ok)
					}
				}
			}
		}
	}
}

// A reclaim stops no borrower that the others already cover: b's three
// 1-GPU units cost least and are taken first, then its 8-GPU unit, which
// alone covers the quota a lacks; of the three, only the one a's second
// task needs room from stops.
func TestCycleReclaimStopsOnlyWhatItNeeds(t *testing.T) {
	a, b := quota("a", 12), quota("b", 4)
	a.Cohort, b.Cohort = "c", "c"
	w := newWorld(t, 2, 8, a, b)
	w.run(gpuJob("b-big", 1, 8, 0), "b", noTime, true)
	w.runMany("b", 3, 0, "b", true)
	for i := range w.running {
		w.running[i].GPUs = float64(w.running[i].Need[gpu]) / 1000
	}
	w.submit(gpuJob("a-job", 2, 6, 0), "a")
	d := Cycle(w.snapshot(Config{Preemption: true}))
	var victims []string
	for _, p := range d.Preempts {
		victims = append(victims, p.Victim)
	}
	slices.Sort(victims)
	if want := []string{"b-big", "b0"}; !slices.Equal(victims, want) {
		t.Fatalf("victims %v, want %v (transcript %q)", victims, want, transcript(d))
	}
}

// A unit held by quota its queue lent is told who borrows it and when
// the core may take it back (once it has waited the patience); after the
// patience no date is given, and one asking beyond its queue's own quota
// is told nothing of reclaim.
func TestCycleSaysWhoBorrowsAndWhenReclaimStarts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		gpus   int
		waited time.Duration
		want   *ReclaimWait
	}{
		{"within the patience", 2, 10 * time.Minute, &ReclaimWait{Cohort: "c", Borrowers: []string{"b"}, At: t0.Add(50 * time.Minute)}},
		{"after it", 2, 2 * time.Hour, &ReclaimWait{Cohort: "c", Borrowers: []string{"b"}}},
		{"beyond its own quota", 5, 10 * time.Minute, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := quota("a", 4), quota("b", 4)
			a.Cohort, b.Cohort = "c", "c"
			w := newWorld(t, 2, 8, a, b)
			w.runMany("b", 8, 0, "b", true) // b borrows all of a's 4
			w.submit(gpuJob("a-job", 1, tc.gpus, 0), "a")
			w.pending[0].Since = t0.Add(-tc.waited)
			d := Cycle(w.snapshot(Config{Reclaim: true, ReclaimPatience: time.Hour}))
			wt, ok := waitOf(d, "a-job")
			if !ok || wt.Code != CodeQuota {
				t.Fatalf("wait %+v, want one for quota", wt)
			}
			if !reflect.DeepEqual(wt.Reclaim, tc.want) {
				t.Errorf("reclaim %+v, want %+v", wt.Reclaim, tc.want)
			}
		})
	}
}
