package sched

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"
)

// A queue at its quota with a long backlog must not hide another queue's
// work: bob's job starts in the same cycle, and alice's jobs cost no
// placement attempts.
func TestCycleQuotaBacklogDoesNotStarve(t *testing.T) {
	w := newWorld(t, 1, 8, quota("alice", 4), quota("bob", 4))
	for i := range 4 {
		w.run(gpuJob(fmt.Sprintf("alice-run-%d", i), 1, 1, 0), "alice", noTime, false)
	}
	for i := range 1004 {
		w.submit(gpuJob(fmt.Sprintf("alice-%04d", i), 1, 1, 0), "alice")
	}
	w.submit(gpuJob("bob-1", 1, 1, 0), "bob")
	d := Cycle(w.snapshot(Config{Attempts: 10, FairShare: true}))
	if !started(d, "bob-1") {
		t.Fatalf("bob's job did not start; decisions: %v", transcript(d)[:3])
	}
	if wt, _ := waitOf(d, "alice-0000"); wt.Code != CodeQuota {
		t.Errorf("alice's first waiting job: %v (%s), want quota", wt.Code, wt.Reason)
	}
	if len(d.Starts) != 1 {
		t.Errorf("%d starts, want only bob's", len(d.Starts))
	}
}

// A gang that does not fit holds a reservation; a 1-GPU job submitted after
// it, with no runtime estimate, may not take the room it waits for.
func TestCycleGangReservationHoldsAgainstSmallJobs(t *testing.T) {
	w := newWorld(t, 1, 8)
	w.runMany("r", 6, 0, "", false)
	w.submit(gpuJob("gang", 2, 2, 0), "")
	w.submit(gpuJob("small", 1, 1, 0), "")
	d := Cycle(w.snapshot(Config{}))
	want := []string{
		"reserve gang releasing [r5 r4]",
		"wait gang capacity",
		"wait small reserved",
	}
	if got := transcript(d); !slices.Equal(got, want) {
		t.Fatalf("decisions:\n%v\nwant\n%v", got, want)
	}
}

// With reservations turned off (negative), the same gang holds nothing:
// the 1-GPU job behind it takes the room it waits for, as the upstream
// scheduler would place it.
func TestCycleNoReservationsLetsSmallJobsPass(t *testing.T) {
	w := newWorld(t, 1, 8)
	w.runMany("r", 6, 0, "", false)
	w.submit(gpuJob("gang", 2, 2, 0), "")
	w.submit(gpuJob("small", 1, 1, 0), "")
	d := Cycle(w.snapshot(Config{Reservations: -1}))
	want := []string{
		"start small",
		"wait gang capacity",
	}
	if got := transcript(d); !slices.Equal(got, want) {
		t.Fatalf("decisions:\n%v\nwant\n%v", got, want)
	}
	if len(d.Reservations) != 0 {
		t.Errorf("reservations %v, want none", d.Reservations)
	}
}

// With known ends, a job that ends before the reservation starts backfills;
// one that would run past it and take the reserved room waits.
func TestCycleBackfillEndsBeforeReservation(t *testing.T) {
	w := newWorld(t, 1, 8)
	for i := range 6 {
		w.run(gpuJob(fmt.Sprintf("r%d", i), 1, 1, 0), "", t0.Add(time.Duration(i+1)*time.Hour), false)
	}
	w.submit(gpuJob("gang", 2, 2, 0), "")
	short := gpuJob("short", 1, 1, 0)
	short.Runtime = 30 * time.Minute
	long := gpuJob("long", 1, 1, 0)
	long.Runtime = 5 * time.Hour
	w.submit(short, "").submit(long, "")
	d := Cycle(w.snapshot(Config{}))
	want := []string{
		"start short backfill",
		"reserve gang releasing [r0 r1]",
		"wait gang capacity",
		"wait long reserved",
	}
	if got := transcript(d); !slices.Equal(got, want) {
		t.Fatalf("decisions:\n%v\nwant\n%v", got, want)
	}
	if wt, _ := waitOf(d, "gang"); !wt.Estimate.Equal(t0.Add(2 * time.Hour)) {
		t.Errorf("gang's estimate %v, want %v", wt.Estimate, t0.Add(2*time.Hour))
	}
}

