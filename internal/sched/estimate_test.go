package sched

import (
	"slices"
	"testing"
	"time"
)

// A face that explains waits asks for estimates beyond the reservation:
// each unit waiting for room is told when enough running work will have
// ended for it to fit, the head's estimate held, the others' not, and
// the decisions are the same as without them.
func TestCycleEstimatesWaitsWithoutReserving(t *testing.T) {
	build := func() *world {
		w := newWorld(t, 1, 2)
		w.run(gpuJob("long", 1, 1, 0), "", t0.Add(2*time.Hour), false)
		w.run(gpuJob("short", 1, 1, 0), "", t0.Add(time.Hour), false)
		w.submit(gpuJob("one", 1, 1, 0), "")
		w.submit(gpuJob("two", 1, 2, 0), "")
		w.submit(gpuJob("three", 2, 1, 0), "") // another shape: it searches too
		return w
	}
	plain := Cycle(build().snapshot(Config{}))
	told := Cycle(build().snapshot(Config{Estimates: 1}))
	all := Cycle(build().snapshot(Config{Estimates: 2}))
	if a, b := transcript(plain), transcript(told); !slices.Equal(a, b) {
		t.Fatalf("estimates changed the decisions:\n%v\nagainst\n%v", b, a)
	}
	for _, tc := range []struct {
		unit string
		d    Decisions
		at   time.Time
		held bool
	}{
		{"one", plain, t0.Add(time.Hour), true},
		{"two", plain, noTime, false},
		{"one", told, t0.Add(time.Hour), true},
		{"two", told, t0.Add(2 * time.Hour), false},
		{"three", told, noTime, false}, // Estimates: 1 told only two
		{"three", all, t0.Add(2 * time.Hour), false},
	} {
		w, ok := waitOf(tc.d, tc.unit)
		if !ok {
			t.Fatalf("%s does not wait", tc.unit)
		}
		if !w.Estimate.Equal(tc.at) || w.Held != tc.held {
			t.Errorf("%s: estimate %v held %v, want %v held %v", tc.unit, w.Estimate, w.Held, tc.at, tc.held)
		}
	}
}
