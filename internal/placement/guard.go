package placement

import (
	"math/bits"
	"slices"
)

// guardSlack is how many hosts per copy expected before the cluster is full
// a pod shape must keep; with fewer, it is short of hosts. 1.0 and 2.0 were
// both worse on the openb traces (bench/fgd/RESULTS.md, section 6).
const guardSlack = 1.5

// guardCommon is the share of arrivals above which a shape is too common
// to guard: when nearly every pod can only use the node types it uses,
// hosts of it end because the cluster fills, not because other shapes
// take them, and keeping them only pushes pods onto the largest nodes,
// which rarer shapes need. On fleets of 16-64 nodes drawn from the openb
// trace, guarding such shapes left 0.3-1.6 points more of the GPUs
// unallocated than not guarding them; 0.8 keeps every gain the guard makes
// on the full trace fleet (bench/fgd/RESULTS.md, "Small fleets").
const guardCommon = 0.8

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
// A shape nearly every arrival competes with (guardCommon) is never short.
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
	marks      shapeSet // scratch of shortFor
	epoch      uint32   // bumped when shapes are not those of before with some added
	version    uint32   // bumped when short changes: short is shortAt[version]
	shortAt    []shapeSet
	since      map[uint32]shapeSet // per earlier version: the shapes short now and not then
	ends       [][]endsEntry       // per pod class, per node: what endsShort found
	kept       []int
	after      []int64
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
// adds shapes, after those it had: when the shapes are those of the last
// reset only the weights moved, and when they are those with others added
// the shapes' indices, and so what endsShort found, still hold.
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
	extends := g.index != nil && g.extendedBy(shapes)
	if extends && len(shapes) == len(g.shapes) {
		g.shapes = shapes
		g.sumDemand()
		return
	}
	if !extends {
		g.epoch++
	}
	g.shapes = shapes
	g.index = map[classKey]int{}
	for s, t := range shapes {
		g.index[classKey{t.CPUMilli, t.GPUMilli, t.NumGPU, joinModels(t.Models)}] = s
	}
	g.capacity = 0
	for _, n := range c.Nodes {
		g.capacity += int64(n.GPUs) * MilliPerGPU
	}
	g.nest(c)
	g.sumDemand()
	g.indexMillis()
	g.hosts = make([]int, len(g.shapes))
	g.canHost = make([]shapeSet, len(c.Nodes))
	g.gen = make([]uint32, len(c.Nodes))
	g.short = newShapeSet(len(g.shapes))
	g.shortChanged()
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

