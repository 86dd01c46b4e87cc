package gang

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/corral-sched/corral/internal/job"
)

func TestWhatIfChangesNothing(t *testing.T) {
	s := newState(t, grid(t, []string{"rack"}, []int{1}, 2, 8, "H100"))
	for _, j := range []string{"a", "b"} {
		if _, u := s.Place(gpuJob(j, 1, 8)); u != nil {
			t.Fatal(u)
		}
	}
	big := gpuJob("big", 2, 8)
	for _, tc := range []struct {
		release []string
		want    bool
	}{{nil, false}, {[]string{"a"}, false}, {[]string{"a", "b"}, true}, {[]string{"nosuch"}, false}} {
		if got := s.WhatIf(tc.release, big); got != tc.want {
			t.Errorf("WhatIf(%v) = %v, want %v", tc.release, got, tc.want)
		}
	}
	if s.FreeGPUs(0) != 0 || s.FreeGPUs(1) != 0 || s.Job("a") == nil || s.Job("big") != nil {
		t.Fatal("WhatIf changed the state")
	}
}

func TestSpreadOptionPicksTheEmptiestNode(t *testing.T) {
	f := grid(t, []string{"rack"}, []int{2}, 2, 8, "H100")
	s, err := NewWithOptions(f, Options{Spread: true})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i := 0; i < 4; i++ {
		p, u := s.Place(gpuJob(string(rune('a'+i)), 1, 1))
		if u != nil {
			t.Fatal(u)
		}
		seen[p.Tasks[0].NodeName] = true
	}
	if len(seen) != 4 {
		t.Fatalf("spread put four 1-GPU tasks on %d nodes, want 4", len(seen))
	}
}

func TestWholeNodeTakesEveryGPU(t *testing.T) {
	f := grid(t, []string{"rack"}, []int{1}, 2, 8, "H100")
	s := newState(t, f)
	if _, u := s.Place(gpuJob("one", 1, 1)); u != nil {
		t.Fatal(u)
	}
	j := gpuJob("excl", 1, 1)
	j.Groups[0].Task.WholeNode = true
	p, u := s.Place(j)
	if u != nil {
		t.Fatal(u)
	}
	if len(p.Tasks[0].GPUs) != 8 || p.Tasks[0].Node == s.Job("one").Tasks[0].Node {
		t.Fatalf("whole-node task got %v on node %d", p.Tasks[0].GPUs, p.Tasks[0].Node)
	}
	j2 := gpuJob("excl2", 1, 1)
	j2.Groups[0].Task.WholeNode = true
	if _, u := s.Place(j2); u == nil {
		t.Fatal("a whole-node task was placed on a node already in use")
	}
}

// TestWhatIfAgreesWithPlace checks the capacity-only answer against
// placing, on randomly occupied fleets and random gangs.
func TestWhatIfAgreesWithPlace(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	levels := []string{"rack", "node", "block"}
	for c := 0; c < 400; c++ {
		s := newState(t, grid(t, []string{"block", "rack"}, []int{2, 2}, 2, 8, "H100"))
		for i := 0; i < rng.IntN(30); i++ {
			s.Place(gpuJob(fmt.Sprintf("f%d", i), 1, 1+rng.IntN(8)))
		}
		j := gpuJob("probe", 1+rng.IntN(6), 1+rng.IntN(8))
		if rng.IntN(2) == 0 {
			j.Topology = []job.Constraint{{Level: levels[rng.IntN(3)], Required: true}}
		}
		if rng.IntN(3) == 0 {
			j.MinMember = 1 + rng.IntN(j.Tasks())
		}
		want := s.WhatIf(nil, j)
		_, u := s.Place(j)
		if got := u == nil; got != want {
			t.Fatalf("case %d: WhatIf says %v, Place says %v (%+v)", c, want, got, j)
		}
	}
}

func TestExplainWithoutPlacing(t *testing.T) {
	s := newState(t, grid(t, []string{"rack"}, []int{1}, 2, 8, "H100"))
	if _, u := s.Place(gpuJob("a", 1, 8)); u != nil {
		t.Fatal(u)
	}
	if got := s.Explain(gpuJob("small", 1, 8)); got != nil {
		t.Errorf("a job that fits: reasons %q", got.Lines())
	}
	got := s.Explain(gpuJob("big", 2, 8)).Lines()
	if len(got) == 0 || got[0] != "needs 16 GPUs (2 tasks of 8); the fleet has room for 8 GPUs (1 task of 8) now" {
		t.Errorf("reasons %q", got)
	}
	if s.Job("big") != nil || s.FreeGPUs(1) != 8 {
		t.Error("Explain placed the job")
	}
}
