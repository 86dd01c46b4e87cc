package placement

import (
	"math/bits"

	"github.com/corral-sched/corral/internal/model"
)

// guardSlack is how many hosts per copy expected before the cluster is full
// a pod shape must keep; with fewer, it is short of hosts. 1.0 and 2.0 were
// both worse on the openb traces (bench/fgd/RESULTS.md, section 6).
const guardSlack = 1.5

// hostGuard keeps nodes for pod shapes that are running out of them.
//
// For every GPU shape seen (every one, not only the typical mix) it counts
// the nodes that can still take one copy, its hosts, and compares them with
// the copies expected to arrive before the cluster is full: the arrivals
// that fit in the GPUs and CPUs left, times the share of arrivals whose
// shape can only use node types this shape can use. That nesting is what
// makes the count honest: 8-GPU pods asking for 88 and for 120 CPUs both
// need the few nodes with 128 CPUs once the 96-CPU nodes are gone. When a
// shape's hosts fall below guardSlack times its expected copies, it is
// short, and a pod of another shape may not end a node's ability to host it
// while some other feasible node would take the pod.
//
// Fragmentation against the typical mix cannot do this: a shape rarer than
// the mix's cut-off weighs nothing in it, however many GPUs it asks for.
type hostGuard struct {
	shapes     Mix // GPU shapes seen; Weight is the share of all arrivals
	index      map[classKey]int
	within     []shapeSet // per shape: shapes whose node types are a subset of its own
	demand     []float64  // per shape: summed weight of within
	meanGPU    float64    // milli-GPU per arrival
	meanCPU    float64    // milli-CPU per arrival
	capacity   int64      // milli-GPU of the cluster
	typeOf     []int      // per node: its type (model, CPU, GPU count)
	typeShapes [][]int    // per node type: the shapes that fit one empty node
	hosts      []int      // per shape: nodes that can take a copy now
	canHost    []shapeSet // per node
	gen        []uint32   // per node: generation + 1 when canHost was computed
	logPos     int        // position in the cluster's change log refresh has read to; -1: read every node
	short      shapeSet
	kept       []int
	after      []int64
}

// reset starts over from an estimate of every shape's share of arrivals
// (counts or decayed counts, CPU-only pods included). A learner only ever
// adds shapes, so when the shapes are those of the last reset only the
// weights moved.
func (g *hostGuard) reset(c *Cluster, all Mix) {
	total, gpu, cpu := 0.0, 0.0, 0.0
	var shapes Mix
	for _, t := range all {
		total += t.Weight
		gpu += t.Weight * float64(t.GPUMilli) * float64(t.NumGPU)
		cpu += t.Weight * float64(t.CPUMilli)
		if t.GPUMilli > 0 {
			shapes = append(shapes, t)
		}
	}
	for i := range shapes {
		shapes[i].Weight /= total
	}
	g.meanGPU, g.meanCPU = gpu/total, cpu/total
	g.logPos = -1 // recount every node at the next refresh
	if g.index != nil && g.sameShapes(shapes) {
		g.shapes = shapes
		g.sumDemand()
		return
	}
	g.shapes = shapes
	g.index = map[classKey]int{}
	for s, t := range shapes {
		g.index[classKey{t.CPUMilli, t.GPUMilli, t.NumGPU, joinModels(t.Models)}] = s
	}
	g.capacity = 0
	for _, n := range c.Nodes {
		g.capacity += int64(n.GPUs) * model.MilliPerGPU
	}
	g.nest(c)
	g.sumDemand()
	g.hosts = make([]int, len(g.shapes))
	g.canHost = make([]shapeSet, len(c.Nodes))
	g.gen = make([]uint32, len(c.Nodes))
	g.short = newShapeSet(len(g.shapes))
}

// sameShapes reports whether shapes are the guard's, in the same order.
func (g *hostGuard) sameShapes(shapes Mix) bool {
	if len(shapes) != len(g.shapes) {
		return false
	}
	for s, t := range shapes {
		if i, ok := g.index[classKey{t.CPUMilli, t.GPUMilli, t.NumGPU, joinModels(t.Models)}]; !ok || i != s {
			return false
		}
	}
	return true
}

// nest finds the node types each shape fits when empty, and for every
// shape the shapes that can only use node types it can use.
func (g *hostGuard) nest(c *Cluster) {
	types, typeOf := nodeTypes(c)
	g.typeOf = typeOf
	g.typeShapes = make([][]int, len(types))
	uses := make([][]bool, len(g.shapes))
	for s, t := range g.shapes {
		uses[s] = make([]bool, len(types))
		for i, n := range types {
			if t.fitsEmpty(c.Nodes[n]) {
				uses[s][i] = true
				g.typeShapes[i] = append(g.typeShapes[i], s)
			}
		}
	}
	g.within = make([]shapeSet, len(g.shapes))
	for s := range g.shapes {
		g.within[s] = newShapeSet(len(g.shapes))
		for o := range g.shapes {
			if subset(uses[o], uses[s]) {
				g.within[s].add(o)
			}
		}
	}
}

func (g *hostGuard) sumDemand() {
	g.demand = make([]float64, len(g.shapes))
	for s := range g.shapes {
		for o, t := range g.shapes {
			if g.within[s].has(o) {
				g.demand[s] += t.Weight
			}
		}
	}
}