// Preemption takes the fewest lower-priority victims, most recent first;
// while they stop, the room they free is held for the preemptor: a waiting
// low-priority job does not take it, and nothing more is preempted.
func TestCyclePreemptionHoldsFreedRoom(t *testing.T) {
	w := newWorld(t, 1, 8)
	w.runMany("low", 8, 0, "", true)
	w.submit(gpuJob("big", 1, 8, 10), "")
	w.submit(gpuJob("low-waiting", 1, 1, 0), "")
	d := Cycle(w.snapshot(Config{Preemption: true}))
	if len(d.Preempts) != 8 || d.Preempts[0].Victim != "low0" {
		t.Fatalf("preempts %v, want all 8, the most recent (low0) first", d.Preempts)
	}

	// Next cycle: three victims have exited, the rest are stopping.
	for _, name := range []string{"low0", "low1", "low2"} {
		if err := w.state.Release(name); err != nil {
			t.Fatal(err)
		}
	}
	w.running = slices.DeleteFunc(w.running, func(r Running) bool { return r.Name <= "low2" })
	for i := range w.running {
		w.running[i].StoppingFor = "big"
	}
	d = Cycle(w.snapshot(Config{Preemption: true}))
	want := []string{
		"reserve big releasing [low3 low4 low5 low6 low7]",
		"wait big preempting",
		"wait low-waiting reserved",
	}
	if got := transcript(d); !slices.Equal(got, want) {
		t.Fatalf("second cycle:\n%v\nwant\n%v", got, want)
	}
}

// A unit larger than the whole fleet is told so, and holds no reservation.
func TestCycleNeverFits(t *testing.T) {
	w := newWorld(t, 1, 8).run(gpuJob("r", 1, 1, 0), "", noTime, false)
	w.submit(gpuJob("huge", 2, 8, 0), "")
	d := Cycle(w.snapshot(Config{}))
	if wt, _ := waitOf(d, "huge"); wt.Code != CodeNeverFits || len(d.Reservations) != 0 {
		t.Fatalf("huge: %v %q, reservations %v; want never-fits, none", wt.Code, wt.Reason, d.Reservations)
	}
}

// Attempts bound placements, not units: quota skips are free, and units
// past the bound are told they were not considered.
func TestCycleAttemptsBoundPlacements(t *testing.T) {
	w := newWorld(t, 1, 8, quota("a", 0), quota("b", 8))
	for i := range 5 {
		w.submit(gpuJob(fmt.Sprintf("a%d", i), 1, 1, 0), "a")
	}
	for i := range 3 {
		w.submit(gpuJob(fmt.Sprintf("b%d", i), 1, 1, 0), "b")
	}
	d := Cycle(w.snapshot(Config{Attempts: 2, FairShare: true}))
	if !started(d, "b0") || !started(d, "b1") || started(d, "b2") {
		t.Fatalf("starts %v, want b0 and b1", transcript(d))
	}
	if wt, _ := waitOf(d, "b2"); wt.Code != CodeNotConsidered {
		t.Errorf("b2: %v, want not-considered", wt.Code)
	}
}

// Equal snapshots give equal decisions.
func TestCycleDeterministic(t *testing.T) {
	build := func() Decisions {
		w := newWorld(t, 4, 8, quota("a", 16), quota("b", 16))
		for i := range 20 {
			q := []string{"a", "b"}[i%2]
			w.submit(gpuJob(fmt.Sprintf("j%02d", i), 1+i%3, 1+i%4, i%2), q)
		}
		return Cycle(w.snapshot(Config{Preemption: true}))
	}
	a, b := transcript(build()), transcript(build())
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("two runs differ:\n%v\n%v", a, b)
	}
}

// A queue within its own quota takes back what it lent: the youngest
// running units of the borrowing peer are stopped, and only enough of them.
func TestCycleReclaimsLentQuota(t *testing.T) {
	a, b := quota("a", 4), quota("b", 4)
	a.Cohort, b.Cohort = "c", "c"
	w := newWorld(t, 1, 8, a, b)
	w.runMany("b", 8, 0, "b", true)
	w.submit(gpuJob("a-job", 1, 2, 0), "a")
	d := Cycle(w.snapshot(Config{Preemption: true}))
	want := []string{
		"preempt b0 for a-job",
		"preempt b1 for a-job",
		"reserve a-job releasing [b0 b1]",
		"wait a-job quota",
	}
	if got := transcript(d); !slices.Equal(got, want) {
		t.Fatalf("decisions:\n%v\nwant\n%v", got, want)
	}
}

// A unit that may never preempt waits, whatever its priority.
func TestCycleNeverPreempts(t *testing.T) {
	w := newWorld(t, 1, 8)
	w.runMany("low", 8, 0, "", true)
	w.submit(gpuJob("polite", 1, 8, 10), "")
	w.pending[0].NeverPreempts = true
	d := Cycle(w.snapshot(Config{Preemption: true}))
	if len(d.Preempts) != 0 {
		t.Fatalf("preempts %v, want none", d.Preempts)
	}
}

