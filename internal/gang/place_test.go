package gang

import (
	"testing"

	"github.com/corral-sched/corral/internal/job"
)

func TestSingleGPUJobsShareOneNode(t *testing.T) {
	s := newState(t, grid(t, []string{"rack"}, []int{2}, 4, 8, "H100"))
	used := map[string]bool{}
	for i := 0; i < 6; i++ {
		p, u := s.Place(gpuJob(string(rune('a'+i)), 1, 1))
		if u != nil {
			t.Fatal(u)
		}
		used[p.Tasks[0].NodeName] = true
	}
	if len(used) != 1 {
		t.Fatalf("six 1-GPU jobs used %d nodes, want 1: %v", len(used), used)
	}
}

func TestGangHoldsNothingWhenItDoesNotFit(t *testing.T) {
	s := newState(t, grid(t, []string{"rack"}, []int{1}, 3, 4, "H100"))
	if _, u := s.Place(gpuJob("big", 4, 4)); u == nil {
		t.Fatal("4 tasks of 4 GPUs placed on 3 nodes of 4 GPUs")
	} else {
		t.Log(u)
	}
	for n := range s.nodes {
		if s.FreeGPUs(n) != 4 {
			t.Fatalf("node %d holds GPUs after a failed gang", n)
		}
	}
}

func TestGangLandsInOneRack(t *testing.T) {
	s := newState(t, grid(t, []string{"zone", "block", "rack"}, []int{2, 2, 4}, 4, 8, "H100"))
	// Fill a few nodes so that racks differ.
	for i := 0; i < 3; i++ {
		if _, u := s.Place(gpuJob("small"+string(rune('a'+i)), 1, 8)); u != nil {
			t.Fatal(u)
		}
	}
	p, u := s.Place(gpuJob("ar", 4, 8, job.Constraint{Level: "rack", Required: true}))
	if u != nil {
		t.Fatal(u)
	}
	if p.Span[2] != 1 {
		t.Fatalf("span %v, want one rack", p.Span)
	}
	t.Logf("span %v nodes %v", p.Span, nodesOf(p))
}
