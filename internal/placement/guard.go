package placement

import (
	"cmp"
	"math/bits"
	"slices"

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
	within     []shapeSet    // per shape: shapes whose node types are a subset of its own
	demand     []float64     // per shape: summed weight of within
	meanGPU    float64       // milli-GPU per arrival
	meanCPU    float64       // milli-CPU per arrival
	capacity   int64         // milli-GPU of the cluster
	typeOf     []int         // per node: its type (model, CPU, GPU count)
	typeShapes [][]int       // per node type: the shapes that fit one empty node
	hosts      []int         // per shape: nodes that can take a copy now
	canHost    []shapeSet    // per node, by position (pos)
	gen        []uint32      // per node: generation + 1 when canHost was computed
	logPos     int           // position in the cluster's change log refresh has read to; -1: read every node
	short      shapeSet      // by position (pos)
	marks      shapeSet      // scratch of shortFor
	version    uint32        // bumped when short changes or the guard is reset
	ends       [][]endsEntry // per node, per pod class: what endsShort found
	kept       []int
	after      []int64
	// The sets over shapes (canHost, short) are kept by position: shapes
	// in groups of one GPU shape (milli, count), each group's the most CPU
	// first, so that endsShort tries one shape a group (groupEnd: where
	// the position's group ends). shapeAt is the shape at a position.
	pos      []int
	shapeAt  []int
	groupEnd []int
	// Each shape's GPU milli as an index into millis, the distinct ones;
	// endsShort counts the GPUs that hold each milli once per node
	// (fitting[i], valid while stamp[i] is the call's).
	milliOf []int
	millis  []int64
	fitting []int
	stamp   []uint32
	call    uint32
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
	g.version++   // the weights, and so what is short, moved
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
	g.indexMillis()
	g.order()
	g.hosts = make([]int, len(g.shapes))
	g.canHost = make([]shapeSet, len(c.Nodes))
	g.gen = make([]uint32, len(c.Nodes))
	g.short = newShapeSet(len(g.shapes))
}

// indexMillis gives every shape the index of its GPU milli among the
// distinct ones.
func (g *hostGuard) indexMillis() {
	at := map[int64]int{}
	g.millis, g.milliOf = g.millis[:0], make([]int, len(g.shapes))
	for s, t := range g.shapes {
		i, ok := at[t.GPUMilli]
		if !ok {
			i = len(g.millis)
			at[t.GPUMilli] = i
			g.millis = append(g.millis, t.GPUMilli)
		}
		g.milliOf[s] = i
	}
	g.fitting, g.stamp, g.call = make([]int, len(g.millis)), make([]uint32, len(g.millis)), 0
}

