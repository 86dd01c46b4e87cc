package gang

import (
	"fmt"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/job"
)

// Task is where one task of a job runs.
type Task struct {
	Group     int // index into the job's groups
	Node      int // index into the fleet's nodes
	NodeName  string
	GPUs      []int    // GPU indices on the node (whole, MIG or shared)
	MIG       *MIGSlot // set for a MIG task
	MIGOff    []int    // GPUs of a whole-GPU task whose idle MIG layout the decision removes
	Milli     int      // thousandths of GPUs[0] for a shared task
	CPUMilli  int64
	MemoryMiB int64
}

// MIGSlot is the MIG instance a task runs in, and the layout change that
// makes it, if any.
type MIGSlot struct {
	Profile string
	Start   int    // first memory slice of the instance
	Created bool   // the decision creates the instance
	Deleted []int  // starts of idle instances the decision destroys first
	Layout  string // the GPU's layout after the decision (* marks busy)
}

// assign places k tasks of r on node n and returns them. The caller has
// checked that they fit.
func (s *State) assign(n int, r *request, k int) []Task { return s.assignOn(n, r, k, -1) }

// assignOn is assign with shares put on GPU shareGPU when it is not -1
// (the packing policy's choice).
func (s *State) assignOn(n int, r *request, k, shareGPU int) []Task {
	s.touch(n)
	tasks := make([]Task, 0, k)
	for range k {
		t := Task{Group: r.group, Node: n, NodeName: s.fleet.Nodes[n].Name, CPUMilli: r.d.CPUMilli, MemoryMiB: r.d.MemoryMiB}
		switch r.kind {
		case job.Whole:
			g := r.d.GPUs
			if r.d.WholeNode {
				g = len(s.nodes[n].whole)
			}
			t.GPUs, t.MIGOff = s.takeWhole(n, g)
		case job.MIG:
			t.GPUs, t.MIG = s.takeMIG(n, r.profile[s.nodes[n].class])
		case job.Shared:
			t.Milli = r.milli[s.nodes[n].class]
			t.GPUs = []int{s.takeShare(n, t.Milli, shareGPU)}
		}
		s.left.AddHost(n, -t.CPUMilli, -t.MemoryMiB)
		tasks = append(tasks, t)
	}
	s.reindex(n)
	return tasks
}

// takeWhole marks g free GPUs of node n as held and returns them, chosen
// to stay inside the tightest NVLink island, then PCIe switch, then NUMA
// node that holds them all. It also returns the GPUs whose idle MIG layout
// it removes.
func (s *State) takeWhole(n, g int) (gpus, migOff []int) {
	var free []int
	for i := range s.nodes[n].whole {
		if s.freeWhole(n, i) {
			free = append(free, i)
		}
	}
	node := &s.fleet.Nodes[n]
	for _, islands := range [][][]int{node.NVLink, node.PCIe, node.NUMA} {
		free = narrow(free, islands, g)
	}
	picked := free[:g]
	for _, i := range picked {
		ns := &s.nodes[n]
		ns.whole[i] = true
		if ns.layouts != nil && len(ns.layouts[i].Instances) > 0 {
			ns.layouts[i].Instances = nil // a dynamic MIG GPU given whole loses its idle layout
			migOff = append(migOff, i)
		}
		s.left.SetGPULeft(n, i, 0)
	}
	return append([]int(nil), picked...), migOff
}

// narrow keeps the GPUs of the island with the fewest candidates that still
// holds g of them (the best fit), or all candidates when no island does.
func narrow(candidates []int, islands [][]int, g int) []int {
	var best []int
	for _, island := range islands {
		in := intersect(candidates, island)
		if len(in) >= g && (best == nil || len(in) < len(best)) {
			best = in
		}
	}
	if best == nil {
		return candidates
	}
	return best
}