// nodeTypes returns one node of each (model, CPU, GPU count), and each
// node's type.
func nodeTypes(c *Cluster) (reps, typeOf []int) {
	type key struct {
		model string
		cpu   int64
		gpus  int
	}
	seen := map[key]int{}
	typeOf = make([]int, len(c.Nodes))
	for n, node := range c.Nodes {
		k := key{node.Model, node.CPUMilli, node.GPUs}
		i, ok := seen[k]
		if !ok {
			i = len(reps)
			seen[k] = i
			reps = append(reps, n)
		}
		typeOf[n] = i
	}
	return reps, typeOf
}

func subset(a, b []bool) bool {
	for i := range a {
		if a[i] && !b[i] {
			return false
		}
	}
	return true
}

// fitsEmpty reports whether one copy of t fits on node when it is empty.
func (t Typical) fitsEmpty(node model.Node) bool {
	return node.GPUs >= t.NumGPU && node.CPUMilli >= t.CPUMilli && t.allows(node.Model)
}

// fitsOn reports whether one copy of t fits in cpuLeft and the GPUs left
// of a node whose type it may use.
func (t Typical) fitsOn(cpuLeft int64, left []int64) bool {
	return cpuLeft >= t.CPUMilli && countFitting(left, t.GPUMilli) >= t.NumGPU
}

// refresh recounts the hosts on the nodes that changed, from the
// cluster's change log when it reaches back far enough.
func (g *hostGuard) refresh(c *Cluster) {
	changed, next, ok := c.ChangedSince(g.logPos)
	g.logPos = next
	if !ok {
		for n := range c.Nodes {
			g.recount(c, n)
		}
		return
	}
	for _, n := range changed {
		g.recount(c, n)
	}
}

// recount recounts the shapes node n can host, if it changed since the
// last count.
func (g *hostGuard) recount(c *Cluster, n int) {
	gen := c.Generation(n) + 1
	if g.gen[n] == gen {
		return
	}
	g.gen[n] = gen
	now := newShapeSet(len(g.shapes))
	shapes := g.typeShapes[g.typeOf[n]]
	for _, s := range shapes {
		if g.shapes[s].fitsOn(c.CPULeft[n], c.GPULeft[n]) {
			now.add(s)
		}
	}
	was := g.canHost[n]
	for _, s := range shapes {
		switch {
		case now.has(s) && (was == nil || !was.has(s)):
			g.hosts[s]++
		case !now.has(s) && was != nil && was.has(s):
			g.hosts[s]--
		}
	}
	g.canHost[n] = now
}

// arrivals is the number of arrivals expected before the cluster is full:
// those that fit in the GPUs and CPUs left.
func (g *hostGuard) arrivals(c *Cluster) float64 {
	return min(float64(g.capacity-c.UsedGPUMilli())/g.meanGPU, float64(c.CPULeftMilli())/g.meanCPU)
}

// shortFor marks the shapes other than pod's own that are short of hosts;
// false if there are none.
func (g *hostGuard) shortFor(c *Cluster, pod *model.Pod) bool {
	arrivals := g.arrivals(c)
	own, known := g.index[classKey{pod.CPUMilli, pod.GPUMilli, pod.NumGPU, pod.ModelSpec()}]
	clear(g.short)
	any := false
	for s := range g.shapes {
		if (known && s == own) || float64(g.hosts[s]) > guardSlack*arrivals*g.demand[s] {
			continue
		}
		g.short.add(s)
		any = true
	}
	return any
}

// keep returns the feasible nodes on which pod ends no short shape's host,
// or nil when no shape is short. gpus is the policy's GPU choice on a node.
func (g *hostGuard) keep(c *Cluster, pod *model.Pod, feasible []int, gpus func(n int) []int) []int {
	g.refresh(c)
	if !g.shortFor(c, pod) {
		return nil
	}
	g.kept = g.kept[:0]
	for _, n := range feasible {
		if !g.endsShort(c, n, pod, gpus) {
			g.kept = append(g.kept, n)
		}
	}
	return g.kept
}

// endsShort reports whether node n, taking pod, stops hosting a short
// shape it hosts now. Only the short shapes it hosts are tried, the first
// lost one ending the search: few shapes are short at a time, and a fleet
// sees hundreds of shapes (every CPU request is one).
func (g *hostGuard) endsShort(c *Cluster, n int, pod *model.Pod, gpus func(n int) []int) bool {
	hosts := g.canHost[n]
	if !hosts.meets(g.short) {
		return false
	}
	cpuAfter := c.CPULeft[n] - pod.CPUMilli
	g.after = append(g.after[:0], c.GPULeft[n]...)
	for _, i := range gpus(n) {
		g.after[i] -= pod.GPUMilli
	}
	for w, word := range hosts {
		for b := word & g.short[w]; b != 0; b &= b - 1 {
			if !g.shapes[w*64+bits.TrailingZeros64(b)].fitsOn(cpuAfter, g.after) {
				return true
			}
		}
	}
	return false
}

// shapeSet is a set of shape indices.
type shapeSet []uint64

func newShapeSet(n int) shapeSet  { return make(shapeSet, (n+63)/64) }
func (s shapeSet) add(i int)      { s[i/64] |= 1 << (i % 64) }
func (s shapeSet) has(i int) bool { return s[i/64]&(1<<(i%64)) != 0 }

// meets reports whether s and o share a member.
func (s shapeSet) meets(o shapeSet) bool {
	for i := range s {
		if s[i]&o[i] != 0 {
			return true
		}
	}
	return false
}
