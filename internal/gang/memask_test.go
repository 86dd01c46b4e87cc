package gang

import (
	"fmt"
	"strings"
	"testing"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/job"
)

// pool is a run of identical nodes for the memory-ask tests, one rack per
// racks' worth of nodes.
type pool struct {
	model        string
	nodes, gpus  int
	perRack      int // nodes per rack; 0: one rack for the pool
	pricePerHour float64
}

// pools builds a fleet of one level, rack; every pool has racks of its own.
func pools(ps ...pool) *fleet.Fleet {
	f := &fleet.Fleet{Levels: []string{"rack"}}
	for p, pl := range ps {
		for i := 0; i < pl.nodes; i++ {
			rack := fmt.Sprintf("p%d-r0", p)
			if pl.perRack > 0 {
				rack = fmt.Sprintf("p%d-r%d", p, i/pl.perRack)
			}
			f.Nodes = append(f.Nodes, fleet.Node{
				Name: fmt.Sprintf("p%d-n%d", p, i), Domains: []string{rack},
				CPUMilli: 64000, MemoryMiB: 1 << 20, GPUModel: pl.model, GPUs: pl.gpus,
				PricePerGPUHour: pl.pricePerHour,
			})
		}
	}
	return f
}

func memJob(name string, total, perGPU int64, models ...string) *job.Job {
	return &job.Job{Name: name, ByGPUMemory: &job.MemoryAsk{TotalMiB: total << 10, MinPerGPUMiB: perGPU << 10, Models: models}}
}

func TestResolveMemoryAsk(t *testing.T) {
	h100 := pool{model: "H100-80GB", nodes: 2, gpus: 8}
	h200 := pool{model: "H200-141GB", nodes: 2, gpus: 8}
	for _, tc := range []struct {
		name  string
		fleet *fleet.Fleet
		ask   *job.Job
		want  string // the shape chosen
	}{
		{"fewest GPUs: 5 H200 before 8 H100", pools(h100, h200), memJob("a", 600, 0), "5x H200-141GB (705Gi)"},
		{"allowed models", pools(h100, h200), memJob("a", 600, 0, "H100-80GB"), "8x H100-80GB (640Gi)"},
		{"over one node: equal tasks of at most a node's GPUs", pools(h100), memJob("a", 1200, 0), "16x H100-80GB as 2 tasks of 8 (1280Gi)"},
		{"uneven split: 9 GPUs as 2 tasks of 5", pools(h100), memJob("a", 700, 0), "10x H100-80GB as 2 tasks of 5 (800Gi)"},
		{"equal GPUs: one node before two in a rack",
			pools(pool{model: "A100-80GB", nodes: 4, gpus: 4}, h100), memJob("a", 600, 0), "8x H100-80GB (640Gi)"},
		{"equal GPUs and domain: the cheaper model",
			pools(pool{model: "A100-80GB", nodes: 1, gpus: 8, pricePerHour: 3}, pool{model: "H100-80GB", nodes: 1, gpus: 8, pricePerHour: 2}),
			memJob("a", 600, 0), "8x H100-80GB (640Gi)"},
		{"equal GPUs and domain: the cheaper model, prices swapped",
			pools(pool{model: "A100-80GB", nodes: 1, gpus: 8, pricePerHour: 2}, pool{model: "H100-80GB", nodes: 1, gpus: 8, pricePerHour: 3}),
			memJob("a", 600, 0), "8x A100-80GB (640Gi)"},
		{"a known price before an unknown one",
			pools(pool{model: "A100-80GB", nodes: 1, gpus: 8}, pool{model: "H100-80GB", nodes: 1, gpus: 8, pricePerHour: 9}),
			memJob("a", 600, 0), "8x H100-80GB (640Gi)"},
		{"no prices: the model's name",
			pools(pool{model: "H100-80GB", nodes: 1, gpus: 8}, pool{model: "A100-80GB", nodes: 1, gpus: 8}),
			memJob("a", 600, 0), "8x A100-80GB (640Gi)"},
		{"cheap small GPUs tie on count",
			pools(pool{model: "L40S", nodes: 1, gpus: 8, pricePerHour: 1}, pool{model: "A100-80GB", nodes: 1, gpus: 8, pricePerHour: 3}),
			memJob("a", 96, 0), "2x L40S (96Gi)"},
		{"a minimum per GPU excludes the cheap model",
			pools(pool{model: "L40S", nodes: 1, gpus: 8, pricePerHour: 1}, pool{model: "A100-80GB", nodes: 1, gpus: 8, pricePerHour: 3}),
			memJob("a", 96, 60), "2x A100-80GB (160Gi)"},
		{"the fewest GPUs win over a tighter domain",
			pools(pool{model: "H200-141GB", nodes: 4, gpus: 2, perRack: 4}, pool{model: "H100-80GB", nodes: 1, gpus: 8}),
			memJob("a", 600, 0), "6x H200-141GB as 3 tasks of 2 (846Gi)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newState(t, tc.fleet)
			got, err := s.Resolve(tc.ask)
			if err != nil {
				t.Fatal(err)
			}
			if got.Shape.String() != tc.want {
				t.Errorf("shape %s, want %s", got.Shape, tc.want)
			}
			g := got.Groups[0]
			if g.Count != got.Shape.Tasks || g.Task.GPUs != got.Shape.GPUsPerTask || len(g.Task.Models) != 1 || g.Task.Models[0] != got.Shape.Model {
				t.Errorf("group %+v does not ask for the shape %s", g, got.Shape)
			}
		})
	}
}