// order places the shapes in groups of one GPU shape, the most CPU first
// in each.
func (g *hostGuard) order() {
	g.shapeAt = make([]int, len(g.shapes))
	for s := range g.shapeAt {
		g.shapeAt[s] = s
	}
	slices.SortStableFunc(g.shapeAt, func(a, b int) int {
		x, y := &g.shapes[a], &g.shapes[b]
		return cmp.Or(cmp.Compare(x.GPUMilli, y.GPUMilli), cmp.Compare(x.NumGPU, y.NumGPU), cmp.Compare(y.CPUMilli, x.CPUMilli))
	})
	g.pos, g.groupEnd = make([]int, len(g.shapes)), make([]int, len(g.shapes))
	for p, s := range g.shapeAt {
		g.pos[s] = p
	}
	for p := len(g.shapeAt) - 1; p >= 0; p-- {
		x := &g.shapes[g.shapeAt[p]]
		if p+1 < len(g.shapeAt) {
			if y := &g.shapes[g.shapeAt[p+1]]; x.GPUMilli == y.GPUMilli && x.NumGPU == y.NumGPU {
				g.groupEnd[p] = g.groupEnd[p+1]
				continue
			}
		}
		g.groupEnd[p] = p + 1
	}
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
			now.add(g.pos[s])
		}
	}
	was := g.canHost[n]
	for _, s := range shapes {
		p := g.pos[s]
		switch {
		case now.has(p) && (was == nil || !was.has(p)):
			g.hosts[s]++
		case !now.has(p) && was != nil && was.has(p):
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

// shortFor marks the shapes that are short of hosts, and returns the
// position of pod's own shape (-1 when it has none) and whether any other
// is short. A change of the marks is a new version of them.
func (g *hostGuard) shortFor(c *Cluster, pod *model.Pod) (own int, any bool) {
	arrivals := g.arrivals(c)
	own = -1
	if s, ok := g.index[classKey{pod.CPUMilli, pod.GPUMilli, pod.NumGPU, pod.ModelSpec()}]; ok {
		own = g.pos[s]
	}
	if len(g.marks) != len(g.short) {
		g.marks = newShapeSet(len(g.shapes))
	}
	clear(g.marks)
	for s := range g.shapes {
		if float64(g.hosts[s]) > guardSlack*arrivals*g.demand[s] {
			continue
		}
		g.marks.add(g.pos[s])
		any = any || g.pos[s] != own
	}
	if !slices.Equal(g.marks, g.short) {
		copy(g.short, g.marks)
		g.version++
	}
	return own, any
}

// keep returns the feasible nodes on which pod, of class (the policy's
// class of pods alike), ends no short shape's host, or nil when no shape
// other than its own is short. gpus is the policy's GPU choice on a node.
// What it finds is kept per node and class while the node, the short
// shapes and the guard's estimate stay as they are.
func (g *hostGuard) keep(c *Cluster, pod *model.Pod, class int, feasible []int, gpus func(n int) []int) []int {
	g.refresh(c)
	own, any := g.shortFor(c, pod)
	if !any {
		return nil
	}
	g.kept = g.kept[:0]
	for _, n := range feasible {
		if !g.endsShortCached(c, n, pod, class, own, gpus) {
			g.kept = append(g.kept, n)
		}
	}
	return g.kept
}

// endsShortCached is endsShort, computed once per node state, class and
// version of the short shapes.
func (g *hostGuard) endsShortCached(c *Cluster, n int, pod *model.Pod, class, own int, gpus func(n int) []int) bool {
	if len(g.ends) != len(c.Nodes) {
		g.ends = make([][]endsEntry, len(c.Nodes))
	}
	row := g.ends[n]
	if class >= len(row) {
		row = append(row, make([]endsEntry, class+1-len(row))...)
		g.ends[n] = row
	}
	e := &row[class]
	if gen := c.Generation(n) + 1; e.gen != gen || e.version != g.version {
		*e = endsEntry{gen: gen, version: g.version, ends: g.endsShort(c, n, pod, own, gpus)}
	}
	return e.ends
}

// endsEntry is what endsShort found for a node and class: valid while
// the node's generation + 1 is gen and the guard's version is version.
type endsEntry struct {
	gen, version uint32
	ends         bool
}

// endsShort reports whether node n, taking pod, stops hosting a short
// shape other than pod's own (at position own) that it hosts now.
func (g *hostGuard) endsShort(c *Cluster, n int, pod *model.Pod, own int, gpus func(n int) []int) bool {
	hosts := g.canHost[n]
	if !hosts.meets(g.short) {
		return false
	}
	cpuAfter := c.CPULeft[n] - pod.CPUMilli
	g.after = append(g.after[:0], c.GPULeft[n]...)
	for _, i := range gpus(n) {
		g.after[i] -= pod.GPUMilli
	}
	g.call++
	if g.call == 0 { // wrapped: no stamp may look current
		clear(g.stamp)
		g.call = 1
	}
	// The first short shape hosted in a group needs the most CPU of the
	// group's, and all need the same GPUs: if it stays, they all do.
	for p := g.nextShort(hosts, 0); p >= 0; {
		if p == own {
			p = g.nextShort(hosts, p+1)
			continue
		}
		s := g.shapeAt[p]
		t := &g.shapes[s]
		if cpuAfter < t.CPUMilli || g.fittingAfter(g.milliOf[s]) < t.NumGPU {
			return true
		}
		p = g.nextShort(hosts, g.groupEnd[p])
	}
	return false
}

// nextShort is the first position at or after from of a short shape in
// hosts, or -1.
func (g *hostGuard) nextShort(hosts shapeSet, from int) int {
	for w := from / 64; w < len(hosts); w++ {
		word := hosts[w] & g.short[w]
		if w == from/64 {
			word &= ^uint64(0) << (from % 64)
		}
		if word != 0 {
			return w*64 + bits.TrailingZeros64(word)
		}
	}
	return -1
}

// fittingAfter is how many GPUs of g.after hold millis[i], counted once
// per endsShort call.
func (g *hostGuard) fittingAfter(i int) int {
	if g.stamp[i] != g.call {
		g.fitting[i], g.stamp[i] = countFitting(g.after, g.millis[i]), g.call
	}
	return g.fitting[i]
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
