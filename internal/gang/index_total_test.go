package gang

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/corral-sched/corral/internal/fleet"
)

// FreeWholeGPUs, kept as nodes change, is what counting FreeGPUs over
// every node gives, through placements, releases, health changes and
// what-ifs.
func TestFreeWholeGPUsIsTheCount(t *testing.T) {
	f, err := fleet.Synthetic{Nodes: 12, GPUsPerNode: 8}.Build()
	if err != nil {
		t.Fatal(err)
	}
	st := newState(t, f)
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
			st.WhatIf(placed, gpuJob("what-if", 2, 4))
		default:
			j := gpuJob(fmt.Sprintf("j%d", i), 1+rng.IntN(3), 1+rng.IntN(4))
			if _, ok := st.TryPlace(j); ok {
				placed = append(placed, j.Name)
			}
		}
		if got, want := st.FreeWholeGPUs(), count(); got != want {
			t.Fatalf("step %d: FreeWholeGPUs %d, counted %d", i, got, want)
		}
	}
}
