package bound

import "github.com/corral-sched/corral/internal/placement"

// nodeState is what is left of one node as the heuristic fills it.
type nodeState struct {
	node     *placement.Node
	cpu, mem int64   // left
	free     int64   // GPU milli left on the node
	used     []int64 // GPU milli taken, per GPU
}

func newNodeState(n placement.Node) nodeState {
	return nodeState{node: &n, cpu: n.CPUMilli, mem: n.MemoryMiB, free: n.GPUMilli(), used: make([]int64, n.GPUs)}
}

// fit appends to buf the GPUs p would take on s: for a sharing pod the
// fullest GPU it fits on, otherwise the first NumGPU fully free GPUs. It
// reports false when p does not fit.
func (s *nodeState) fit(p *placement.Pod, buf []int) ([]int, bool) {
	if p.NumGPU > len(s.used) || p.TotalGPUMilli() > s.free || p.CPUMilli > s.cpu ||
		p.MemoryMiB > s.mem || !p.Allows(s.node.Model) {
		return buf, false
	}
	if p.IsShare() {
		g := -1
		for i, u := range s.used {
			if u+p.GPUMilli <= placement.MilliPerGPU && (g < 0 || u > s.used[g]) {
				g = i
			}
		}
		if g < 0 {
			return buf, false
		}
		return append(buf, g), true
	}
	for i, u := range s.used {
		if u == 0 {
			if buf = append(buf, i); len(buf) == p.NumGPU {
				return buf, true
			}
		}
	}
	return buf, false
}

// score rates placing p on s, lower is better: the GPU milli s has left
// afterwards, plus balance times the milli of it beyond the node's share of
// the CPU or memory it has left, which later pods may find stranded.
func (s *nodeState) score(p *placement.Pod, balance float64) float64 {
	left := float64(s.free - p.TotalGPUMilli())
	if balance == 0 {
		return left
	}
	share := min(fraction(s.cpu-p.CPUMilli, s.node.CPUMilli), fraction(s.mem-p.MemoryMiB, s.node.MemoryMiB))
	return left + balance*max(left-share*float64(s.node.GPUMilli()), 0)
}

// fraction is left/capacity, 1 for no capacity.
func fraction(left, capacity int64) float64 {
	if capacity <= 0 {
		return 1
	}
	return float64(left) / float64(capacity)
}

// take places p on s, on the given GPUs.
func (s *nodeState) take(p *placement.Pod, gpus []int) {
	s.cpu -= p.CPUMilli
	s.mem -= p.MemoryMiB
	s.free -= p.TotalGPUMilli()
	for _, g := range gpus {
		s.used[g] += p.GPUMilli
	}
}
