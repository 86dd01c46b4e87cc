package bound

import "github.com/corral-sched/corral/internal/placement"

// The relaxation. Let x[c][t] >= 0 be how many pods of class c go to nodes of
// type t, for the pairs where one pod of c fits on an empty node of t. Any
// feasible placement of a subset of the pods gives such an x (count the pods
// of each class on each type) that satisfies, with n_t nodes of type t, each
// with G_t GPUs:
//
//	sum_t x[c][t] <= count(c)                      (each pod placed at most once)
//	sum_c cpu(c) x[c][t] <= n_t CPU_t              (and the same for memory)
//	sum_c gpu(c) x[c][t] <= n_t G_t 1000           (GPU milli)
//	sum_c f(c) x[c][t] <= n_t G_t                  (for each cut f, see cuts.go)
//
// The cuts include, for j = 1..cutLevels,
//
//	sum_{c share, milli(c) > 1000/(j+1)} x[c][t]
//	  + j sum_{c whole} numGPU(c) x[c][t] <= j n_t G_t
//
// (divided by j): a GPU holds at most j sharing pods of more than
// 1000/(j+1) milli, and a GPU taken by a whole-GPU pod holds nothing else.
// The objective is sum gpu(c) x[c][t] with every pod's true GPU milli, so
// the LP optimum bounds every placement from above.
//
// Rows are scaled to right-hand side n_t (type rows) or count(c) (class
// rows), and the objective is in GPUs, to keep the numbers near one.

// cutLevels is the largest j of the sharing cuts.
const cutLevels = 3

// entry is a nonzero of a column of the constraint matrix.
type entry struct {
	row int
	val float64
}

// lp is: maximise wᵀx subject to A x <= b and x >= 0, with A >= 0 and b >= 0.
// A is held by columns; the first entry of every column is positive (its
// class row), which dualBound relies on.
type lp struct {
	b        []float64
	w        []float64
	cols     [][]entry
	colClass []int // the class of each column
	colType  []int // the node type of each column
}

// hint is the LP optimum's advice to the heuristic.
type hint struct {
	podType []int   // per pod, the node type the LP puts it on; -1 for none
	nodesOf [][]int // per node type, its nodes
}

// relax solves the relaxation. It returns the bound in GPU milli and the LP
// optimum as a hint for the heuristic (nil when no pod fits anywhere).
func relax(nodes []placement.Node, pods []placement.Pod) (upper float64, h *hint, err error) {
	types, nodesOf := groupNodes(nodes)
	var maxCPU, maxMem int64
	for _, t := range types {
		maxCPU, maxMem = max(maxCPU, t.cpu), max(maxMem, t.mem)
	}
	classes, classOf := groupPods(pods, maxCPU, maxMem)
	p := buildLP(types, classes, chooseCuts(classes))
	if len(p.cols) == 0 {
		return 0, nil, nil
	}
	x, y, err := solve(p)
	if err != nil {
		return 0, nil, err
	}
	h = newHint(p, x, classOf, len(classes), nodesOf)
	return placement.MilliPerGPU * dualBound(p, y), h, nil
}

// newHint gives, within each class, the first pods the types on which the
// LP optimum x places them: floor(x[c][t]) pods to type t.
func newHint(p *lp, x []float64, classOf []int, numClasses int, nodesOf [][]int) *hint {
	h := &hint{podType: make([]int, len(classOf)), nodesOf: nodesOf}
	podsOf := make([][]int, numClasses) // pods of each class not yet given a type
	for i, c := range classOf {
		h.podType[i] = -1
		if c >= 0 {
			podsOf[c] = append(podsOf[c], i)
		}
	}
	for j, v := range x {
		c := p.colClass[j]
		for n := int(v + 1e-6); n > 0 && len(podsOf[c]) > 0; n-- {
			h.podType[podsOf[c][0]] = p.colType[j]
			podsOf[c] = podsOf[c][1:]
		}
	}
	return h
}

// buildLP lays out the relaxation: per node type the CPU, memory and GPU rows
// and one row per cut, then one row per class that fits some type.
func buildLP(types []nodeType, classes []podClass, cuts []cut) *lp {
	rowsPerType := 3 + len(cuts)
	p := &lp{b: make([]float64, rowsPerType*len(types))}
	for t, nt := range types {
		for k := range rowsPerType {
			p.b[t*rowsPerType+k] = float64(nt.count)
		}
	}
	for i := range classes {
		c := &classes[i]
		row := len(p.b)
		for t := range types {
			if !c.fits(&types[t]) {
				continue
			}
			col := append([]entry{{row, 1}}, typeEntries(c, &types[t], cuts, t*rowsPerType)...)
			p.cols = append(p.cols, col)
			p.w = append(p.w, float64(c.total())/placement.MilliPerGPU)
			p.colClass = append(p.colClass, i)
			p.colType = append(p.colType, t)
		}
		if len(p.cols) > 0 && p.cols[len(p.cols)-1][0].row == row {
			p.b = append(p.b, float64(c.count))
		}
	}
	return p
}

// typeEntries returns the coefficients of one pod of class c in the scaled
// rows of type t, which start at base.
func typeEntries(c *podClass, t *nodeType, cuts []cut, base int) []entry {
	var e []entry
	add := func(k int, v float64) {
		if v > 0 {
			e = append(e, entry{base + k, v})
		}
	}
	if t.cpu > 0 {
		add(0, float64(c.cpu)/float64(t.cpu))
	}
	if t.mem > 0 {
		add(1, float64(c.mem)/float64(t.mem))
	}
	g := float64(t.gpus)
	add(2, float64(c.total())/(placement.MilliPerGPU*g))
	for k, f := range cuts {
		add(3+k, f(c)/g)
	}
	return e
}

// dualBound turns any y into a proven bound on the LP's optimum. It clips y
// at zero, then raises each column's class-row price until Aᵀy >= w holds for
// that column; the result is dual feasible, so by weak duality
// wᵀx <= yᵀAx <= bᵀy for every feasible x. The bound therefore holds however
// far from optimal y is; a near-optimal y makes it tight. A margin of 1e-12
// (relative and absolute) covers floating-point rounding.
func dualBound(p *lp, y []float64) float64 {
	y = append([]float64(nil), y...)
	for i, v := range y {
		if !(v > 0) { // negative or NaN
			y[i] = 0
		}
	}
	for j, col := range p.cols {
		s := p.w[j]
		for _, e := range col[1:] {
			s -= e.val * y[e.row]
		}
		if need := s / col[0].val; need > y[col[0].row] {
			y[col[0].row] = need
		}
	}
	var sum float64
	for i, v := range y {
		sum += p.b[i] * v
	}
	return sum*(1+1e-12) + 1e-12
}
