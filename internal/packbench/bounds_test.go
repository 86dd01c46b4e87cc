package packbench

import (
	"testing"

	"github.com/corral-sched/corral/internal/example"
)

// TestBoundsPerTrace checks that Bounds solves each (trace, seed) once,
// whatever the policies, and that the LP bound is below the offline
// packing it is compared with.
func TestBoundsPerTrace(t *testing.T) {
	nodes, pods, err := example.Load()
	if err != nil {
		t.Fatal(err)
	}
	var specs []Spec
	for _, trace := range []string{"a", "b"} {
		for _, p := range []string{"fgd", "corral"} {
			for s := int64(42); s < 44; s++ {
				specs = append(specs, Spec{Trace: trace, Nodes: nodes, Pods: pods, Policy: p, Seed: s})
			}
		}
	}
	calls := 0
	bounds, err := Bounds(specs, 2, func(done, total int) { calls++ })
	if err != nil {
		t.Fatal(err)
	}
	if calls != 4 {
		t.Errorf("progress called %d times, want 4 (2 traces x 2 seeds)", calls)
	}
	if len(bounds) != 2 || bounds[0].Trace != "a" || bounds[1].Trace != "b" {
		t.Fatalf("bounds %+v, want traces a and b in order", bounds)
	}
	for _, b := range bounds {
		if b.LP.N != 2 || b.Packed.N != 2 {
			t.Errorf("%s: %d LP and %d packed values, want 2 seeds each", b.Trace, b.LP.N, b.Packed.N)
		}
		if b.LP.Min < 0 || b.LP.Max > b.Packed.Max+1e-9 {
			t.Errorf("%s: LP bound %+v not in [0, packed %+v]", b.Trace, b.LP, b.Packed)
		}
	}
	if bounds[0].LP != bounds[1].LP || bounds[0].Packed != bounds[1].Packed {
		t.Errorf("the same pods under two names gave %+v and %+v", bounds[0], bounds[1])
	}
}
