package placement

import (
	"math"
)

// The settings of corral's packing policy. They were chosen on the openb
// traces (bench/fgd/RESULTS.md records what else was tried).
const (
	// corralBlend weighs FGD's one-pod fragmentation against FragCopies,
	// which also sees CPU that will run out before the GPUs do and the
	// milli a GPU cannot hold in whole copies of a typical pod.
	corralBlend = 0.9
	// corralWindow is how close to the best score (in milli-GPU of
	// fragmentation) a node must be to be taken in tie-break order. A fixed
	// order inside a narrow window packs like first-fit, which keeps nodes
	// late in the order untouched for large pods.
	corralWindow = 30.0
	// onlineHalfLife (pods) and onlineRefresh (pods) govern corral-online's
	// estimate of the mix: a pod's weight halves every onlineHalfLife
	// arrivals, and the estimate is renewed after onlineRefresh arrivals or
	// a tenth of all arrivals so far, whichever is more (every renewal
	// rescores every node).
	onlineHalfLife = 2000
	onlineRefresh  = 50
)

// Corral is corral's own packing policy. For every feasible node it computes
// how much placing the pod increases the node's fragmentation, measured
// against the workload mix as a blend of FGD's Frag and FragCopies, without
// FGD's integer truncation. It takes the earliest node in tie-break order
// whose increase is within corralWindow milli of the least. A sharing pod
// takes the GPU with the least increase (lowest index on ties); a whole-GPU
// pod the lowest-index free GPUs.
//
// Before that, a poolGuard (pool.go) keeps a pod that may use several GPU
// models off the models that pods restricted to them will need in full,
// and a hostGuard (guard.go) sets aside the nodes where the pod would end
// the last hosts of a pod shape that is running out of them; each only as
// long as another feasible node remains.
//
// NewCorral is given the mix of the whole workload in advance, like FGD;
// NewCorralOnline learns it from the pods that have arrived.
type Corral struct {
	name        string
	mix         Mix
	learner     *Learner // nil when the mix is given
	ownsLearner bool     // Observe feeds the learner
	version     int      // the learner's renewal the policy follows
	cache       stateScores
	blender     *blender // the mix prepared for frag; nil until used after a change
	all         Mix      // every shape seen, weighted by arrivals, for the guard
	guard       hostGuard
	pools       poolGuard
	renew       bool      // the guard must start over from all
	scores      []float64 // scratch of Place: the feasible nodes' scores
}

// NewCorral returns corral's policy, measuring against the typical mix of
// the given workload.
func NewCorral(pods []Pod) *Corral {
	return &Corral{name: "corral", mix: TypicalMix(pods, 95), all: groupPods(pods), renew: true}
}

// NewCorralOnline returns corral's policy that knows nothing in advance and
// learns the mix from arriving pods, recent ones weighing more.
func NewCorralOnline() *Corral {
	return &Corral{name: "corral-online", learner: NewLearner(), ownsLearner: true}
}

// NewCorralLearning returns corral's policy following a learner that its
// owner feeds: the policy's Observe does nothing, and the estimate of the
// mix is whatever the learner's latest renewal says.
func NewCorralLearning(l *Learner) *Corral {
	return &Corral{name: "corral-online", learner: l}
}

func (p *Corral) Name() string { return p.name }

// Observe learns from an arriving pod (corral-online with its own
// learner only).
func (p *Corral) Observe(pod *Pod) {
	if p.ownsLearner {
		p.learner.Observe(pod)
	}
}

// follow takes up the learner's latest renewal of the mix, if it is new.
func (p *Corral) follow() {
	if p.learner == nil || p.learner.version == p.version {
		return
	}
	p.version = p.learner.version
	p.mix = p.learner.mix
	p.blender = nil
	p.all = p.learner.all
	p.renew = true
	p.cache.forget() // scores depend on the mix
}

