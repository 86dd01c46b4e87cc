package placement

import (
	"sort"
)

// Typical is one group of identical pods in a workload mix.
type Typical struct {
	CPUMilli int64
	GPUMilli int64 // per GPU
	NumGPU   int
	Models   []string
	Weight   float64 // share of the mix; weights of a Mix sum to 1
}

// Mix is the workload a fragmentation measure is taken against.
type Mix []Typical

// TypicalMix groups pods by (cpu, gpu milli, gpu count, allowed models),
// takes the most popular groups until they cover at least percent of the
// pods, and renormalises their popularity to sum to 1. This is the
// "typical pods" of the FGD paper; ties in popularity go to the larger
// request, as in the authors' artifact.
func TypicalMix(pods []Pod, percent int) Mix {
	groups := groupPods(pods)
	total := float64(len(pods))
	expected := float64(percent) * total / 100.0
	var mix Mix
	cum := 0.0
	for _, g := range groups {
		if cum >= expected {
			break
		}
		cum += g.Weight
		g.Weight /= total
		mix = append(mix, g)
	}
	if len(mix) < len(groups) {
		for i := range mix {
			mix[i].Weight /= cum / total
		}
	}
	return mix
}

// groupPods counts pods per typical shape, most popular first.
func groupPods(pods []Pod) Mix {
	type key struct {
		cpu, gpu int64
		num      int
		spec     string
	}
	index := map[key]int{}
	var groups Mix
	for _, p := range pods {
		k := key{p.CPUMilli, p.GPUMilli, p.NumGPU, p.ModelSpec()}
		i, ok := index[k]
		if !ok {
			i = len(groups)
			index[k] = i
			groups = append(groups, Typical{CPUMilli: k.cpu, GPUMilli: k.gpu, NumGPU: k.num, Models: p.Models})
		}
		groups[i].Weight++
	}
	sort.Slice(groups, func(i, j int) bool { return moreTypical(groups[i], groups[j]) })
	return groups
}

// moreTypical orders groups by popularity, then by larger request.
func moreTypical(a, b Typical) bool {
	if a.Weight != b.Weight {
		return a.Weight > b.Weight
	}
	if a.CPUMilli != b.CPUMilli {
		return a.CPUMilli > b.CPUMilli
	}
	if a.GPUMilli != b.GPUMilli {
		return a.GPUMilli > b.GPUMilli
	}
	if a.NumGPU != b.NumGPU {
		return a.NumGPU > b.NumGPU
	}
	return joinModels(a.Models) > joinModels(b.Models)
}

func joinModels(models []string) string { return Pod{Models: models}.ModelSpec() }

func (t Typical) allows(gpuModel string) bool {
	return Pod{Models: t.Models}.Allows(gpuModel)
}

// The fragment categories of the FGD artifact, in its order.
const (
	fragLackBoth = iota
	fragLackGPU
	fragSatisfied
	fragLackCPU
	fragCPUOnlyFits
	fragCPUOnlyLacksCPU
	fragNoAccess
	fragCategories
)

// Frag is the expected milli-GPU on a node that the mix cannot use:
// F = sum over typical pods m of weight(m) x frag(m), where frag(m) is the
// milli-GPU on GPUs too small for m when m fits on the node, and all of the
// node's idle milli-GPU when it does not (or m needs no GPU, or may not use
// the node's model). Sums run in the artifact's order, so the value matches
// it to the last bit.
func (mix Mix) Frag(gpuModel string, cpuLeft int64, gpuLeft []int64) float64 {
	var idle int64
	for _, l := range gpuLeft {
		idle += l
	}
	var d fragments
	for i := range mix {
		m := &mix[i]
		allowed := m.GPUMilli > 0 && m.allows(gpuModel)
		var fitting, below int64
		if allowed {
			fitting = int64(countFitting(gpuLeft, m.GPUMilli))
		}
		if fitting >= int64(m.NumGPU) && allowed {
			below = sumBelow(gpuLeft, m.GPUMilli)
		}
		d.add(m, allowed, cpuLeft, idle, fitting, below)
	}
	return d.sum()
}

// fragments sums a node's milli-GPU per fragment category of the FGD
// artifact, each shape of the mix weighted.
type fragments [fragCategories]float64

