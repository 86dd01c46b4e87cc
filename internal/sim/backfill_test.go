package sim

import (
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/workload"
)

// EASY backfill protects only the first waiting job: a backfill that ends
// before the first job's reservation may still delay the second.
// Conservative backfill protects every reserved job.
func TestConservativeBackfillProtectsEveryReservation(t *testing.T) {
	arr := []workload.Arrival{
		arrival("r1", 0, 1, 8, 10*time.Hour, 10*time.Hour),                    // n0 until 10h
		arrival("r2", 0, 1, 4, 5*time.Hour, 5*time.Hour),                      // half of n1 until 5h
		arrival("h1", 30*time.Minute, 2, 8, 2*time.Hour, 2*time.Hour),         // both nodes: reserved at 10h
		arrival("h2", 36*time.Minute, 1, 8, time.Hour, time.Hour),             // n1 whole: at 5h if protected
		arrival("b", time.Hour, 1, 4, 8*time.Hour, 8*time.Hour),               // fits on n1 now, until 9h
		arrival("late", 90*time.Minute, 1, 4, 30*time.Minute, 30*time.Minute), // short: backfills in the room b leaves
	}
	cases := []struct {
		backfill       string
		h1, h2, b      time.Duration
		lateBeforeFive bool
	}{
		{EasyBackfill, 10 * time.Hour, 9 * time.Hour, time.Hour, false},
		{ConservativeBackfill, 10 * time.Hour, 5 * time.Hour, 12 * time.Hour, true},
	}
	for _, c := range cases {
		t.Run(c.backfill, func(t *testing.T) {
			p, _ := NewPolicy("corral")
			res, err := RunWith(smallFleet(2, 8), workload.Workload{Arrivals: arr, Horizon: 24 * time.Hour}, p, Options{Backfill: c.backfill})
			if err != nil {
				t.Fatal(err)
			}
			got := []time.Duration{record(t, res, "h1").Start, record(t, res, "h2").Start, record(t, res, "b").Start}
			want := []time.Duration{c.h1, c.h2, c.b}
			for i, name := range []string{"h1", "h2", "b"} {
				if got[i] != want[i] {
					t.Errorf("%s starts at %v, want %v", name, got[i], want[i])
				}
			}
			if l := record(t, res, "late"); (l.Start < 5*time.Hour) != c.lateBeforeFive {
				t.Errorf("late starts at %v; before 5h: want %v", l.Start, c.lateBeforeFive)
			}
		})
	}
	p, _ := NewPolicy("corral")
	if _, err := RunWith(smallFleet(2, 8), workload.Workload{Arrivals: arr, Horizon: time.Hour}, p, Options{Backfill: "aggressive"}); err == nil {
		t.Error("unknown backfill mode: no error")
	}
}