// Units already stopping for other reasons are waited for before anything
// more is preempted.
func TestCycleWaitsForStoppingUnits(t *testing.T) {
	w := newWorld(t, 1, 8)
	w.runMany("low", 8, 0, "", true)
	for i := range 4 {
		w.running[i].StoppingFor = "-"
	}
	w.submit(gpuJob("four", 1, 4, 10), "")
	d := Cycle(w.snapshot(Config{Preemption: true}))
	if len(d.Preempts) != 0 {
		t.Fatalf("preempts %v, want none: four stopping units free enough", d.Preempts)
	}
	if wt, _ := waitOf(d, "four"); wt.Code != CodePreempting {
		t.Fatalf("four waits with %v (%s), want preempting", wt.Code, wt.Reason)
	}
}

// A unit that would delay a reservation where it first lands starts on a
// node the reserved unit does not need, if there is one.
func TestCycleBackfillsAroundReservedNodes(t *testing.T) {
	w := newWorld(t, 3, 8)
	for i := range 3 {
		w.run(gpuJob(fmt.Sprintf("r%d", i), 1, 7, 0), "", noTime, false) // one a node
		w.running[i].Started = t0.Add(time.Duration(i) * time.Minute)    // r0 oldest: its node is held
	}
	w.submit(gpuJob("gang", 2, 8, 0), "")
	w.submit(gpuJob("small", 1, 1, 0), "")
	d := Cycle(w.snapshot(Config{}))
	if !started(d, "small") || !d.Starts[0].Backfill {
		t.Fatalf("decisions %v: want small to backfill", transcript(d))
	}
	held := map[string]bool{}
	for _, name := range d.Reservations[0].Releasing {
		held[w.state.Job(name).Tasks[0].NodeName] = true
	}
	if node := d.Starts[0].Placement.Tasks[0].NodeName; held[node] {
		t.Errorf("small on %s, a node the gang's reservation holds", node)
	}
}

// A unit larger than the whole fleet is told it never fits even when
// another unit holds the cycle's only reservation (an autoscaler then
// knows that only new nodes help).
func TestCycleNeverFitsBehindAReservation(t *testing.T) {
	w := newWorld(t, 2, 8)
	w.run(gpuJob("sitter", 1, 1, 0), "", noTime, true)
	w.submit(gpuJob("pair", 2, 8, 0), "")
	w.submit(gpuJob("big", 3, 8, 0), "")
	d := Cycle(w.snapshot(Config{}))
	if wt, _ := waitOf(d, "pair"); wt.Code != CodeCapacity {
		t.Errorf("pair waits with %v, want capacity", wt.Code)
	}
	if wt, _ := waitOf(d, "big"); wt.Code != CodeNeverFits {
		t.Errorf("big waits with %v (%s), want never-fits", wt.Code, wt.Reason)
	}
}

// A reservation kept from the last cycle (Unit.Kept) is taken as the face
// vouches for it, without a search, when nothing starts ahead of its unit
// and its units are still the first by estimated end; otherwise, or for a
// reservation of quota, the cycle searches as if none were kept.
func TestCycleKeptReservation(t *testing.T) {
	build := func(kept *Reservation) *world {
		w := newWorld(t, 1, 8)
		w.runMany("r", 6, 0, "", false)
		w.submit(gpuJob("gang", 2, 2, 0), "")
		w.submit(gpuJob("small", 1, 1, 0), "")
		w.pending[0].Kept = kept
		return w
	}
	fresh := transcript(Cycle(build(nil).snapshot(Config{})))
	if fresh[0] != "reserve gang releasing [r5 r4]" {
		t.Fatalf("fresh search: %v", fresh)
	}
	for _, tc := range []struct {
		kept Reservation
		want string
	}{
		{Reservation{Unit: "gang", Releasing: []string{"r5", "r4"}}, "reserve gang releasing [r5 r4]"},
		{Reservation{Unit: "gang", Releasing: []string{"r5", "r4", "r3"}}, "reserve gang releasing [r5 r4 r3]"}, // taken as vouched for
		{Reservation{Unit: "gang", Releasing: []string{"r0", "r1", "r2"}}, "reserve gang releasing [r5 r4]"},    // not the first by end
		{Reservation{Unit: "gang", Releasing: []string{"r5", "r4", "r3"}, Quota: true}, "reserve gang releasing [r5 r4]"},
	} {
		got := transcript(Cycle(build(&tc.kept).snapshot(Config{})))
		if !slices.Contains(got, tc.want) {
			t.Errorf("kept %v: decisions %v, want %q", tc.kept, got, tc.want)
		}
	}
}
