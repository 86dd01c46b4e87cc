package placement

import (
	"math"
	"math/rand"
)

// Scale constants of the FGD artifact's scores.
const (
	maxScore   = 100
	maxSpecCPU = 128000 // milli-CPU of the largest node
	maxSpecGPU = 8000   // milli-GPU of the largest node
	defaultCPU = 100    // Kubernetes scores a zero CPU request as 100 milli
)

// scoredCPU is the CPU request Kubernetes scores with.
func scoredCPU(p *Pod) int64 {
	if p.CPUMilli == 0 {
		return defaultCPU
	}
	return p.CPUMilli
}

// Random picks a feasible node uniformly, and a fitting GPU inside it
// uniformly, drawing from the run's random source as the artifact does.
type Random struct{ rng *rand.Rand }

func (Random) Name() string { return "random" }

func (r *Random) Place(c *Cluster, pod *Pod, feasible []int) Choice {
	n := feasible[0]
	if len(feasible) > 1 {
		n = feasible[r.rng.Intn(len(feasible))]
	}
	if !pod.IsShare() {
		return Choice{Node: n, GPUs: bestFitGPUs(c.GPULeft[n], pod)}
	}
	gpu, seen := -1, 0
	for g, l := range c.GPULeft[n] {
		if l >= pod.GPUMilli {
			seen++
			if r.rng.Intn(seen) == 0 {
				gpu = g
			}
		}
	}
	return Choice{Node: n, GPUs: []int{gpu}}
}

// DotProd is Tetris's alignment score over (CPU, GPU), normalised by the
// largest node: int(100 x (1 - dot/2)); 0 where the CPU does not fit.
type DotProd struct{}

func (DotProd) Name() string { return "dotprod" }

func (DotProd) Place(c *Cluster, pod *Pod, feasible []int) Choice {
	cpu := scoredCPU(pod)
	n := argmax(feasible, func(n int) int64 {
		if c.CPULeft[n] < cpu {
			return 0
		}
		dot := float64(c.CPULeft[n])/maxSpecCPU*(float64(cpu)/maxSpecCPU) +
			float64(c.IdleMilli(n))/maxSpecGPU*(float64(pod.TotalGPUMilli())/maxSpecGPU)
		return int64(maxScore * (1 - dot/2))
	})
	return Choice{Node: n, GPUs: bestFitGPUs(c.GPULeft[n], pod)}
}

// Clustering prefers nodes that already hold pods of the same GPU shape
// (sharing, or k whole GPUs), then fuller nodes.
type Clustering struct{}

func (Clustering) Name() string { return "clustering" }

func (Clustering) Place(c *Cluster, pod *Pod, feasible []int) Choice {
	t := tag(*pod)
	n := argmax(feasible, func(n int) int64 {
		if t < 0 {
			return 0
		}
		fill := int64(maxScore/4) * (maxSpecGPU - c.IdleMilli(n)) / maxSpecGPU
		kinds, same := 0, false
		for k, count := range c.tags[n] {
			if count > 0 {
				kinds++
				same = same || k == t
			}
		}
		switch {
		case same && kinds == 1:
			return fill + maxScore*3/4
		case same:
			return fill + maxScore*2/4
		case kinds == 0:
			return fill + maxScore/4
		default:
			return fill
		}
	})
	return Choice{Node: n, GPUs: bestFitGPUs(c.GPULeft[n], pod)}
}

// Packing prefers partly used GPUs, then free GPUs on used nodes, then
// empty nodes.
type Packing struct{}

func (Packing) Name() string { return "packing" }

func (Packing) Place(c *Cluster, pod *Pod, feasible []int) Choice {
	n := argmax(feasible, func(n int) int64 {
		if !pod.IsGPU() {
			return 0
		}
		return packingScore(c.GPULeft[n], pod)
	})
	return Choice{Node: n, GPUs: bestFitGPUs(c.GPULeft[n], pod)}
}

func packingScore(left []int64, pod *Pod) int64 {
	free := countFitting(left, MilliPerGPU)
	if free == len(left) {
		return max(maxScore/3-int64(free), int64(free))
	}
	order := ascendingByLeft(left)
	need, freeUsed := pod.NumGPU, 0
	var ratio int64
	for _, g := range order {
		if need == 0 {
			break
		}
		if pod.GPUMilli <= left[g] {
			need--
			ratio += left[g] * 100 / MilliPerGPU
			if left[g] == MilliPerGPU {
				freeUsed++
			}
		}
	}
	if freeUsed > 0 {
		return max(maxScore/2-int64(freeUsed), maxScore/3)
	}
	return max(maxScore-ratio/10, maxScore/2)
}

// ascendingByLeft orders GPU indices by milli left, stable on ties.
func ascendingByLeft(left []int64) []int {
	order := make([]int, len(left))
	for i := range order {
		order[i] = i
	}
	for i := 1; i < len(order); i++ { // insertion sort: stable, at most 8 GPUs
		for j := i; j > 0 && left[order[j]] < left[order[j-1]]; j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	return order
}

// BestFit prefers the node left with the least CPU and GPU after placing,
// scores min-max normalised across the feasible nodes.
type BestFit struct{}

func (BestFit) Name() string { return "bestfit" }

func (BestFit) Place(c *Cluster, pod *Pod, feasible []int) Choice {
	scores := make([]int64, len(feasible))
	lo, hi := int64(math.MaxInt64), int64(-math.MaxInt64)
	cpu := scoredCPU(pod)
	for i, n := range feasible {
		s := bestFitScore(c.CPULeft[n], c.IdleMilli(n), cpu, pod.TotalGPUMilli())
		scores[i], lo, hi = s, min(lo, s), max(hi, s)
	}
	best := 0
	for i := range scores {
		if hi > lo {
			scores[i] = (scores[i] - lo) * maxScore / (hi - lo)
		} else {
			scores[i] = 0
		}
		if scores[i] > scores[best] {
			best = i
		}
	}
	n := feasible[best]
	return Choice{Node: n, GPUs: bestFitGPUs(c.GPULeft[n], pod)}
}

func bestFitScore(cpuLeft, idle, cpu, gpu int64) int64 {
	if cpuLeft < cpu || idle < gpu {
		return 0
	}
	s := 0.0
	s += (float64(cpuLeft) - float64(cpu)) / maxSpecCPU * 0.5
	s += (float64(idle) - float64(gpu)) / maxSpecGPU * 0.5
	return int64((1.0 - s) * maxScore)
}
