package gang

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/corral-sched/corral/internal/fleet"
	"github.com/corral-sched/corral/internal/gpu"
	"github.com/corral-sched/corral/internal/placement"
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
	// left is what is left on every node and GPU: the packing policy's
	// cluster, which the state writes as it places and releases tasks. A
	// GPU held whole, or a MIG GPU that cannot be given whole, has none
	// left; a shared GPU has what its shares leave. So a GPU has all of
	// itself left exactly when it can be given whole (freeWhole).
	left *placement.Cluster
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

// nodeState is what only the allocation knows of a node: how its GPUs are
// held and its MIG layouts. What is left on it (CPU, memory, thousandths
// of each GPU) is in the packing policy's cluster, the one store that the
// gang search and the policy both read (State.left).
type nodeState struct {
	whole   []bool       // per GPU: held whole by a task
	layouts []gpu.Layout // per GPU of a MIG node (nil on others)
	class   int
	sum     summary // the node's contribution to the index
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
	s.left = newStore(f, s.classes, s.nodes)
	s.packer = newPacker()
	for n := range s.nodes {
		for g := range s.nodes[n].whole {
			s.syncMIG(n, g)
		}
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
	ns := nodeState{class: id, whole: make([]bool, n.GPUs)}
	if c.mig == fleet.MIGNone {
		return ns, nil
	}
	ns.layouts = make([]gpu.Layout, n.GPUs)
	for g := range ns.layouts {
		l, err := gpu.NewLayout(c.model, n.MIGLayout...)
		if err != nil {
			return ns, fmt.Errorf("node %s: MIG layout: %w", n.Name, err)
		}
		ns.layouts[g] = l
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
// runs on it, and it is not a static MIG GPU. The store says so: only such
// a GPU has all of itself left (see State.left, and syncMIG for MIG GPUs).
func (s *State) freeWhole(n, g int) bool { return s.left.GPULeft[n][g] == 1000 }

// syncMIG writes what is left of MIG GPU g of node n after its layout
// changed: all of it when the GPU can be given whole (not held whole, and
// an idle dynamic MIG GPU), else none.
func (s *State) syncMIG(n, g int) {
	mig := s.classes[s.nodes[n].class].mig
	if mig == fleet.MIGNone {
		return
	}
	left := int64(0)
	if ns := &s.nodes[n]; !ns.whole[g] && mig == fleet.MIGDynamic && ns.layouts[g].Idle() {
		left = 1000
	}
	if s.left.GPULeft[n][g] != left {
		s.left.SetGPULeft(n, g, left)
	}
}

// FreeGPUs is the number of GPUs of node n that can be given whole.
func (s *State) FreeGPUs(n int) int {
	free := 0
	for g := range s.nodes[n].whole {
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