// add counts shape m on a node with idle milli-GPU left: allowed says
// whether it is a GPU shape of a model the node has; fitting is how many
// of the node's GPUs hold its milli, below the milli on GPUs that do not.
func (d *fragments) add(m *Typical, allowed bool, cpuLeft, idle, fitting, below int64) {
	cpuFits := cpuLeft >= m.CPUMilli
	switch {
	case m.GPUMilli == 0 && cpuFits:
		d[fragCPUOnlyFits] += m.Weight * float64(idle)
	case m.GPUMilli == 0:
		d[fragCPUOnlyLacksCPU] += m.Weight * float64(idle)
	case !allowed:
		d[fragNoAccess] += m.Weight * float64(idle)
	case fitting >= int64(m.NumGPU) && !cpuFits:
		d[fragLackCPU] += m.Weight * float64(idle)
	case fitting >= int64(m.NumGPU):
		d[fragLackGPU] += m.Weight * float64(below)
		d[fragSatisfied] += m.Weight * float64(idle-below)
	case cpuFits:
		d[fragLackGPU] += m.Weight * float64(idle)
	default:
		d[fragLackBoth] += m.Weight * float64(idle)
	}
}

// sum is the fragmentation: every category but the satisfied one, in the
// artifact's order.
func (d *fragments) sum() float64 {
	var f float64
	for i, v := range d {
		if i != fragSatisfied {
			f += v
		}
	}
	return f
}

// NodeFrag is the fragmentation of node n of c against the mix.
func (mix Mix) NodeFrag(c *Cluster, n int) float64 {
	return mix.Frag(c.Nodes[n].Model, c.CPULeft[n], c.GPULeft[n])
}

// sumBelow sums the milli left on GPUs with less than milli left.
func sumBelow(left []int64, milli int64) int64 {
	var s int64
	for _, l := range left {
		if l < milli {
			s += l
		}
	}
	return s
}

// FragCopies is fragmentation that counts what a node can absorb of each
// typical pod when it keeps arriving: frag(m) = idle - copies x request,
// where copies is how many copies of m fit at once given the GPUs (whole
// GPUs for whole-GPU pods, floor(left/u) per GPU for sharing pods) and the
// CPU left. Unlike Frag it sees that four free GPUs with CPU for one more
// pod are mostly stranded, and that a free GPU holds only two 470-milli pods.
func (mix Mix) FragCopies(gpuModel string, cpuLeft int64, gpuLeft []int64) float64 {
	var idle int64
	for _, l := range gpuLeft {
		idle += l
	}
	if idle == 0 {
		return 0
	}
	f := 0.0
	for _, m := range mix {
		f += m.Weight * float64(idle-m.absorb(gpuModel, cpuLeft, gpuLeft))
	}
	return f
}

// absorb is the milli-GPU that copies of m can take on a node state.
func (m Typical) absorb(gpuModel string, cpuLeft int64, gpuLeft []int64) int64 {
	var slots int64
	if m.isShare() {
		for _, l := range gpuLeft {
			slots += l / m.GPUMilli
		}
	}
	return m.absorbGiven(m.GPUMilli > 0 && m.allows(gpuModel), slots, int64(countFitting(gpuLeft, MilliPerGPU)), cpuLeft)
}

// isShare reports whether copies of m are parts of one GPU each.
func (m *Typical) isShare() bool {
	return m.GPUMilli > 0 && m.GPUMilli < MilliPerGPU && m.NumGPU == 1
}

// absorbGiven is absorb given whether m may use the node (a GPU shape of
// an allowed model), how many copies of a share of its milli the GPUs
// hold (shareSlots, for a share) and how many GPUs are whole and free.
func (m Typical) absorbGiven(allowed bool, shareSlots, whole, cpuLeft int64) int64 {
	if !allowed {
		return 0
	}
	slots := whole / int64(m.NumGPU)
	if m.isShare() {
		slots = shareSlots
	}
	if m.CPUMilli > 0 {
		slots = min(slots, cpuLeft/m.CPUMilli)
	}
	return slots * m.GPUMilli * int64(m.NumGPU)
}

