package gang

import (
	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/gpu"
)

// summary is what one node contributes to the index.
type summary struct {
	open    bool   // healthy and not a spare
	free    int    // GPUs that can be given whole
	all     int    // free, whether the node is open or not (FreeWholeGPUs)
	migOpen uint32 // bit p: some GPU already in use for MIG can host profile p
	partial int    // most thousandths free on a partly shared GPU, 0 if none
}

// index keeps, for every topology vertex and node class, aggregates of the
// open nodes below it: free whole GPUs, a histogram of nodes by free whole
// GPUs, how many nodes have an open slot of each MIG profile, and the most
// free room on a partly shared GPU. Updating one node touches only its
// path to the root.
type index struct {
	classes  int
	maxGPUs  int
	profiles int
	free     []int32 // [v][c]
	hist     []int32 // [v][c][k]
	mig      []int32 // [v][c][p]
	partial  []int32 // [v][c]
	freeAll  int     // summary.all over every node
}

func newIndex(s *State) index {
	ix := index{classes: len(s.classes)}
	for i := range s.fleet.Nodes {
		ix.maxGPUs = max(ix.maxGPUs, s.fleet.Nodes[i].GPUs)
	}
	for _, c := range s.classes {
		if c.model != nil {
			ix.profiles = max(ix.profiles, len(c.model.Profiles))
		}
	}
	v := len(s.tree.level)
	ix.free = make([]int32, v*ix.classes)
	ix.hist = make([]int32, v*ix.classes*(ix.maxGPUs+1))
	ix.mig = make([]int32, v*ix.classes*ix.profiles)
	ix.partial = make([]int32, v*ix.classes)
	return ix
}

func (ix *index) vc(v, c int) int { return v*ix.classes + c }

func (ix *index) histAt(v, c, k int) int32 { return ix.hist[ix.vc(v, c)*(ix.maxGPUs+1)+k] }

func (ix *index) migAt(v, c, p int) int32 { return ix.mig[ix.vc(v, c)*ix.profiles+p] }

// summarise computes node n's contribution to the index.
func (s *State) summarise(n int) summary {
	sum := summary{open: s.open(n), all: s.FreeGPUs(n)}
	if !sum.open {
		return sum
	}
	sum.free = sum.all
	ns := &s.nodes[n]
	c := &s.classes[ns.class]
	switch {
	case c.mig != fleet.MIGNone:
		for g, whole := range ns.whole {
			if !whole {
				sum.migOpen |= openProfiles(c.mig, &ns.layouts[g])
			}
		}
	case c.shared:
		for g, left := range s.left.GPULeft[n] {
			if !ns.whole[g] && left > 0 && left < 1000 {
				sum.partial = max(sum.partial, int(left))
			}
		}
	}
	return sum
}

// openProfiles is the set of profiles a GPU already used for MIG can host:
// an idle instance of the profile, or room beside busy instances. An idle
// dynamic GPU counts as a free whole GPU instead, and here only for the
// idle instances it already has.
func openProfiles(mig fleet.MIGMode, l *gpu.Layout) uint32 {
	dynamic := mig == fleet.MIGDynamic
	if dynamic && l.Idle() {
		return l.Hosts(false)
	}
	return l.Hosts(dynamic)
}

// reindex recomputes node n's summary and updates every vertex on its path.
func (s *State) reindex(n int) {
	old, now := s.nodes[n].sum, s.summarise(n)
	s.nodes[n].sum = now
	if old == now {
		return
	}
	ix := &s.index
	ix.freeAll += now.all - old.all
	c := s.nodes[n].class
	path := s.tree.path[n] // the root, vertex 0, is not on it
	ix.add(0, c, old, -1)
	ix.add(0, c, now, +1)
	for _, v := range path {
		ix.add(v, c, old, -1)
		ix.add(v, c, now, +1)
	}
	if old.partial != now.partial {
		for i := len(path) - 1; i >= 0; i-- {
			ix.partial[ix.vc(path[i], c)] = int32(s.partialBelow(path[i], c))
		}
		ix.partial[ix.vc(0, c)] = int32(s.partialBelow(0, c))
	}
}

func (ix *index) add(v, c int, sum summary, sign int32) {
	if !sum.open {
		return
	}
	vc := ix.vc(v, c)
	ix.free[vc] += sign * int32(sum.free)
	ix.hist[vc*(ix.maxGPUs+1)+sum.free] += sign
	for p := 0; p < ix.profiles; p++ {
		if sum.migOpen&(1<<p) != 0 {
			ix.mig[vc*ix.profiles+p] += sign
		}
	}
}

// partialBelow is the most free room on a partly shared GPU of class c
// under vertex v, from its children (or its nodes at the last level).
func (s *State) partialBelow(v, c int) int {
	best := 0
	if kids := s.tree.children[v]; len(kids) > 0 {
		for _, k := range kids {
			best = max(best, int(s.index.partial[s.index.vc(k, c)]))
		}
		return best
	}
	for _, n := range s.tree.nodes(v) {
		if s.nodes[n].class == c {
			best = max(best, s.nodes[n].sum.partial)
		}
	}
	return best
}

// FreeWholeGPUs is FreeGPUs summed over every node of the fleet, open or
// not, kept as nodes change instead of counted.
func (s *State) FreeWholeGPUs() int { return s.index.freeAll }