func (p *Corral) Place(c *Cluster, pod *Pod, feasible []int) Choice {
	p.follow()
	class := p.cache.class(pod)
	scored := func(n int) cached {
		if e, ok := p.cache.fresh(c, n, class); ok {
			return e
		}
		return p.cache.fill(c, n, class, func() (float64, int) { return p.score(c, n, pod) })
	}
	score := func(n int) float64 { return scored(n).score }
	choice := func(n int) int { return scored(n).gpu } // a sharing pod's GPU comes with its score
	if p.renew {
		all := p.all
		if p.learner != nil {
			all = withWholeNodePrior(c, all)
		}
		p.guard.reset(c, all)
		p.pools.reset(c, all)
		p.renew = false
	}
	if len(p.all) > 0 || p.learner != nil { // given an empty mix, no shape needs its hosts kept
		if kept := p.pools.keep(c, pod, feasible, p.guard.arrivals(c)); kept != nil {
			feasible = kept
		}
		if kept := p.guard.keep(c, pod, class, feasible, choice); len(kept) > 0 {
			feasible = kept
		}
	}
	best := math.Inf(-1)
	p.scores = p.scores[:0]
	for _, n := range feasible {
		v := score(n)
		p.scores = append(p.scores, v)
		best = max(best, v)
	}
	n := feasible[0]
	for i, m := range feasible {
		if p.scores[i] >= best-corralWindow {
			n = m
			break
		}
	}
	return Choice{Node: n, GPUs: p.cache.gpus(c, n, class, pod)} // n was scored
}

// wholeNodePrior is the weight, in arrivals, of the pod that asks for a
// whole node of each size in the fleet, which the guard of a policy that
// learns the mix counts before any such pod has arrived. Without it, the
// first large pods find every empty node broken by small ones: on the
// built-in example, four 8-GPU pods arriving after the last empty node
// was taken left 6.13% of the GPUs unallocated (seed 48) against fgd's
// 1.83. One arrival's weight halves with the learner's half-life like any
// other, so a workload that never asks for whole nodes soon outweighs it.
const wholeNodePrior = 1.0

// withWholeNodePrior returns the learned shapes with a whole-node shape of
// each node size in c (any model, no CPU) weighing wholeNodePrior more.
// The prior shapes come first and keep their places, so a learner that
// later sees one of them changes no shape's index (the guard relies on it).
func withWholeNodePrior(c *Cluster, learned Mix) Mix {
	var all Mix
	at := map[classKey]int{}
	for _, n := range c.Nodes {
		k := classKey{0, MilliPerGPU, n.GPUs, ""}
		if _, ok := at[k]; ok || n.GPUs == 0 {
			continue
		}
		at[k] = len(all)
		all = append(all, Typical{GPUMilli: MilliPerGPU, NumGPU: n.GPUs, Weight: wholeNodePrior})
	}
	for _, t := range learned {
		k := classKey{t.CPUMilli, t.GPUMilli, t.NumGPU, joinModels(t.Models)}
		if i, ok := at[k]; ok {
			all[i].Weight += t.Weight
			continue
		}
		all = append(all, t)
	}
	return all
}

// frag is the fragmentation corral minimises.
func (p *Corral) frag(gpuModel string, cpuLeft int64, left []int64) float64 {
	if p.blender == nil {
		p.blender = newBlender(p.mix)
	}
	return p.blender.blend(corralBlend, 1-corralBlend, gpuModel, cpuLeft, left)
}

// fragNow is node n's fragmentation as it is.
func (p *Corral) fragNow(c *Cluster, n int) float64 {
	return p.cache.fragNow(c, n, func() float64 { return p.frag(c.Nodes[n].Model, c.CPULeft[n], c.GPULeft[n]) })
}

// score is minus the increase of node n's fragmentation if it takes pod,
// and for a sharing pod the GPU that increases it least.
func (p *Corral) score(c *Cluster, n int, pod *Pod) (float64, int) {
	gpuModel := c.Nodes[n].Model
	before := p.fragNow(c, n)
	return bestTrial(c, n, pod, func(cpuAfter int64, after []int64) float64 {
		return before - p.frag(gpuModel, cpuAfter, after)
	})
}
