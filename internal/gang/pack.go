package gang

import (
	"slices"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/gpu"
	"github.com/corral-sched/corral/internal/job"
	"github.com/corral-sched/corral/internal/placement"
)

// packer chooses the node for a single task with corral's packing policy
// (placement.Corral): the same code that `corral bench fgd` measures, run
// on the state's own store of what is left (State.left). It learns the mix
// of task shapes online from the jobs it is asked to place, as a live
// scheduler must.
type packer struct {
	learner  *placement.Learner
	policy   *placement.Corral
	observed map[string]bool   // jobs observed and not placed since
	models   map[string]string // model names as given -> catalog names ("": unknown)
	feasible []int             // scratch: candidate nodes, in tree order
}

func newPacker() *packer {
	l := placement.NewLearner()
	return &packer{
		learner:  l,
		policy:   placement.NewCorralLearning(l),
		observed: map[string]bool{},
		models:   map[string]string{},
	}
}

// newStore is the store of what is left on an empty fleet, its nodes
// named as the packing policy knows them (by catalog GPU model).
func newStore(f *fleet.Fleet, classes []class, states []nodeState) *placement.Cluster {
	nodes := make([]placement.Node, len(f.Nodes))
	for i := range f.Nodes {
		m := ""
		if gm := classes[states[i].class].model; gm != nil {
			m = gm.Name
		}
		nodes[i] = f.Nodes[i].PlacementNode(m)
	}
	return placement.NewCluster(nodes)
}

// observe teaches the learner a job's tasks the first time the job is
// offered, and again after it has run (a requeued job arrives anew).
func (s *State) observe(j *job.Job) {
	if s.packer.observed[j.Name] || s.jobs[j.Name] != nil || s.counted {
		return
	}
	s.noteObserved(j.Name)
	s.packer.observed[j.Name] = true
	for _, g := range j.Groups {
		pod, ok := s.podOf(g.Task, -1)
		if !ok {
			continue
		}
		s.noteLearner()
		for range g.Count {
			s.packer.learner.Observe(&pod)
		}
	}
}

// Forget drops what the state remembers of a job that will not be offered
// again without running (cancelled or deleted while it waited).
func (s *State) Forget(name string) {
	s.noteObserved(name)
	delete(s.packer.observed, name)
}

// packs reports whether r's single task is placed by the packing policy:
// whole GPUs, a share or CPU only. MIG slices keep their own rule
// (partitioned GPUs first), whole-node tasks need no choice of GPUs, and a
// state set to spread keeps its spread.
func (s *State) packs(r *request) bool {
	if s.opt.Spread {
		return false
	}
	switch r.kind {
	case job.Whole:
		return !r.d.WholeNode
	case job.Shared, job.CPUOnly:
		return true
	}
	return false
}

// packSingle places one task of r: among the open nodes that can take it
// in the most used domains (the nodes of the whole fleet when none there
// can), the packing policy picks the node and, for a share, the GPU. false
// when no node can take it.
func (s *State) packSingle(r *request) ([]Task, bool) {
	feasible := s.packCandidates(r)
	if len(feasible) == 0 {
		return nil, false
	}
	pod, _ := s.podOf(r.d, s.nodes[feasible[0]].class)
	if r.kind == job.Shared { // shares measured in slices or memory differ by class
		feasible = slices.DeleteFunc(feasible, func(n int) bool { return r.milli[s.nodes[n].class] != int(pod.GPUMilli) })
	}
	ch := s.packer.policy.Place(s.left, &pod, feasible)
	ch.Node = s.withImages(ch.Node, feasible)
	share := -1
	if r.kind == job.Shared {
		share = ch.GPUs[0]
	}
	return s.assignOn(ch.Node, r, 1, share), true
}

// packCandidates lists, in tree order, the open nodes that can take one
// task of r under the frontier of the most used domains that have room,
// stopping above a level of one-node domains (the policy chooses among
// nodes); failing that, every such node of the fleet.
func (s *State) packCandidates(r *request) []int {
	out := s.packer.feasible[:0]
	for _, v := range s.frontier(r, s.roomFor(r), true) {
		out = s.appendFeasible(out, r, s.tree.nodes(v))
	}
	if len(out) == 0 {
		out = s.appendFeasible(out, r, s.tree.nodes(0))
	}
	s.packer.feasible = out
	return out
}

func (s *State) appendFeasible(out []int, r *request, nodes []int) []int {
	for _, n := range nodes {
		ns := &s.nodes[n]
		if !r.classOK[ns.class] || !ns.sum.open {
			continue
		}
		if s.roomLeft(n, r) { // open: healthy and not a spare
			out = append(out, n)
		}
	}
	return out
}

// roomFor says, from the index alone, whether a vertex may have a node
// with GPU room for one task of r (CPU and memory are checked per node).
func (s *State) roomFor(r *request) func(v int) bool {
	switch r.kind {
	case job.Whole:
		if r.d.GPUs == 1 {
			return func(v int) bool { return s.freeSum(r, v) > 0 } // any free GPU holds one
		}
		return func(v int) bool {
			for k := r.d.GPUs; k <= s.index.maxGPUs; k++ {
				if s.histSum(r, v, k) > 0 {
					return true
				}
			}
			return false
		}
	case job.Shared:
		return func(v int) bool {
			for c, ok := range r.classOK {
				if ok && int(s.index.partial[s.index.vc(v, c)]) >= r.milli[c] {
					return true
				}
			}
			return s.freeSum(r, v) > 0 // a free GPU takes a share
		}
	}
	return func(int) bool { return true }
}

// podOf is a task's demand as the packing policy sees a pod, with a share
// measured on node class c (the first class that may host it when c < 0).
// false for a MIG task, which the policy does not place.
func (s *State) podOf(d job.Demand, c int) (placement.Pod, bool) {
	pod := placement.Pod{CPUMilli: d.CPUMilli, MemoryMiB: d.MemoryMiB}
	switch d.Kind() {
	case job.MIG:
		return pod, false
	case job.Whole:
		pod.NumGPU, pod.GPUMilli = d.GPUs, placement.MilliPerGPU
	case job.Shared:
		pod.NumGPU, pod.GPUMilli = 1, int64(s.shareMilliOn(d, c))
	}
	for _, name := range d.Models {
		if m, ok := s.packer.model(name); ok && !slices.Contains(pod.Models, m) {
			pod.Models = append(pod.Models, m)
		}
	}
	slices.Sort(pod.Models)
	return pod, true
}

// shareMilliOn is a share's thousandths on class c, or on the first shared
// class when c < 0.
func (s *State) shareMilliOn(d job.Demand, c int) int {
	if c >= 0 {
		return shareMilli(s.classes[c], d)
	}
	if d.GPUMilli > 0 {
		return d.GPUMilli
	}
	for _, cl := range s.classes {
		if cl.shared && cl.model != nil {
			return shareMilli(cl, d)
		}
	}
	return placement.MilliPerGPU
}

// model is a GPU model's catalog name, so that aliases name one model
// for the policy; false for a model the catalog lacks. Names are looked
// up once.
func (p *packer) model(name string) (string, bool) {
	if m, ok := p.models[name]; ok {
		return m, m != ""
	}
	m, err := gpu.Lookup(name)
	if err != nil {
		p.models[name] = ""
		return "", false
	}
	p.models[name] = m.Name
	return m.Name, true
}
