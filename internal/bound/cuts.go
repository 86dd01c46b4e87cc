package bound

import (
	"cmp"
	"maps"
	"slices"

	"github.com/corral-sched/corral/internal/placement"
)

// A cut is a valid inequality on one node type: sum over the pods placed on
// the type of f(pod) <= the type's GPU count, where f says how much of one
// GPU a pod "uses up". Each cut below is proved per GPU: the pods on any one
// GPU have f summing to at most 1. A whole-GPU pod fills its GPUs, so it
// always counts numGPU.
type cut func(c *podClass) float64

// maxThresholdCuts caps the threshold cuts; the share sizes with the most
// GPU milli get them.
const maxThresholdCuts = 10

// jCut is the cut of the brief: a GPU holds at most j sharing pods of more
// than 1000/(j+1) milli (j+1 of them exceed 1000). Such a pod counts 1/j.
func jCut(j int) cut {
	return func(c *podClass) float64 {
		switch {
		case !c.share():
			return float64(c.numGPU)
		case c.gpuMilli*int64(j+1) > placement.MilliPerGPU:
			return 1 / float64(j)
		}
		return 0
	}
}

// thresholdCut(k, a), for 1000/(k+1) < a <= 1000/k, is a dual feasible
// function in the sense of bin packing: a share of at least a milli counts
// 1/k, one of at most 1000-k*a counts 0, one in between counts h*milli with
// h = 1/(k*(1000-(k-1)*a)).
//
// Proof, for one GPU holding i shares of at least a milli: (k+1)*a > 1000
// gives i <= k. If i = k, the rest sum to at most 1000-k*a, so each counts 0
// and the total is 1. If i < k, the rest sum to at most 1000-i*a and count
// at most h per milli, for a total of at most i/k + h*(1000-i*a), which is
// <= 1 when h <= (k-i)/(k*(1000-i*a)); that bound falls as i grows (as
// k*a <= 1000), so its value at i = k-1, our h, serves every i.
//
// With a = 810 it says a GPU holding an 810-milli share takes nothing of more
// than 190 milli beside it, which the jCuts cannot see.
func thresholdCut(k int, a int64) cut {
	h := 1 / float64(int64(k)*(placement.MilliPerGPU-int64(k-1)*a))
	return func(c *podClass) float64 {
		switch {
		case !c.share():
			return float64(c.numGPU)
		case c.gpuMilli >= a:
			return 1 / float64(k)
		case c.gpuMilli > placement.MilliPerGPU-int64(k)*a:
			return h * float64(c.gpuMilli)
		}
		return 0
	}
}

// chooseCuts returns the jCuts for j = 1..cutLevels, then threshold cuts at
// the share sizes of the classes (a threshold between two sizes is
// dominated by the next size up), the sizes with the most GPU milli first.
func chooseCuts(classes []podClass) []cut {
	var cuts []cut
	for j := 1; j <= cutLevels; j++ {
		cuts = append(cuts, jCut(j))
	}
	volume := map[int64]int64{}
	for _, c := range classes {
		if c.share() && c.gpuMilli*(cutLevels+1) > placement.MilliPerGPU {
			volume[c.gpuMilli] += c.total() * int64(c.count)
		}
	}
	sizes := slices.Collect(maps.Keys(volume))
	slices.SortFunc(sizes, func(a, b int64) int { return cmp.Or(cmp.Compare(volume[b], volume[a]), cmp.Compare(a, b)) })
	for _, a := range sizes[:min(len(sizes), maxThresholdCuts)] {
		cuts = append(cuts, thresholdCut(int(placement.MilliPerGPU/a), a))
	}
	return cuts
}
