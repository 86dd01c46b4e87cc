package sim

import (
	"math"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/workload"
)

// A pool that scales from zero: nodes join when waiting work needs them,
// after the provisioning delay, and leave once empty for the scale-down
// time; only nodes that are there are paid for.
func TestAutoscaleFromZeroAndBack(t *testing.T) {
	f := smallFleet(4, 8)
	for i := range f.Nodes {
		f.Nodes[i].Pool = "train"
	}
	a := arrival("a", 0, 1, 8, time.Hour, time.Hour)
	b := arrival("b", 3*time.Hour, 2, 8, time.Hour, time.Hour)
	opt := Options{Autoscale: []Autoscale{{Pool: "train", Min: 0, Max: 4, ProvisionDelay: 10 * time.Minute, ScaleDownAfter: 30 * time.Minute}}}
	for _, policy := range []string{"corral", "kube-default"} {
		p, _ := NewPolicy(policy)
		res, err := RunWith(f, workload.Workload{Arrivals: []workload.Arrival{a, b}, Horizon: 6 * time.Hour}, p, opt)
		if err != nil {
			t.Fatal(err)
		}
		ra, rb := record(t, res, "a"), record(t, res, "b")
		if ra.Start != 10*time.Minute || rb.Start != 3*time.Hour+10*time.Minute || !rb.Finished {
			t.Errorf("%s: a starts %v, b starts %v; want 10m and 3h10m (after provisioning)", policy, ra.Start, rb.Start)
		}
		sum := res.Summary
		if sum.ScaleUps != 3 || sum.ScaleDowns != 3 {
			t.Errorf("%s: %d nodes up, %d down; want 3 and 3", policy, sum.ScaleUps, sum.ScaleDowns)
		}
		// One node from 0 to 1h40m, two from 3h to 4h40m.
		if want := 8*(100.0/60) + 16*(100.0/60); math.Abs(sum.BoughtGPUHours-want) > 1e-6 {
			t.Errorf("%s: bought %.3f GPU-h, want %.3f", policy, sum.BoughtGPUHours, want)
		}
		for _, h := range res.Hours {
			if h.Hour == 2 && h.Groups[0].GPUs != 0 {
				t.Errorf("%s: %d GPUs there at 2h, want none (scaled to zero)", policy, h.Groups[0].GPUs)
			}
		}
	}
	// Without autoscaling every node is paid for all along.
	p, _ := NewPolicy("corral")
	res, err := Run(f, workload.Workload{Arrivals: []workload.Arrival{a, b}, Horizon: 6 * time.Hour}, p)
	if err != nil {
		t.Fatal(err)
	}
	if want := 32 * res.Summary.MakespanH; math.Abs(res.Summary.BoughtGPUHours-want) > 1e-6 {
		t.Errorf("fixed fleet: bought %.3f GPU-h, want %.3f", res.Summary.BoughtGPUHours, want)
	}
}

// The autoscaler never goes below the minimum nor above the maximum, and
// rejects settings that make no sense.
func TestAutoscaleBounds(t *testing.T) {
	f := smallFleet(4, 8)
	for i := range f.Nodes {
		f.Nodes[i].Pool = "train"
	}
	var arr []workload.Arrival
	for i := 0; i < 6; i++ {
		arr = append(arr, arrival(string(rune('a'+i)), 0, 1, 8, time.Hour, time.Hour))
	}
	p, _ := NewPolicy("corral")
	res, err := RunWith(f, workload.Workload{Arrivals: arr, Horizon: 6 * time.Hour}, p,
		Options{Autoscale: []Autoscale{{Pool: "train", Min: 1, Max: 2, ProvisionDelay: time.Minute, ScaleDownAfter: time.Hour}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range res.Hours {
		if g := h.Groups[0].GPUs; g < 8 || g > 16 {
			t.Errorf("hour %d: %d GPUs there, want between 1 and 2 nodes", h.Hour, g)
		}
	}
	if res.Summary.Finished != 6 {
		t.Errorf("%d of 6 jobs finished", res.Summary.Finished)
	}
	for _, bad := range []Autoscale{
		{Pool: "train", Min: 3, Max: 2, ScaleDownAfter: time.Hour},
		{Pool: "train", Max: 2},
		{Pool: "nosuch", Max: 2, ScaleDownAfter: time.Hour},
	} {
		if _, err := RunWith(f, workload.Workload{Arrivals: arr, Horizon: time.Hour}, p, Options{Autoscale: []Autoscale{bad}}); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}
