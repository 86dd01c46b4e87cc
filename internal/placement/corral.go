package placement

import (
	"math"

	"github.com/corral-sched/corral/internal/model"
)

// Knobs tune the experimental corral policy.
type Knobs struct {
	Truncate bool    // use FGD's integer sigmoid score
	PackW    float64 // weight of -idle after (GPUs) as a secondary term
	BestFit  bool    // prefer the least-left GPU among equal deltas
	CPUW     float64 // weight of stranded-CPU term
	Scale    float64 // sigmoid scale (FGD: 1000)
	Bucket   float64 // if > 0: score = floor(delta/Bucket) instead of the sigmoid
	Beta     float64 // scarcity exponent: weight(m) = p(m) x (idle/usable(m))^Beta
	Every    int     // recompute scarcity weights every Every placements
	SS       float64 // weight of the sum-of-squares gap term for sharing pods
	CPUOnly  float64 // CPU-only pods: weight of (idle GPU per CPU left after), lower is better
	FloatTie float64 // weight of the untruncated delta as a secondary term
	TieClass int     // 0: all pods; 1: CPU-only; 2: sharing; 3: whole-GPU
}

// CorralKnobs is the knob setting used by NewCorral (experimental).
var CorralKnobs = Knobs{}

// Corral is corral's own packing policy.
type Corral struct {
	base  Mix // the workload mix
	mix   Mix // the mix with scarcity weights
	k     Knobs
	cache scoreCache
	calls int
}

// NewCorral returns corral's policy given the workload mix.
func NewCorral(mix Mix) *Corral { return &Corral{base: mix, mix: mix, k: CorralKnobs} }

func (*Corral) Name() string { return "corral" }

func (p *Corral) Place(c *Cluster, pod *model.Pod, feasible []int) Choice {
	if p.k.Beta != 0 && p.calls%max(p.k.Every, 1) == 0 {
		p.reweigh(c)
	}
	p.calls++
	class := p.cache.class(pod)
	best, bestScore := -1, math.Inf(-1)
	for _, n := range feasible {
		e := p.cache.get(c, n, class, func() (float64, int) { return p.score(c, n, pod) })
		if e.score > bestScore {
			best, bestScore = n, e.score
		}
	}
	if pod.IsShare() {
		return Choice{Node: best, GPUs: []int{p.cache.get(c, best, class, nil).gpu}}
	}
	return Choice{Node: best, GPUs: bestFitGPUs(c.GPULeft[best], pod)}
}

func (p *Corral) delta(before float64, gpuModel string, cpuAfter int64, after []int64) float64 {
	d := before - p.mix.Frag(gpuModel, cpuAfter, after)
	if p.k.Bucket > 0 {
		return math.Floor(d / p.k.Bucket)
	}
	if p.k.Truncate {
		scale := p.k.Scale
		if scale == 0 {
			scale = 1000
		}
		return float64(int64(sigmoid(d/scale) * maxScore))
	}
	return d
}

func podClassOf(pod *model.Pod) int {
	switch {
	case !pod.IsGPU():
		return 1
	case pod.IsShare():
		return 2
	}
	return 3
}

func (p *Corral) score(c *Cluster, n int, pod *model.Pod) (float64, int) {
	ftie := p.k.FloatTie
	if p.k.TieClass != 0 && p.k.TieClass != podClassOf(pod) {
		ftie = 0
	}
	gpuModel, left := c.Nodes[n].Model, c.GPULeft[n]
	before := p.mix.Frag(gpuModel, c.CPULeft[n], left)
	cpuAfter := c.CPULeft[n] - scoredCPU(pod)
	after := make([]int64, len(left))
	copy(after, left)
	idleAfter := float64(c.IdleMilli(n)-pod.TotalGPUMilli()) / 1000
	extra := -p.k.PackW * idleAfter
	if p.k.CPUW != 0 { // secondary: fraction of CPU left after, weighted
		extra += -p.k.CPUW * float64(cpuAfter) / float64(max(c.Nodes[n].CPUMilli, 1))
	}
	if !pod.IsGPU() && p.k.CPUOnly != 0 {
		extra -= p.k.CPUOnly * float64(c.IdleMilli(n)) / float64(max(cpuAfter, 1000))
	}
	if !pod.IsShare() {
		takeWhole(after, pod)
		d := p.delta(before, gpuModel, cpuAfter, after)
		if ftie != 0 {
			d += ftie * (before - p.mix.Frag(gpuModel, cpuAfter, after))
		}
		return d + extra, -1
	}
	best, bestGPU := math.Inf(-1), -1
	for g, l := range left {
		if l < pod.GPUMilli || seenEarlier(left, g) {
			continue
		}
		after[g] -= pod.GPUMilli
		s := p.delta(before, gpuModel, cpuAfter, after)
		after[g] = l
		if ftie != 0 {
			s += ftie * (before - p.mix.Frag(gpuModel, cpuAfter, after))
		}
		if p.k.SS != 0 {
			s = -p.k.SS*sumSquaresDelta(c, l, pod.GPUMilli) + s
		}
		better := s > best
		if p.k.BestFit && s == best && l < left[bestGPU] {
			better = true
		}
		if bestGPU < 0 || better {
			best, bestGPU = s, g
		}
	}
	return best + extra, bestGPU
}

// CorralOnline learns the mix from the pods that have arrived.
type CorralOnline struct{ *FGD }

// NewCorralOnline returns corral's policy without prior knowledge.
func NewCorralOnline() *CorralOnline { return &CorralOnline{NewFGD(nil)} }

func (*CorralOnline) Name() string { return "corral-online" }

func (*CorralOnline) Observe(*model.Pod) {}

// reweigh sets each typical pod's weight to its popularity times how scarce
// usable capacity for it is: (cluster idle / idle usable by m)^Beta.
func (p *Corral) reweigh(c *Cluster) {
	usable := make([]float64, len(p.base))
	var idle float64
	for n := range c.Nodes {
		id := c.IdleMilli(n)
		idle += float64(id)
		for i, m := range p.base {
			usable[i] += float64(id - m.fragOne(c.Nodes[n].Model, c.CPULeft[n], c.GPULeft[n]))
		}
	}
	mix := make(Mix, len(p.base))
	total := 0.0
	for i, m := range p.base {
		mix[i] = m
		mix[i].Weight = m.Weight * math.Pow((idle+1000)/(usable[i]+1000), p.k.Beta)
		total += mix[i].Weight
	}
	for i := range mix {
		mix[i].Weight /= total
	}
	p.mix = mix
	p.cache = scoreCache{}
}

// sumSquaresDelta is the change of sum over gaps h of N(h)^2 (N(h): partly
// used GPUs with h milli left) when a pod of size takes a GPU with left.
func sumSquaresDelta(c *Cluster, left, size int64) float64 {
	d := 0.0
	if left < model.MilliPerGPU {
		d += float64(1 - 2*c.GPUsWithGap(left))
	}
	if rest := left - size; rest > 0 {
		d += float64(2*c.GPUsWithGap(rest) + 1)
	}
	return d
}
