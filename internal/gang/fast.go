package gang

import "github.com/corral-sched/corral/internal/job"

// fastNode picks the node for a single task from the index, touching one
// path of the tree instead of every node. For whole GPUs it picks the node
// the general search would: the fewest free GPUs that still hold the task,
// inside the most used zone, then block, then rack. For MIG and shared
// tasks it prefers GPUs already partitioned or shared, so that free GPUs
// stay whole. ok is false when the index cannot answer (for example the
// node it leads to lacks CPU); the caller then runs the general search.
func (s *State) fastNode(r *request) (int, bool) {
	switch r.kind {
	case job.Whole:
		return s.fastWhole(r, r.d.GPUs)
	case job.MIG:
		has := func(v int) bool {
			for c, ok := range r.classOK {
				if ok && s.index.migAt(v, c, r.profile[c]) > 0 {
					return true
				}
			}
			return false
		}
		nodeHas := func(n int) bool { return s.nodes[n].sum.migOpen&(1<<r.profile[s.nodes[n].class]) != 0 }
		if n, ok := s.descend(r, has, nodeHas); ok {
			return n, true
		}
		return s.fastWhole(r, 1)
	case job.Shared:
		has := func(v int) bool {
			for c, ok := range r.classOK {
				if ok && int(s.index.partial[s.index.vc(v, c)]) >= r.milli[c] {
					return true
				}
			}
			return false
		}
		nodeHas := func(n int) bool { return s.nodes[n].sum.partial >= r.milli[s.nodes[n].class] }
		if n, ok := s.descend(r, has, nodeHas); ok {
			return n, true
		}
		return s.fastWhole(r, 1)
	}
	return 0, false
}

// fastWhole finds the open node with the fewest free whole GPUs >= g.
func (s *State) fastWhole(r *request, g int) (int, bool) {
	ix := &s.index
	k := g
	for ; k <= ix.maxGPUs && s.histSum(r, 0, k) == 0; k++ {
	}
	if k > ix.maxGPUs {
		return 0, false
	}
	hasK := func(v int) bool { return s.histSum(r, v, k) > 0 }
	nodeHasK := func(n int) bool { return s.nodes[n].sum.free == k }
	return s.descend(r, hasK, nodeHasK)
}

// descend walks from the root towards the nodes, keeping at each level the
// children with a candidate that sit in the most used domains (ties kept
// together, in tree order), and returns the first candidate node in tree
// order under them that can take the task: the order of the general
// search's key.
func (s *State) descend(r *request, has func(v int) bool, nodeHas func(n int) bool) (int, bool) {
	if !has(0) {
		return 0, false
	}
	frontier := []int{0}
	for len(s.tree.children[frontier[0]]) > 0 {
		var next []int
		best := int32(0)
		for _, v := range frontier {
			for _, c := range s.tree.children[v] {
				if !has(c) {
					continue
				}
				switch f := s.freeSum(r, c); {
				case len(next) == 0 || f < best:
					next, best = append(next[:0], c), f
				case f == best:
					next = append(next, c)
				}
			}
		}
		frontier = next
	}
	for _, v := range frontier {
		for _, n := range s.tree.nodes(v) {
			if r.classOK[s.nodes[n].class] && s.nodes[n].sum.open && nodeHas(n) {
				if c, _ := s.capacity(n, r); c > 0 {
					return n, true
				}
				return 0, false
			}
		}
	}
	return 0, false
}

func (s *State) histSum(r *request, v, k int) int32 {
	var total int32
	for c, ok := range r.classOK {
		if ok {
			total += s.index.histAt(v, c, k)
		}
	}
	return total
}

func (s *State) freeSum(r *request, v int) int32 {
	var total int32
	for c, ok := range r.classOK {
		if ok {
			total += s.index.free[s.index.vc(v, c)]
		}
	}
	return total
}
