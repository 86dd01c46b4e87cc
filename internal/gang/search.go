package gang

import "sort"

// ref names a place in the tree: a vertex (depth < levels, -1 for the
// root) or a node (depth == levels).
type ref struct{ depth, id int }

func (s *State) isNode(r ref) bool { return r.depth == s.tree.levels }

func (s *State) capOf(r ref) int {
	if s.isNode(r) {
		return s.scratch.capN[r.id]
	}
	return s.scratch.capV[r.id]
}

// key orders candidates of one depth: the tightest fit first, then the one
// inside the most used domains, outermost level first, then the one
// holding more of the job's images, then tree order.
func (s *State) less(a, b ref) bool {
	sc := &s.scratch
	fa, fb := sc.fitV, sc.fitV
	if s.isNode(a) {
		fa, fb = sc.fitN, sc.fitN
	}
	if fa[a.id] != fb[b.id] {
		return fa[a.id] < fb[b.id]
	}
	pa, pb := s.anchor(a), s.anchor(b)
	for l := 0; l < a.depth && l < s.tree.levels; l++ {
		va, vb := s.tree.path[pa][l], s.tree.path[pb][l]
		if sc.freeV[va] != sc.freeV[vb] {
			return sc.freeV[va] < sc.freeV[vb]
		}
	}
	if s.img.on {
		if ia, ib := s.imageBytes(a), s.imageBytes(b); ia != ib {
			return ia > ib // the job's images are there: no pull
		}
	}
	return s.tree.pos[pa] < s.tree.pos[pb]
}

// anchor is the first node of a ref, whose path names its ancestors.
func (s *State) anchor(r ref) int {
	if s.isNode(r) {
		return r.id
	}
	return s.tree.order[s.tree.lo[r.id]]
}

// eachCandidate calls fn with every ref at depth d under vertex v, in tree
// order, without allocating.
func (s *State) eachCandidate(v, d int, fn func(ref)) {
	t := s.tree
	if d == t.levels {
		for _, n := range t.nodes(v) {
			fn(ref{d, n})
		}
		return
	}
	a, b := t.within(v, d)
	for _, u := range t.byLevel[d][a:b] {
		fn(ref{d, u})
	}
}

// candidates lists the refs at depth d under vertex v.
func (s *State) candidates(v, d int) []ref {
	t := s.tree
	if d == t.levels {
		nodes := t.nodes(v)
		out := make([]ref, len(nodes))
		for i, n := range nodes {
			out[i] = ref{d, n}
		}
		return out
	}
	a, b := t.within(v, d)
	out := make([]ref, 0, b-a)
	for _, u := range t.byLevel[d][a:b] {
		out = append(out, ref{d, u})
	}
	return out
}

// deepest finds, under vertex v, the innermost depth no shallower than
// minDepth at which one domain holds need tasks, and returns the best such
// domain. v itself counts when minDepth allows it.
func (s *State) deepest(v ref, need, minDepth int) (ref, bool) {
	if s.isNode(v) {
		return v, s.capOf(v) >= need
	}
	for d := s.tree.levels; d > v.depth && d >= minDepth; d-- {
		best, found := ref{}, false
		s.eachCandidate(v.id, d, func(c ref) {
			if s.capOf(c) >= need && (!found || s.less(c, best)) {
				best, found = c, true
			}
		})
		if found {
			return best, true
		}
	}
	if v.depth >= minDepth && s.capOf(v) >= need {
		return v, true
	}
	return ref{}, false
}

// children lists the refs one depth below vertex v.
func (s *State) children(v ref) []ref {
	if v.depth+1 == s.tree.levels {
		return s.candidates(v.id, s.tree.levels)
	}
	kids := s.tree.children[v.id]
	out := make([]ref, len(kids))
	for i, k := range kids {
		out[i] = ref{v.depth + 1, k}
	}
	return out
}

// share is a part of a gang given to one child domain.
type share struct {
	at    ref
	tasks int
}

// split spreads need tasks over the fewest children of v: while no single
// child holds the rest, the largest child; then the tightest child that
// holds the rest.
func (s *State) split(v ref, need int) []share {
	var kids []ref
	for _, c := range s.children(v) {
		if s.capOf(c) > 0 {
			kids = append(kids, c)
		}
	}
	sort.SliceStable(kids, func(i, j int) bool {
		ci, cj := s.capOf(kids[i]), s.capOf(kids[j])
		if ci != cj {
			return ci > cj
		}
		return s.less(kids[i], kids[j])
	})
	var out []share
	for len(kids) > 0 && need > 0 {
		if last, ok := s.tightest(kids, need); ok {
			return append(out, share{last, need})
		}
		c := s.capOf(kids[0])
		out = append(out, share{kids[0], c})
		need -= c
		kids = kids[1:]
	}
	return out
}

// tightest returns the kid with the least capacity that holds need tasks.
func (s *State) tightest(kids []ref, need int) (ref, bool) {
	best, found := ref{}, false
	for _, k := range kids {
		if s.capOf(k) < need {
			continue
		}
		if !found || s.capOf(k) < s.capOf(best) || (s.capOf(k) == s.capOf(best) && s.less(k, best)) {
			best, found = k, true
		}
	}
	return best, found
}