// extendedBy reports whether shapes are the guard's, at the same indices,
// perhaps with others after them.
func (g *hostGuard) extendedBy(shapes Mix) bool {
	if len(shapes) < len(g.shapes) {
		return false
	}
	for s, t := range shapes[:len(g.shapes)] {
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
func (t Typical) fitsEmpty(node Node) bool {
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

// shortFor marks the shapes that are short of hosts, and returns the
// index of pod's own shape (-1 when it has none) and whether any other
// is short.
func (g *hostGuard) shortFor(c *Cluster, pod *Pod) (own int, any bool) {
	arrivals := g.arrivals(c)
	own = -1
	if s, ok := g.index[classKey{pod.CPUMilli, pod.GPUMilli, pod.NumGPU, pod.ModelSpec()}]; ok {
		own = s
	}
	if len(g.marks) != len(g.short) {
		g.marks = newShapeSet(len(g.shapes))
	}
	clear(g.marks)
	for s := range g.shapes {
		if g.demand[s] > guardCommon || float64(g.hosts[s]) > guardSlack*arrivals*g.demand[s] {
			continue
		}
		g.marks.add(s)
		any = any || s != own
	}
	if !slices.Equal(g.marks, g.short) {
		copy(g.short, g.marks)
		g.shortChanged()
	}
	return own, any
}

// shortChanged starts a new version of the short shapes. The versions
// before are kept, so that what endsShort found under one of them is
// checked again for the shapes that became short since only; a history
// grown long starts over, with nothing found before still taken.
func (g *hostGuard) shortChanged() {
	if len(g.shortAt) >= maxShortVersions {
		g.shortAt = g.shortAt[:0]
		g.epoch++
	}
	g.version = uint32(len(g.shortAt))
	g.shortAt = append(g.shortAt, slices.Clone(g.short))
	g.since = map[uint32]shapeSet{}
}

// shortSince is the shapes short now that were not short at version v.
func (g *hostGuard) shortSince(v uint32) shapeSet {
	d, ok := g.since[v]
	if !ok {
		d = slices.Clone(g.short)
		then := g.shortAt[v]
		for i := range min(len(d), len(then)) {
			d[i] &^= then[i]
		}
		g.since[v] = d
	}
	return d
}

const maxShortVersions = 1 << 12

// keep returns the feasible nodes on which pod, of class (the policy's
// class of pods alike), ends no short shape's host, or nil when no shape
// other than its own is short. choice is the GPU a sharing pod takes on
// a node, as the policy chooses it. What it finds is kept per node state,
// class and choice: when the short shapes change, a node is looked at
// again for the shapes that became short since only.
func (g *hostGuard) keep(c *Cluster, pod *Pod, class int, feasible []int, choice func(n int) int) []int {
	g.refresh(c)
	own, any := g.shortFor(c, pod)
	if !any {
		return nil
	}
	g.kept = g.kept[:0]
	col, share := g.column(c, class), pod.IsShare()
	for _, n := range feasible {
		gpu := -1 // a whole-GPU pod's GPUs follow from the node's state
		if share {
			gpu = choice(n) // a sharing pod's from the mix too
		}
		if !g.endsShortAt(&col[n], c, n, pod, own, gpu) {
			g.kept = append(g.kept, n)
		}
	}
	return g.kept
}

// endsShortCached is endsShort, kept per node state, class and choice.
// gpu is the GPU a sharing pod takes there (-1 for another).
func (g *hostGuard) endsShortCached(c *Cluster, n int, pod *Pod, class, own, gpu int) bool {
	return g.endsShortAt(&g.column(c, class)[n], c, n, pod, own, gpu)
}

// column is what endsShort found for class, node by node.
func (g *hostGuard) column(c *Cluster, class int) []endsEntry {
	if class >= len(g.ends) {
		g.ends = append(g.ends, make([][]endsEntry, class+1-len(g.ends))...)
	}
	if len(g.ends[class]) != len(c.Nodes) {
		g.ends[class] = make([]endsEntry, len(c.Nodes))
	}
	return g.ends[class]
}

// endsShortAt is endsShort for node n, kept in e.
func (g *hostGuard) endsShortAt(e *endsEntry, c *Cluster, n int, pod *Pod, own, gpu int) bool {
	gen := c.Generation(n) + 1
	switch {
	case e.gen != gen || e.epoch != g.epoch || e.gpu != int32(gpu):
		*e = endsEntry{gen: gen, epoch: g.epoch, gpu: int32(gpu)}
		e.ends, e.reason = g.endsShort(c, n, pod, own, gpu, g.short)
	case e.version == g.version:
	case e.ends && g.short.has(int(e.reason)):
		// still short, still lost
	case e.ends:
		e.ends, e.reason = g.endsShort(c, n, pod, own, gpu, g.short)
	default:
		// no shape short then is lost: look at those short since
		e.ends, e.reason = g.endsShort(c, n, pod, own, gpu, g.shortSince(e.version))
	}
	e.version = g.version
	return e.ends
}

// endsEntry is what endsShort found for a node and class: valid while
// the node's generation + 1 is gen, the guard's shapes are those of epoch
// (with any added) and a sharing pod's GPU is gpu, for the short shapes
// of version; reason is the short shape lost when it ends one.
type endsEntry struct {
	gen, epoch, version uint32
	gpu, reason         int32
	ends                bool
}

// endsShort reports whether node n, taking pod (on GPU gpu if it is a
// sharing pod), stops hosting a shape of candidates other than pod's own
// (own) that it hosts now, and which.
func (g *hostGuard) endsShort(c *Cluster, n int, pod *Pod, own, gpu int, candidates shapeSet) (bool, int32) {
	hosts := g.canHost[n]
	if !hosts.meetsBut(candidates, own) {
		return false, -1
	}
	cpuAfter := c.CPULeft[n] - pod.CPUMilli
	g.after = append(g.after[:0], c.GPULeft[n]...)
	if gpu >= 0 {
		g.after[gpu] -= pod.GPUMilli
	} else {
		for _, i := range bestFitGPUs(c.GPULeft[n], pod) {
			g.after[i] -= pod.GPUMilli
		}
	}
	g.call++
	if g.call == 0 { // wrapped: no stamp may look current
		clear(g.stamp)
		g.call = 1
	}
	for w := range min(len(hosts), len(candidates)) {
		for word := hosts[w] & candidates[w]; word != 0; word &= word - 1 {
			s := w*64 + bits.TrailingZeros64(word)
			if s == own {
				continue
			}
			if t := &g.shapes[s]; cpuAfter < t.CPUMilli || g.fittingAfter(g.milliOf[s]) < t.NumGPU {
				return true, int32(s)
			}
		}
	}
	return false, -1
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

// meetsBut reports whether s and o share a member other than but (-1:
// none).
func (s shapeSet) meetsBut(o shapeSet, but int) bool {
	for i := range min(len(s), len(o)) {
		w := s[i] & o[i]
		if but >= 0 && but/64 == i {
			w &^= 1 << (but % 64)
		}
		if w != 0 {
			return true
		}
	}
	return false
}