func TestResolveMemoryAskRefused(t *testing.T) {
	f := pools(pool{model: "H100-80GB", nodes: 2, gpus: 8}, pool{model: "A100-40GB", nodes: 1, gpus: 8})
	for _, tc := range []struct {
		name string
		ask  *job.Job
		want []string
	}{
		{"minimum per GPU over every model", memJob("a", 600, 100),
			[]string{"asks 600Gi of GPU memory, at least 100Gi per GPU", "A100-40GB has 40Gi per GPU, under the 100Gi asked", "H100-80GB has 80Gi per GPU, under the 100Gi asked"}},
		{"more than the fleet", memJob("a", 2000, 0),
			[]string{"asks 2000Gi of GPU memory: no GPU model", "the fleet's H100-80GB nodes cannot hold 28x H100-80GB as 4 tasks of 7 (2240Gi)",
				"the fleet's A100-40GB nodes cannot hold 56x A100-40GB as 7 tasks of 8 (2240Gi)"}},
		{"allowed model too small for the fleet", memJob("a", 400, 0, "A100-40GB"),
			[]string{"asks 400Gi of GPU memory, models A100-40GB", "H100-80GB (80Gi) is not among the allowed models", "the fleet's A100-40GB nodes cannot hold 10x A100-40GB as 2 tasks of 5 (400Gi)"}},
		{"unknown model", memJob("a", 100, 0, "Z9000"), []string{`unknown GPU model "Z9000"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newState(t, f)
			_, err := s.Resolve(tc.ask)
			if err == nil {
				t.Fatal("resolved, want a refusal")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("refusal %q\nlacks %q", err, w)
				}
			}
			_, unfit := s.Place(tc.ask)
			if unfit == nil || !strings.Contains(unfit.Error(), tc.want[0]) {
				t.Errorf("Place: %v, want a refusal naming %q", unfit, tc.want[0])
			}
		})
	}
}

// TestPlaceMemoryAsk places a job that asks by GPU memory: its tasks land
// on the chosen model, the placement records the shape, the quota charge
// is known before, and the choice is made once per State.
func TestPlaceMemoryAsk(t *testing.T) {
	s := newState(t, pools(pool{model: "H100-80GB", nodes: 2, gpus: 8}, pool{model: "H200-141GB", nodes: 1, gpus: 8}))
	j := memJob("big", 600, 0)
	if got := s.LeastMilli(j); got != 5000 {
		t.Errorf("LeastMilli %d, want 5000 (5 H200s)", got)
	}
	if !s.WhatIf(nil, j) || s.Explain(j) != nil {
		t.Errorf("WhatIf false or Explain %v on an empty fleet", s.Explain(j))
	}
	p, unfit := s.Place(j)
	if unfit != nil {
		t.Fatal(unfit)
	}
	if got := nodesOf(p); len(got) != 1 || got[0] != "p1-n0" || len(p.Tasks[0].GPUs) != 5 {
		t.Errorf("placed on %v with %d GPUs, want 5 GPUs of p1-n0 (the H200 node)", got, len(p.Tasks[0].GPUs))
	}
	if p.Spec().Shape == nil || p.Spec().ByGPUMemory == nil {
		t.Errorf("placement's job %+v lacks the ask or the shape", p.Spec())
	}
	if j.Shape != nil || len(j.Groups) != 0 {
		t.Errorf("the job asked for was changed: %+v", j)
	}
	// The H200 node has 3 GPUs left: a second ask waits for its model,
	// whatever the H100s could give.
	second := memJob("second", 600, 0)
	if s.WhatIf(nil, second) {
		t.Error("a second 600Gi ask fits; want it to wait for 5 H200s")
	}
	if why := s.Explain(second).String(); !strings.HasPrefix(why, "asks 600Gi of GPU memory: the scheduler chose 5x H200-141GB (705Gi); needs 5 GPUs") {
		t.Errorf("Explain %q does not name the model waited for", why)
	}
	if _, unfit := s.Place(second); unfit == nil || !strings.Contains(unfit.Error(), "chose 5x H200-141GB") {
		t.Errorf("Place: %v, want it refused naming the shape", unfit)
	}
	if len(s.asks) != 1 {
		t.Errorf("%d cached choices, want 1 for one ask", len(s.asks))
	}
}
