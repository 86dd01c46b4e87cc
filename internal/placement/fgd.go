package placement

import (
	"math"

	"github.com/corral-sched/corral/internal/model"
)

// FGD is fragmentation gradient descent (Weng et al., ATC'23): place the pod
// where it increases the node's fragmentation against the typical mix the
// least. score = int(sigmoid((F_before - F_after)/1000) x 100); a sharing pod
// tries every fitting GPU and keeps the first best, which it then takes.
type FGD struct {
	mix   Mix
	cache scoreCache
}

// NewFGD returns FGD measuring fragmentation against mix.
func NewFGD(mix Mix) *FGD { return &FGD{mix: mix} }

func (*FGD) Name() string { return "fgd" }

func (f *FGD) Place(c *Cluster, pod *model.Pod, feasible []int) Choice {
	class := f.cache.class(pod)
	n := argmax(feasible, func(n int) int64 {
		return int64(f.cache.get(c, n, class, func() (float64, int) {
			s, g := f.score(c, n, pod)
			return float64(s), g
		}).score)
	})
	return Choice{Node: n, GPUs: f.gpus(c, n, class, pod)}
}

func (f *FGD) gpus(c *Cluster, n, class int, pod *model.Pod) []int {
	if pod.IsShare() {
		return []int{f.cache.get(c, n, class, nil).gpu}
	}
	return bestFitGPUs(c.GPULeft[n], pod)
}

// score returns node n's FGD score for pod and, for a sharing pod, the GPU.
func (f *FGD) score(c *Cluster, n int, pod *model.Pod) (int64, int) {
	gpuModel, left := c.Nodes[n].Model, c.GPULeft[n]
	before := f.mix.Frag(gpuModel, c.CPULeft[n], left)
	cpuAfter := c.CPULeft[n] - scoredCPU(pod)
	after := make([]int64, len(left))
	copy(after, left)
	if !pod.IsShare() {
		takeWhole(after, pod)
		return fgdScore(before, f.mix.Frag(gpuModel, cpuAfter, after)), -1
	}
	best, bestGPU := int64(0), -1
	for g, l := range left {
		if l < pod.GPUMilli || seenEarlier(left, g) {
			continue // an earlier GPU with the same milli left scored the same
		}
		after[g] -= pod.GPUMilli
		s := fgdScore(before, f.mix.Frag(gpuModel, cpuAfter, after))
		after[g] = l
		if bestGPU < 0 || s > best {
			best, bestGPU = s, g
		}
	}
	return best, bestGPU
}

func fgdScore(before, after float64) int64 {
	return int64(sigmoid((before-after)/1000) * maxScore)
}

func sigmoid(x float64) float64 { return 1.0 / (1.0 + math.Exp(-x)) }

// takeWhole subtracts a whole-GPU pod from a GPU list, taking fully free
// GPUs as the artifact's packing subtraction does.
func takeWhole(left []int64, pod *model.Pod) {
	need := gpuCount(*pod)
	for _, g := range ascendingByLeft(left) {
		if need == 0 {
			return
		}
		if pod.GPUMilli <= left[g] {
			left[g] -= pod.GPUMilli
			need--
		}
	}
}

// seenEarlier reports whether a GPU before g has the same milli left.
func seenEarlier(left []int64, g int) bool {
	for i := 0; i < g; i++ {
		if left[i] == left[g] {
			return true
		}
	}
	return false
}
