package placement

import (
	"math"
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

func (f *FGD) Place(c *Cluster, pod *Pod, feasible []int) Choice {
	class := f.cache.class(pod)
	n := argmax(feasible, func(n int) int64 {
		return int64(f.cache.get(c, n, class, func() (float64, int) { return f.score(c, n, pod) }).score)
	})
	return Choice{Node: n, GPUs: f.cache.gpus(c, n, class, pod)}
}

// score returns node n's FGD score for pod and, for a sharing pod, the GPU.
func (f *FGD) score(c *Cluster, n int, pod *Pod) (float64, int) {
	gpuModel := c.Nodes[n].Model
	before := f.mix.Frag(gpuModel, c.CPULeft[n], c.GPULeft[n])
	return bestTrial(c, n, pod, func(cpuAfter int64, after []int64) float64 {
		return float64(fgdScore(before, f.mix.Frag(gpuModel, cpuAfter, after)))
	})
}

func fgdScore(before, after float64) int64 {
	return int64(sigmoid((before-after)/1000) * maxScore)
}

func sigmoid(x float64) float64 { return 1.0 / (1.0 + math.Exp(-x)) }

// bestTrial tries pod on node n and returns the highest value of the node's
// state after taking it and, for a sharing pod, the GPU that gives it: every
// fitting GPU is tried (one per distinct milli left, since GPUs with the same
// milli left give the same state), and the lowest index wins ties. A
// whole-GPU or CPU-only pod has one state and GPU -1.
func bestTrial(c *Cluster, n int, pod *Pod, value func(cpuAfter int64, after []int64) float64) (float64, int) {
	left := c.GPULeft[n]
	cpuAfter := c.CPULeft[n] - scoredCPU(pod)
	after := make([]int64, len(left))
	copy(after, left)
	if !pod.IsShare() {
		takeWhole(after, pod)
		return value(cpuAfter, after), -1
	}
	best, bestGPU := math.Inf(-1), -1
	for g, l := range left {
		if l < pod.GPUMilli || seenEarlier(left, g) {
			continue
		}
		after[g] -= pod.GPUMilli
		if v := value(cpuAfter, after); v > best {
			best, bestGPU = v, g
		}
		after[g] = l
	}
	return best, bestGPU
}

// takeWhole subtracts a whole-GPU pod from a GPU list, taking fully free
// GPUs as the artifact's packing subtraction does.
func takeWhole(left []int64, pod *Pod) {
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
