package sim

import (
	"fmt"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/workload"
)

func runWith(t *testing.T, nodes int, opt Options, arrivals ...workload.Arrival) *Result {
	t.Helper()
	p, err := NewPolicy("corral")
	if err != nil {
		t.Fatal(err)
	}
	res, err := RunWith(smallFleet(nodes, 8), workload.Workload{Arrivals: arrivals, Horizon: 48 * time.Hour}, p, opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// With a grace period the victim checkpoints when signalled and loses
// nothing; the reclaiming job starts when the grace runs out, on the
// capacity held for it. A victim that never checkpoints loses its run
// either way.
func TestPreemptionGraceLetsVictimsCheckpoint(t *testing.T) {
	build := func(checkpoints bool) []workload.Arrival {
		b1 := arrival("b1", 0, 1, 8, 10*time.Hour, 10*time.Hour)
		b2 := arrival("b2", 10*time.Minute, 1, 8, 10*time.Hour, 10*time.Hour)
		if checkpoints {
			b1, b2 = checkpointing(b1, time.Hour), checkpointing(b2, time.Hour)
		}
		a1 := arrival("a1", 90*time.Minute, 1, 8, 20*time.Hour, 20*time.Hour)
		b1.Job.Tenant, b2.Job.Tenant, a1.Job.Tenant = "b", "b", "a"
		b1.Job.Preemptible, b2.Job.Preemptible = true, true
		return []workload.Arrival{b1, b2, a1}
	}
	grace := 2 * time.Minute
	cases := []struct {
		name        string
		checkpoints bool
		grace       time.Duration
		a1Start     time.Duration
		b2Lost      float64 // GPU-hours
	}{
		{"no grace: since the last checkpoint", true, 0, 150 * time.Minute, 8 * 20.0 / 60},
		{"grace: nothing lost", true, grace, 150*time.Minute + grace, 0},
		{"grace, no checkpoints: the whole run", false, grace, 150*time.Minute + grace, 8 * 140.0 / 60},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := runWith(t, 2, Options{PreemptGrace: c.grace}, build(c.checkpoints)...)
			a1, b2 := record(t, res, "a1"), record(t, res, "b2")
			if a1.Start != c.a1Start || a1.End != c.a1Start+20*time.Hour {
				t.Errorf("a1 ran %v..%v, want from %v for 20h", a1.Start, a1.End, c.a1Start)
			}
			if b2.Preemptions != 1 || b2.LostGPUHours < c.b2Lost-0.01 || b2.LostGPUHours > c.b2Lost+0.01 {
				t.Errorf("b2: %d preemptions, %.3f GPU-h lost; want 1 and %.3f", b2.Preemptions, b2.LostGPUHours, c.b2Lost)
			}
		})
	}
}

// The hourly bound on preemptions holds in every window of an hour, and
// reclaims it delays still happen once the window moves.
func TestPreemptionsPerHourAreBounded(t *testing.T) {
	var arr []workload.Arrival
	// Equal work, so each tenant's quota is three nodes. Tenant b borrows
	// every node with 6 preemptible jobs; tenant a wants its three nodes
	// back at once.
	for i := 0; i < 6; i++ {
		b := checkpointing(arrival(fmt.Sprintf("b%d", i), time.Duration(i)*time.Second, 1, 8, 20*time.Hour, 20*time.Hour), time.Hour)
		b.Job.Tenant, b.Job.Preemptible = "b", true
		arr = append(arr, b)
	}
	for i := 0; i < 3; i++ {
		a := arrival(fmt.Sprintf("a%d", i), 10*time.Minute, 1, 8, 40*time.Hour, 40*time.Hour)
		a.Job.Tenant = "a"
		arr = append(arr, a)
	}
	for _, limit := range []int{0, 1, 2} {
		res := runWith(t, 6, Options{MaxPreemptionsPerHour: limit}, arr...)
		var stops []time.Duration
		for _, name := range []string{"a0", "a1", "a2"} {
			r := record(t, res, name)
			if !r.Started {
				t.Fatalf("limit %d: %s never started", limit, name)
			}
			stops = append(stops, r.Start) // each a-job starts at the moment of its reclaim
		}
		t.Logf("limit %d: reclaims at %v", limit, stops)
		if res.Summary.Preemptions != 3 {
			t.Errorf("limit %d: %d preemptions, want 3", limit, res.Summary.Preemptions)
		}
		if limit == 0 {
			if stops[2] != stops[0] {
				t.Errorf("unbounded: reclaims at %v, want all at once", stops)
			}
			continue
		}
		for i := range stops {
			inWindow := 0
			for j := range stops {
				if stops[j] >= stops[i] && stops[j] < stops[i]+time.Hour {
					inWindow++
				}
			}
			if inWindow > limit {
				t.Errorf("limit %d: %d preemptions in the hour from %v (starts %v)", limit, inWindow, stops[i], stops)
			}
		}
	}
}

// With priority preemption a job of higher priority stops a cheaper
// preemptible job of lower priority at once; without it, it waits for its
// patience to run out and reclaims its quota.
func TestPriorityPreemption(t *testing.T) {
	build := func() []workload.Arrival {
		l1 := checkpointing(arrival("l1", 0, 1, 8, 10*time.Hour, 10*time.Hour), time.Hour)
		l2 := checkpointing(arrival("l2", 10*time.Minute, 1, 8, 10*time.Hour, 10*time.Hour), time.Hour)
		h := arrival("h", 90*time.Minute, 1, 8, 20*time.Hour, 20*time.Hour)
		l1.Job.Tenant, l2.Job.Tenant, h.Job.Tenant = "low", "low", "high"
		l1.Job.Preemptible, l2.Job.Preemptible = true, true
		h.Job.Priority = 5
		return []workload.Arrival{l1, l2, h}
	}
	for _, c := range []struct {
		on    bool
		start time.Duration
	}{{false, 150*time.Minute + time.Minute}, {true, 90*time.Minute + time.Minute}} {
		res := runWith(t, 2, Options{PriorityPreemption: c.on, PreemptGrace: time.Minute}, build()...)
		if h := record(t, res, "h"); h.Start != c.start {
			t.Errorf("priority preemption %v: h starts at %v, want %v", c.on, h.Start, c.start)
		}
		// l2 loses least (20 minutes since its checkpoint against 30) and checkpoints in its grace.
		if l2 := record(t, res, "l2"); l2.Preemptions != 1 || l2.LostGPUHours != 0 {
			t.Errorf("priority preemption %v: l2 preempted %d times, lost %.2f GPU-h; want 1 and 0", c.on, l2.Preemptions, l2.LostGPUHours)
		}
	}
}
