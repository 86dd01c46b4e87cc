package gang

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/job"
)

// FreeWholeGPUs, kept as nodes change, is what counting FreeGPUs over
// every node gives, through placements, releases, health changes and
// what-ifs.
func TestFreeWholeGPUsIsTheCount(t *testing.T) {
	f, err := fleet.Synthetic{Nodes: 12, GPUsPerNode: 8}.Build()
	if err != nil {
		t.Fatal(err)
	}
	st, err := New(f)
	if err != nil {
		t.Fatal(err)
	}
	count := func() int {
		n := 0
		for i := range f.Nodes {
			n += st.FreeGPUs(i)
		}
		return n
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var placed []string
	for i := range 400 {
		switch op := rng.IntN(4); {
		case op == 0 && len(placed) > 0:
			k := rng.IntN(len(placed))
			if err := st.Release(placed[k]); err != nil {
				t.Fatal(err)
			}
			placed = append(placed[:k], placed[k+1:]...)
		case op == 1:
			node := f.Nodes[rng.IntN(len(f.Nodes))].Name
			h := []fleet.Health{fleet.Healthy, fleet.Unhealthy, fleet.Cordoned}[rng.IntN(3)]
			if err := st.SetHealth(node, h); err != nil {
				t.Fatal(err)
			}
		case op == 2:
			st.WhatIf(placed, &job.Job{Name: "what-if", Groups: []job.Group{{Name: "w", Count: 2, Task: job.Demand{GPUs: 4}}}})
		default:
			j := &job.Job{Name: fmt.Sprintf("j%d", i), Groups: []job.Group{{Name: "w", Count: 1 + rng.IntN(3), Task: job.Demand{GPUs: 1 + rng.IntN(4)}}}}
			if _, ok := st.TryPlace(j); ok {
				placed = append(placed, j.Name)
			}
		}
		if got, want := st.FreeWholeGPUs(), count(); got != want {
			t.Fatalf("step %d: FreeWholeGPUs %d, counted %d", i, got, want)
		}
	}
}
