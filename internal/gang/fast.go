package gang

import (
	"github.com/corral-sched/corral/internal/job"
)

// fastResult says what the index found for a single task.
type fastResult int

const (
	fastFound   fastResult = iota // a node was chosen
	fastNone                      // no open node can host the task: proven by the index
	fastUnknown                   // the index cannot answer; run the general search
)

// fastNode picks the node for a single task from the index, touching one
// path of the tree instead of every node. For whole GPUs it picks the node
// the general search would: the fewest free GPUs that still hold the task,
// inside the most used zone, then block, then rack (and nodes without MIG
// before dynamic-MIG nodes, so that MIG work keeps its GPUs). For MIG and
// shared tasks it prefers GPUs already partitioned or shared, so that free
// GPUs stay whole.
func (s *State) fastNode(r *request) (int, fastResult) {
	switch r.kind {
	case job.Whole:
		if r.d.WholeNode {
			return 0, fastUnknown
		}
		return s.fastWholePreferPlain(r)
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
		if !has(0) {
			return s.fastWhole(r, 1)
		}
		return s.descend(r, has, nodeHas)
	case job.Shared:
		return s.fastShare(r)
	}
	return 0, fastUnknown
}

// fastWholePreferPlain looks among nodes without MIG first.
func (s *State) fastWholePreferPlain(r *request) (int, fastResult) {
	if r.plainOK != nil {
		plain := *r
		plain.classOK = r.plainOK
		if n, res := s.fastWhole(&plain, r.d.GPUs); res == fastFound {
			return n, res
		}
	}
	return s.fastWhole(r, r.d.GPUs)
}

// fastWhole finds the open node with the fewest free whole GPUs >= g (the
// most, when the state spreads).
func (s *State) fastWhole(r *request, g int) (int, fastResult) {
	ix := &s.index
	k := g
	for ; k <= ix.maxGPUs && s.histSum(r, 0, k) == 0; k++ {
	}
	if k > ix.maxGPUs {
		return 0, fastNone
	}
	if s.opt.Spread {
		for k = ix.maxGPUs; s.histSum(r, 0, k) == 0; k-- {
		}
	}
	hasK := func(v int) bool { return s.histSum(r, v, k) > 0 }
	nodeHasK := func(n int) bool { return s.nodes[n].sum.free == k }
	return s.descend(r, hasK, nodeHasK)
}

// descend returns the first candidate node, in tree order, under the
// frontier of has, or fastUnknown when it cannot take the task (the
// general search then decides).
func (s *State) descend(r *request, has func(v int) bool, nodeHas func(n int) bool) (int, fastResult) {
	for _, v := range s.frontier(r, has, false) {
		for _, n := range s.tree.nodes(v) {
			if r.classOK[s.nodes[n].class] && s.nodes[n].sum.open && nodeHas(n) {
				if c, _ := s.capacity(n, r); c > 0 {
					return n, fastFound
				}
				return 0, fastUnknown
			}
		}
	}
	return 0, fastUnknown
}

// frontier walks from the root towards the nodes, keeping at each level
// the children for which has holds that sit in the most used domains (ties
// kept together, in tree order): the order of the general search's key. It
// returns the innermost vertices reached, or nil when has(root) is false.
// With aboveNodes it stops above a level whose children with room each
// hold one node, leaving the choice among those nodes to the caller.
func (s *State) frontier(r *request, has func(v int) bool, aboveNodes bool) []int {
	if !has(0) {
		return nil
	}
	frontier := append(s.scratch.frontier[0][:0], 0)
	s.scratch.frontier[0] = frontier
	for flip := 1; len(s.tree.children[frontier[0]]) > 0 && !(aboveNodes && s.oneNodeEach(frontier, has)); flip ^= 1 {
		next := s.scratch.frontier[flip][:0]
		best := int32(0)
		for _, v := range frontier {
			for _, c := range s.tree.children[v] {
				if !has(c) {
					continue
				}
				f := s.freeSum(r, c)
				if s.opt.Spread {
					f = -f // the least used domain first
				}
				switch {
				case len(next) == 0 || f < best:
					next, best = append(next[:0], c), f
				case f == best:
					next = append(next, c)
				}
			}
		}
		s.scratch.frontier[flip] = next
		frontier = next
	}
	return frontier
}

// oneNodeEach reports whether every child with room of the frontier's
// domains holds one node: such a level says nothing a node does not.
func (s *State) oneNodeEach(frontier []int, has func(v int) bool) bool {
	for _, v := range frontier {
		for _, c := range s.tree.children[v] {
			if has(c) && len(s.tree.nodes(c)) > 1 {
				return false
			}
		}
	}
	return true
}

// fastShare picks, among the nodes of the most used domains that have a
// partly shared GPU with room for the task, the one whose best GPU grows
// fragmentation least (bestShareGPU); with no such GPU anywhere, a node
// with a free GPU, chosen like a whole-GPU task.
func (s *State) fastShare(r *request) (int, fastResult) {
	has := func(v int) bool {
		for c, ok := range r.classOK {
			if ok && int(s.index.partial[s.index.vc(v, c)]) >= r.milli[c] {
				return true
			}
		}
		return false
	}
	fr := s.frontier(r, has, false)
	if fr == nil {
		return s.fastWhole(r, 1)
	}
	best, bestKey := -1, shareKey{}
	for _, v := range fr {
		for _, n := range s.tree.nodes(v) {
			ns := &s.nodes[n]
			if !r.classOK[ns.class] || !ns.sum.open || ns.sum.partial < r.milli[ns.class] {
				continue
			}
			if c, _ := s.capacity(n, r); c == 0 {
				continue
			}
			if g, k := s.bestShareGPU(n, r.milli[ns.class]); g >= 0 && (best < 0 || k.less(bestKey)) {
				best, bestKey = n, k
			}
		}
	}
	if best < 0 {
		return 0, fastUnknown
	}
	return best, fastFound
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
