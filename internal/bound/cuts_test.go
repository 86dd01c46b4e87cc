package bound

import (
	"fmt"
	"testing"

	"github.com/corral-sched/corral/internal/placement"
)

// maxPerGPU returns the most that the shares on one GPU can add up to under
// f, over all multisets of shares of sizes step, 2*step, ... below 1000 that
// fit on the GPU (an unbounded knapsack).
func maxPerGPU(f cut, step int) float64 {
	units := placement.MilliPerGPU / step
	best := make([]float64, units+1)
	for c := 1; c <= units; c++ {
		best[c] = best[c-1]
		for s := 1; s <= c && s*step < placement.MilliPerGPU; s++ {
			v := f(&podClass{numGPU: 1, gpuMilli: int64(s * step)})
			best[c] = max(best[c], best[c-s]+v)
		}
	}
	return best[units]
}

// TestCutsAreValid checks that no GPU's shares add up to more than 1 under
// any cut, by exhaustive search, and that whole-GPU pods count their GPUs.
func TestCutsAreValid(t *testing.T) {
	type named struct {
		name string
		f    cut
		step int
	}
	var cuts []named
	for j := 1; j <= cutLevels; j++ {
		cuts = append(cuts, named{fmt.Sprintf("j=%d", j), jCut(j), 1})
	}
	for a := int64(255); a <= placement.MilliPerGPU-5; a += 5 {
		k := int(placement.MilliPerGPU / a)
		cuts = append(cuts, named{fmt.Sprintf("k=%d a=%d", k, a), thresholdCut(k, a), 5})
	}
	for _, a := range []int64{251, 333, 334, 401, 499, 501, 667, 811, 999} {
		k := int(placement.MilliPerGPU / a)
		cuts = append(cuts, named{fmt.Sprintf("k=%d a=%d", k, a), thresholdCut(k, a), 1})
	}
	for _, c := range cuts {
		if got := maxPerGPU(c.f, c.step); got > 1+1e-12 {
			t.Errorf("cut %s: shares on one GPU add up to %.6f > 1", c.name, got)
		}
		for _, n := range []int{1, 2, 8} {
			if got := c.f(&podClass{numGPU: n, gpuMilli: placement.MilliPerGPU}); got != float64(n) {
				t.Errorf("cut %s: a %d-GPU pod counts %v, want %d", c.name, n, got, n)
			}
		}
	}
}
