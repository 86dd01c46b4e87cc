package bound

import (
	"cmp"
	"slices"
	"sync"

	"github.com/corral-sched/corral/internal/placement"
)

// The offline heuristic: take the GPU pods in some order and put each on the
// node with the lowest score, where the score is the GPU milli the node has
// left after placing the pod (best fit), plus, in the balanced runs,
// strandWeight times the GPU milli likely stranded there: what the node has
// left beyond its share of the CPU or memory it has left. Ties go to the
// node with the least CPU left. Inside the node a sharing pod takes the
// fullest GPU it fits on, any other GPU pod fully free GPUs.
//
// The runs differ in order (larger GPU requests first, with different
// tie-breaks; model-restricted pods first; the LP optimum's pods first, each
// on its LP node type when it fits there) and balance; the best placement is
// kept. Every placement made is feasible, so its GPU milli is a lower bound
// on the optimum.

// strandWeight is the weight of stranded GPU milli in the balanced runs.
const strandWeight = 8

// assignment puts pod on node, on the listed GPUs.
type assignment struct {
	pod, node int
	gpus      []int
}

// packing is a feasible placement and the GPU milli it allocates.
type packing struct {
	assigned []assignment
	milli    int64
}

// strategy is one run of the heuristic.
type strategy struct {
	order   []int   // the GPU pods, in the order placed
	hint    *hint   // nil, or the node type to try first for each pod
	balance float64 // the weight of stranded GPU milli in the score
}

// pack runs the heuristic with each strategy (concurrently) and keeps the
// best placement. h, when not nil, is the LP optimum's advice.
func pack(nodes []placement.Node, pods []placement.Pod, h *hint) packing {
	strats := strategies(pods, h)
	results := make([]packing, len(strats))
	var wg sync.WaitGroup
	for i, st := range strats {
		wg.Go(func() { results[i] = packRun(nodes, pods, st) })
	}
	wg.Wait()
	var best packing
	for _, p := range results {
		if p.milli > best.milli {
			best = p
		}
	}
	return best
}

// strategies pairs each order with plain and balanced scoring.
func strategies(pods []placement.Pod, h *hint) []strategy {
	var out []strategy
	add := func(order []int, h *hint) {
		out = append(out, strategy{order, h, 0}, strategy{order, h, strandWeight})
	}
	var gpu []int
	for i, p := range pods {
		if p.IsGPU() {
			gpu = append(gpu, i)
		}
	}
	byGPU := func(a, b placement.Pod) int {
		return cmp.Or(cmp.Compare(b.TotalGPUMilli(), a.TotalGPUMilli()), cmp.Compare(b.GPUMilli, a.GPUMilli))
	}
	cpuDown := func(i, j int) int {
		a, b := pods[i], pods[j]
		return cmp.Or(byGPU(a, b), cmp.Compare(b.CPUMilli, a.CPUMilli), cmp.Compare(b.MemoryMiB, a.MemoryMiB))
	}
	memDown := func(i, j int) int {
		a, b := pods[i], pods[j]
		return cmp.Or(byGPU(a, b), cmp.Compare(b.MemoryMiB, a.MemoryMiB), cmp.Compare(b.CPUMilli, a.CPUMilli))
	}
	restricted := func(i, j int) int {
		return cmp.Or(first(len(pods[i].Models) > 0, len(pods[j].Models) > 0), cpuDown(i, j))
	}
	for _, key := range []func(i, j int) int{cpuDown, memDown, restricted} {
		add(sorted(gpu, key), nil)
	}
	if h != nil {
		add(sorted(gpu, func(i, j int) int {
			return cmp.Or(first(h.podType[i] >= 0, h.podType[j] >= 0), cpuDown(i, j))
		}), h)
	}
	return out
}

// sorted returns a sorted copy of s.
func sorted(s []int, key func(i, j int) int) []int {
	s = slices.Clone(s)
	slices.SortStableFunc(s, key)
	return s
}

// first orders true before false.
func first(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}

// podShape identifies pods that fit exactly where each other fits.
type podShape struct {
	cpu, mem, milli int64
	numGPU          int
	spec            string
}

// packRun places the pods by one strategy.
func packRun(nodes []placement.Node, pods []placement.Pod, st strategy) packing {
	states := make([]nodeState, len(nodes))
	for i, n := range nodes {
		states[i] = newNodeState(n)
	}
	var res packing
	// Nodes only fill up, so a shape that fits nowhere never fits later.
	failed := map[podShape]bool{}
	for _, i := range st.order {
		p := &pods[i]
		shape := podShape{p.CPUMilli, p.MemoryMiB, p.GPUMilli, p.NumGPU, p.ModelSpec()}
		if failed[shape] {
			continue
		}
		n, gpus := -1, []int(nil)
		if st.hint != nil && st.hint.podType[i] >= 0 {
			n, gpus = bestNode(states, p, st.hint.nodesOf[st.hint.podType[i]], st.balance)
		}
		if n < 0 {
			n, gpus = bestNode(states, p, nil, st.balance)
		}
		if n < 0 {
			failed[shape] = true
			continue
		}
		states[n].take(p, gpus)
		res.assigned = append(res.assigned, assignment{pod: i, node: n, gpus: gpus})
		res.milli += p.TotalGPUMilli()
	}
	return res
}

// bestNode returns, among the given nodes (nil: all), the one with the
// lowest score for p and the GPUs p takes there; -1 when p fits on none.
func bestNode(states []nodeState, p *placement.Pod, among []int, balance float64) (int, []int) {
	best := -1
	var bestScore float64
	var bestCPU int64
	var gpus, cand []int
	for k := range len(states) {
		n := k
		if among != nil {
			if k >= len(among) {
				break
			}
			n = among[k]
		}
		var ok bool
		if cand, ok = states[n].fit(p, cand[:0]); !ok {
			continue
		}
		score, cpuLeft := states[n].score(p, balance), states[n].cpu-p.CPUMilli
		if best < 0 || score < bestScore || (score == bestScore && cpuLeft < bestCPU) {
			best, bestScore, bestCPU = n, score, cpuLeft
			gpus = append(gpus[:0], cand...)
		}
	}
	return best, gpus
}