// blender computes a x Frag + b x FragCopies of a node state for one
// mix, in one pass over it, the sums taken in Frag's and FragCopies' own
// order so that the value is theirs to the bit. What each shape needs of a
// node's GPUs (how many hold its milli, the milli on GPUs too small for
// it, how many copies of a share fit) is counted once per distinct milli
// of the mix instead of once per shape, and which shapes a GPU model
// allows is worked out once per model.
type blender struct {
	mix     Mix
	millis  []int64 // the distinct GPU milli of the mix's GPU shapes
	slotted []bool  // per milli: a share shape (one GPU, part of it) has it
	milliOf []int   // per shape: its index in millis, -1 for CPU only
	allowed map[string][]bool
	count   []int64 // scratch per milli: GPUs with at least the milli left
	below   []int64 // scratch per milli: milli left on GPUs with less
	slots   []int64 // scratch per milli: copies of a share of it that fit
}

func newBlender(mix Mix) *blender {
	b := &blender{mix: mix, milliOf: make([]int, len(mix)), allowed: map[string][]bool{}}
	at := map[int64]int{}
	for s, m := range mix {
		b.milliOf[s] = -1
		if m.GPUMilli == 0 {
			continue
		}
		i, ok := at[m.GPUMilli]
		if !ok {
			i = len(b.millis)
			at[m.GPUMilli] = i
			b.millis, b.slotted = append(b.millis, m.GPUMilli), append(b.slotted, false)
		}
		b.milliOf[s] = i
		b.slotted[i] = b.slotted[i] || m.isShare()
	}
	b.count, b.below, b.slots = make([]int64, len(b.millis)), make([]int64, len(b.millis)), make([]int64, len(b.millis))
	return b
}

// allowedOn says, per shape, whether it may use GPUs of gpuModel.
func (b *blender) allowedOn(gpuModel string) []bool {
	if a, ok := b.allowed[gpuModel]; ok {
		return a
	}
	a := make([]bool, len(b.mix))
	for s, m := range b.mix {
		a[s] = m.GPUMilli > 0 && m.allows(gpuModel)
	}
	b.allowed[gpuModel] = a
	return a
}

// blend is wFrag x Frag + wCopies x FragCopies of b.mix on the node state.
func (b *blender) blend(wFrag, wCopies float64, gpuModel string, cpuLeft int64, gpuLeft []int64) float64 {
	var idle, whole int64
	for _, l := range gpuLeft {
		idle += l
		if l >= MilliPerGPU {
			whole++
		}
	}
	for i, milli := range b.millis {
		var count, below, slots int64
		for _, l := range gpuLeft {
			if l >= milli {
				count++
			} else {
				below += l
			}
		}
		if b.slotted[i] {
			for _, l := range gpuLeft {
				slots += l / milli
			}
		}
		b.count[i], b.below[i], b.slots[i] = count, below, slots
	}
	allowed := b.allowedOn(gpuModel)
	var d fragments
	copies := 0.0
	for s := range b.mix {
		m := &b.mix[s]
		var fitting, below, slots int64
		if i := b.milliOf[s]; i >= 0 {
			fitting, below, slots = b.count[i], b.below[i], b.slots[i]
		}
		if idle > 0 {
			copies += m.Weight * float64(idle-m.absorbGiven(allowed[s], slots, whole, cpuLeft))
		}
		// fragments.add, written out: the call is not inlined, and this
		// loop is the deployed policy's hottest (TestBlenderIsFragAndFragCopies
		// holds the two equal).
		cpuFits := cpuLeft >= m.CPUMilli
		switch {
		case m.GPUMilli == 0 && cpuFits:
			d[fragCPUOnlyFits] += m.Weight * float64(idle)
		case m.GPUMilli == 0:
			d[fragCPUOnlyLacksCPU] += m.Weight * float64(idle)
		case !allowed[s]:
			d[fragNoAccess] += m.Weight * float64(idle)
		case fitting >= int64(m.NumGPU) && !cpuFits:
			d[fragLackCPU] += m.Weight * float64(idle)
		case fitting >= int64(m.NumGPU):
			d[fragLackGPU] += m.Weight * float64(below)
			d[fragSatisfied] += m.Weight * float64(idle-below)
		case cpuFits:
			d[fragLackGPU] += m.Weight * float64(idle)
		default:
			d[fragLackBoth] += m.Weight * float64(idle)
		}
	}
	return wFrag*d.sum() + wCopies*copies
}
