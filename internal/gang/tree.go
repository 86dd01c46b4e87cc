package gang

import "github.com/corral-sched/corral/internal/fleet"

// tree is the fleet's topology as vertices over a node order in which every
// domain is a contiguous range. Vertex 0 is the root (the whole fleet);
// vertices of level l are listed in tree order in byLevel[l].
type tree struct {
	levels   int   // topology levels below the root, excluding the node
	order    []int // node indices in tree order
	pos      []int // node index -> position in order
	level    []int // vertex -> level, -1 for the root
	lo, hi   []int // vertex -> node range in order
	parent   []int
	children [][]int // vertex -> child vertices (empty at the last level)
	byLevel  [][]int // level -> vertices in tree order
	path     [][]int // node -> vertex at each level
}

func newTree(f *fleet.Fleet) *tree {
	t := &tree{levels: len(f.Levels), order: f.Sorted()}
	t.pos = make([]int, len(f.Nodes))
	t.path = make([][]int, len(f.Nodes))
	t.byLevel = make([][]int, t.levels)
	t.addVertex(-1, -1, 0)
	for p, n := range t.order {
		t.pos[n] = p
		t.path[n] = make([]int, t.levels)
		parent := 0
		for l := 0; l < t.levels; l++ {
			v := t.lastChild(parent)
			if v < 0 || f.Nodes[t.order[t.lo[v]]].Domains[l] != f.Nodes[n].Domains[l] {
				v = t.addVertex(parent, l, p)
			}
			t.hi[v] = p + 1
			t.path[n][l] = v
			parent = v
		}
		t.hi[0] = p + 1
	}
	return t
}

func (t *tree) addVertex(parent, level, lo int) int {
	v := len(t.level)
	t.level = append(t.level, level)
	t.lo = append(t.lo, lo)
	t.hi = append(t.hi, lo)
	t.parent = append(t.parent, parent)
	t.children = append(t.children, nil)
	if parent >= 0 {
		t.children[parent] = append(t.children[parent], v)
		t.byLevel[level] = append(t.byLevel[level], v)
	}
	return v
}

func (t *tree) lastChild(v int) int {
	c := t.children[v]
	if len(c) == 0 {
		return -1
	}
	return c[len(c)-1]
}

// nodes returns the node indices under v, in tree order.
func (t *tree) nodes(v int) []int { return t.order[t.lo[v]:t.hi[v]] }
