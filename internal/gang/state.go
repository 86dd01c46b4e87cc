package gang

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/gpu"
)

// State is the allocation of one fleet: what is free on every node and GPU,
// which jobs run where, and an index over the topology tree that makes
// single-task decisions fast. It is not safe for concurrent use.
type State struct {
	fleet  *fleet.Fleet
	byName map[string]int // node name -> index; the fleet's names do not change
	// maxSlices is the most time-sliced shares a node's GPU offers;
	// maxShareMemMiB the most memory of a GPU that may be shared.
	maxSlices      int
	maxShareMemMiB int64
	// version counts the changes kept: placements, releases, resizes (not
	// health, nor what a what-if or a failed placement undoes).
	version uint64
	tree    *tree
	classes []class
	nodes   []nodeState
	index   index
	journal journal
	trial   trial // what Undo restores (trial.go)
	jobs    map[string]*Placement
	opt     Options
	quiet   bool     // TryPlace: no explanations
	counted bool     // Counted: adoptions teach the packer nothing
	shares  shareMix // running shared tasks by size
	packer  *packer  // the packing policy for single tasks
	// shareBestFit turns off fragmentation-aware sharing (plain best fit),
	// for comparison in tests.
	shareBestFit bool
	scratch      scratch
	img          images // the bytes of the job being placed's images per node and domain
	imagesGen    uint64 // bumped by ImagesChanged
	// asks caches the shapes chosen for jobs that ask by GPU memory, per
	// ask (memask.go); the fleet a State allocates does not change.
	asks map[string]memoryChoice
	// untaken lists the nodes tasks were just given back on, marked in
	// isUntaken, until they are reindexed (scratch).
	untaken   []int
	isUntaken []bool
}

// class is a kind of node as a request sees it: GPU model, MIG mode, and
// whether its GPUs are shared.
type class struct {
	model  *gpu.Model // nil for CPU-only nodes
	mig    fleet.MIGMode
	shared bool   // time-sliced or fractional: fractional requests allowed
	slices int    // time slices per GPU (0 or 1 on a fractional node: none)
	taints string // the node's taints, sorted, joined by ","
}

type nodeState struct {
	cpu, mem int64 // left
	gpus     []gpuState
	class    int
	sum      summary // the node's contribution to the index
}

type gpuState struct {
	whole  bool       // held whole by a task
	milli  int        // shared use, thousandths of the GPU
	layout gpu.Layout // MIG nodes only
}

// Options tune a State. The zero value takes the defaults.
type Options struct {
	// SpareLoan is the longest expected runtime of preemptible work that
	// may borrow hot spare nodes; default DefaultSpareLoan.
	SpareLoan time.Duration
	// Spread places single whole-GPU tasks on the node with the most free
	// GPUs in the least used domains, as a default Kubernetes scheduler
	// does (least allocated). It exists to be compared against.
	Spread bool
}

// DefaultSpareLoan is the default longest runtime of work lent a spare.
const DefaultSpareLoan = 2 * time.Hour

// New builds the state of an empty fleet with default options.
func New(f *fleet.Fleet) (*State, error) { return NewWithOptions(f, Options{}) }

// NewWithOptions builds the state of an empty fleet. The fleet is
// validated first and must change only through the state (SetHealth).
func NewWithOptions(f *fleet.Fleet, opt Options) (*State, error) {
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	if opt.SpareLoan == 0 {
		opt.SpareLoan = DefaultSpareLoan
	}
	s := &State{fleet: f, byName: make(map[string]int, len(f.Nodes)), tree: newTree(f), jobs: map[string]*Placement{}, opt: opt}
	for i := range f.Nodes {
		s.byName[f.Nodes[i].Name] = i
		s.maxSlices = max(s.maxSlices, f.Nodes[i].TimeSlices)
	}
	classOf := map[class]int{}
	s.nodes = make([]nodeState, len(f.Nodes))
	for i := range f.Nodes {
		c, err := classFor(&f.Nodes[i])
		if err != nil {
			return nil, err
		}
		id, ok := classOf[c]
		if !ok {
			id = len(s.classes)
			classOf[c] = id
			s.classes = append(s.classes, c)
		}
		if s.nodes[i], err = newNodeState(&f.Nodes[i], c, id); err != nil {
			return nil, err
		}
		if c.shared && c.model != nil {
			s.maxShareMemMiB = max(s.maxShareMemMiB, c.model.MemoryMiB)
		}
	}
	s.index = newIndex(s)
	s.packer = newPacker(f, s.classes, s.nodes)
	for n := range s.nodes {
		s.reindex(n)
	}
	s.scratch = newScratch(s)
	s.isUntaken = make([]bool, len(s.nodes))
	return s, nil
}

func classFor(n *fleet.Node) (class, error) {
	taints := slices.Clone(n.Taints)
	slices.Sort(taints)
	c := class{mig: n.MIG, shared: n.TimeSlices > 1 || n.Fractional, slices: n.TimeSlices, taints: strings.Join(taints, ",")}
	if n.GPUs > 0 {
		m, err := gpu.Lookup(n.GPUModel)
		if err != nil {
			return c, fmt.Errorf("node %s: %w", n.Name, err)
		}
		c.model = m
	}
	return c, nil
}

func newNodeState(n *fleet.Node, c class, id int) (nodeState, error) {
	ns := nodeState{cpu: n.CPUMilli, mem: n.MemoryMiB, class: id, gpus: make([]gpuState, n.GPUs)}
	if c.mig == fleet.MIGNone {
		return ns, nil
	}
	for g := range ns.gpus {
		l, err := gpu.NewLayout(c.model, n.MIGLayout...)
		if err != nil {
			return ns, fmt.Errorf("node %s: MIG layout: %w", n.Name, err)
		}
		ns.gpus[g].layout = l
	}
	return ns, nil
}

// Fleet returns the fleet the state allocates.
func (s *State) Fleet() *fleet.Fleet { return s.fleet }

// open reports whether node n takes ordinary new work: healthy and not a
// hot spare.
func (s *State) open(n int) bool {
	node := &s.fleet.Nodes[n]
	return node.Schedulable() && !node.Spare
}

// freeWhole reports whether GPU g of node n can be given whole: nothing
// runs on it, and it is not a static MIG GPU.
func (s *State) freeWhole(n, g int) bool {
	st := &s.nodes[n].gpus[g]
	if st.whole || st.milli > 0 {
		return false
	}
	switch s.classes[s.nodes[n].class].mig {
	case fleet.MIGStatic:
		return false
	case fleet.MIGDynamic:
		return st.layout.Idle()
	}
	return true
}

// FreeGPUs is the number of GPUs of node n that can be given whole.
func (s *State) FreeGPUs(n int) int {
	free := 0
	for g := range s.nodes[n].gpus {
		if s.freeWhole(n, g) {
			free++
		}
	}
	return free
}

// Job returns the placement of a running job, or nil.
func (s *State) Job(name string) *Placement { return s.jobs[name] }

// jobNames lists the placed jobs in name order.
func (s *State) jobNames() []string {
	names := make([]string, 0, len(s.jobs))
	for name := range s.jobs {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// Version changes whenever a placement, release or resize is kept, and
// only then: equal versions of one State mean the same work in the same
// places. Health changes (SetHealth) do not count; a caller that changes
// health knows it.
func (s *State) Version() uint64 { return s.version }