func intersect(sorted []int, set []int) []int {
	var out []int
	for _, c := range sorted {
		for _, x := range set {
			if c == x {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// takeMIG hosts one instance of profile p on node n: an idle instance of p
// first, then a GPU already in MIG use, then the GPU with the least room,
// lowest index last.
func (s *State) takeMIG(n, p int) ([]int, *MIGSlot) {
	ns := &s.nodes[n]
	dynamic := s.classes[ns.class].mig == fleet.MIGDynamic
	best, bestKey := -1, [3]int{}
	for g := range ns.layouts {
		l := &ns.layouts[g]
		ch, ok := l.Plan(p, dynamic)
		if ns.whole[g] || !ok {
			continue
		}
		key := [3]int{b2i(ch.Use < 0), b2i(l.Idle()), l.Capacity(p, dynamic)}
		if best < 0 || less3(key, bestKey) {
			best, bestKey = g, key
		}
	}
	l := &ns.layouts[best]
	ch, _ := l.Plan(p, dynamic)
	if err := l.Apply(p, ch); err != nil {
		panic(fmt.Sprintf("gang: MIG plan on node %d GPU %d does not apply: %v", n, best, err))
	}
	s.syncMIG(n, best)
	slot := &MIGSlot{Profile: l.Model.Profiles[p].Name, Start: ch.Create, Created: ch.Create >= 0, Deleted: ch.Delete}
	if ch.Use >= 0 {
		slot.Start = l.Instances[ch.Use].Start
	}
	slot.Layout = l.String()
	return []int{best}, slot
}

// takeShare puts a share of m thousandths on GPU g of node n, or when g is
// -1 on the GPU where it grows fragmentation least against the running mix
// (bestShareGPU); a fresh GPU is chosen like a whole one, to keep islands
// intact.
func (s *State) takeShare(n, m, g int) int {
	if g >= 0 {
		s.left.SetGPULeft(n, g, s.left.GPULeft[n][g]-int64(m))
		return g
	}
	best, key := s.bestShareGPU(n, m)
	if !key.fresh {
		s.left.SetGPULeft(n, best, s.left.GPULeft[n][best]-int64(m))
		return best
	}
	gpus, _ := s.takeWhole(n, 1)
	best = gpus[0]
	s.nodes[n].whole[best] = false
	s.left.SetGPULeft(n, best, 1000-int64(m))
	return best
}

// untake returns one task's resources to its node.
func (s *State) untake(t Task) {
	s.give(t)
	s.reindex(t.Node)
}

// untakeTasks returns the tasks' resources to their nodes, last first,
// and brings each node's index entry up to date once.
func (s *State) untakeTasks(tasks []Task) {
	s.untaken = s.untaken[:0]
	s.giveTasks(tasks)
	s.reindexUntaken()
}

// giveTasks returns the tasks' resources, last first, listing their nodes
// in s.untaken for reindexUntaken.
func (s *State) giveTasks(tasks []Task) {
	for i := len(tasks) - 1; i >= 0; i-- {
		s.give(tasks[i])
		if n := tasks[i].Node; !s.isUntaken[n] {
			s.isUntaken[n] = true
			s.untaken = append(s.untaken, n)
		}
	}
}

func (s *State) reindexUntaken() {
	for _, n := range s.untaken {
		s.isUntaken[n] = false
		s.reindex(n)
	}
}

// give returns one task's resources to its node, leaving the index to the
// caller.
func (s *State) give(t Task) {
	s.touch(t.Node)
	ns := &s.nodes[t.Node]
	s.left.AddHost(t.Node, t.CPUMilli, t.MemoryMiB)
	for _, g := range t.GPUs {
		switch {
		case t.MIG != nil:
			if err := ns.layouts[g].Release(t.MIG.Start); err != nil {
				panic(fmt.Sprintf("gang: release MIG instance on node %d GPU %d: %v", t.Node, g, err))
			}
			s.syncMIG(t.Node, g)
		case t.Milli > 0:
			s.left.SetGPULeft(t.Node, g, s.left.GPULeft[t.Node][g]+int64(t.Milli))
		default:
			ns.whole[g] = false
			s.left.SetGPULeft(t.Node, g, 1000)
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func less3(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}
