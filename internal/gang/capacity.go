package gang

import (
	"sort"

	"github.com/corral-sched/corral/internal/job"
)

// scratch holds per-node and per-vertex capacities of the request being
// placed: cap (tasks that fit), fit (how tightly: free whole GPUs for
// whole-GPU tasks, tasks otherwise) and free (free whole GPUs of the
// classes the request may use, the measure of how used a domain is).
type scratch struct {
	capN, fitN, freeN []int
	capV, fitV, freeV []int
	frontier          [2][]int // frontier's two levels, reused (valid until its next call)
}

func newScratch(s *State) scratch {
	n, v := len(s.nodes), len(s.tree.level)
	return scratch{
		capN: make([]int, n), fitN: make([]int, n), freeN: make([]int, n),
		capV: make([]int, v), fitV: make([]int, v), freeV: make([]int, v),
	}
}

// limits are the request-wide caps on tasks per node and per domain.
type limits struct {
	need        int // no node or domain needs more than this
	spreadDepth int // depth whose domains hold at most spreadMax tasks, -2 for none
	spreadMax   int
	// gateFree, when not 0, is the fewest free GPUs a domain at depth
	// gateDepth must have to matter: the nodes of the others are filled
	// as holding nothing without a look (whole-GPU requests only).
	gateDepth, gateFree int
}

// fill computes capacities for r on every node and vertex under at,
// counting why nodes hold nothing when reasons is non-nil.
func (s *State) fill(r *request, at ref, lim limits, reasons map[filter]int) {
	if s.isNode(at) {
		s.fillNodes(r, []int{at.id}, lim, reasons)
		return
	}
	v, t := at.id, s.tree
	if reasons == nil && r.kind == job.Whole && !r.spares && !r.d.WholeNode && t.levels > 0 {
		a, b := t.within(v, t.levels-1)
		for _, u := range t.byLevel[t.levels-1][a:b] {
			if int(s.freeSum(r, u)) < r.d.GPUs || s.gatedOut(r, u, lim) {
				s.fillNone(r, t.nodes(u)) // the index says no node here holds one task, or none that matters
			} else {
				s.fillNodes(r, t.nodes(u), lim, nil)
			}
		}
	} else {
		s.fillNodes(r, t.nodes(v), lim, reasons)
	}
	for l := t.levels - 1; l >= t.depth(v)+1 && l >= 0; l-- {
		a, b := t.within(v, l)
		for _, u := range t.byLevel[l][a:b] {
			s.sumVertex(u, l, lim)
		}
	}
	if t.depth(v) < 0 {
		s.sumVertex(0, -1, lim)
	}
}

// gatedOut reports whether last-level vertex u lies in a domain at depth
// lim.gateDepth with fewer than lim.gateFree free GPUs r may use.
func (s *State) gatedOut(r *request, u int, lim limits) bool {
	if lim.gateFree == 0 {
		return false
	}
	t := s.tree
	if t.level[u] != lim.gateDepth {
		u = t.path[t.nodes(u)[0]][lim.gateDepth]
	}
	return int(s.freeSum(r, u)) < lim.gateFree
}

// fillNone records that none of nodes holds a task of r, keeping their
// free GPUs for the tie-breaks.
func (s *State) fillNone(r *request, nodes []int) {
	sc := &s.scratch
	for _, n := range nodes {
		free := 0
		if r.classOK[s.nodes[n].class] && s.nodes[n].sum.open {
			free = s.nodes[n].sum.free
		}
		sc.capN[n], sc.freeN[n], sc.fitN[n] = 0, free, free
	}
}

func (s *State) fillNodes(r *request, nodes []int, lim limits, reasons map[filter]int) {
	sc := &s.scratch
	for _, n := range nodes {
		c, why := s.capacity(n, r)
		c = min(c, lim.need)
		if lim.spreadDepth >= 0 { // a node lies inside one domain of the spread level
			c = min(c, lim.spreadMax)
		}
		if c == 0 && reasons != nil {
			reasons[s.filterOf(n, r, why)]++
		}
		sc.capN[n], sc.freeN[n] = c, 0
		if r.classOK[s.nodes[n].class] && (s.open(n) || (r.spares && s.fleet.Nodes[n].Schedulable())) {
			sc.freeN[n] = s.nodes[n].sum.free
			if r.spares && !s.open(n) {
				sc.freeN[n] = s.FreeGPUs(n)
			}
		}
		sc.fitN[n] = c
		if r.kind == job.Whole {
			sc.fitN[n] = sc.freeN[n]
		}
	}
}

// sumVertex adds up vertex u's children (or nodes) into its capacities.
func (s *State) sumVertex(u, l int, lim limits) {
	sc, t := &s.scratch, s.tree
	c, f, fr := 0, 0, 0
	if kids := t.children[u]; len(kids) > 0 {
		for _, k := range kids {
			c, f, fr = c+sc.capV[k], f+sc.fitV[k], fr+sc.freeV[k]
		}
	} else {
		for _, n := range t.nodes(u) {
			c, f, fr = c+sc.capN[n], f+sc.fitN[n], fr+sc.freeN[n]
		}
	}
	c = min(c, lim.need)
	if lim.spreadDepth >= 0 && l >= lim.spreadDepth {
		c = min(c, lim.spreadMax)
	}
	sc.capV[u], sc.fitV[u], sc.freeV[u] = c, f, fr
}

// depth is the level of vertex v, -1 for the root.
func (t *tree) depth(v int) int { return t.level[v] }

// within returns the range of byLevel[l] that lies under vertex v.
func (t *tree) within(v, l int) (int, int) {
	vs := t.byLevel[l]
	a := sort.Search(len(vs), func(i int) bool { return t.lo[vs[i]] >= t.lo[v] })
	b := sort.Search(len(vs), func(i int) bool { return t.lo[vs[i]] >= t.hi[v] })
	return a, b
}
