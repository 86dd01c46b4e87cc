package fleet

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// NodeLevel is the name of the implicit innermost topology level: the node.
const NodeLevel = "node"

// NVLinkLevel is the level name a constraint uses for "one NVLink domain".
// It resolves to the fleet's rack-scale NVLink level when the fleet has one
// (a GB200 NVL72 rack) and to the node otherwise (an NVSwitch node).
const NVLinkLevel = "nvlink"

// Fleet is an inventory of nodes placed in a topology tree.
type Fleet struct {
	// Levels names the topology levels, outermost first, for example
	// ["zone", "block", "rack"]. Every node has one domain per level.
	Levels []string
	// NVLinkDomain names the level whose domains are rack-scale NVLink
	// domains (for example "rack" on an NVL72 fleet), or is empty.
	NVLinkDomain string
	Nodes        []Node
}

// Health is the state of a node.
type Health string

// Health states. Only healthy nodes receive new work.
const (
	Healthy   Health = "healthy"
	Unhealthy Health = "unhealthy" // failed or failing: drained
	Cordoned  Health = "cordoned"  // kept out of scheduling by an operator
)

// MIGMode says whether and how a node's GPUs are partitioned with MIG.
type MIGMode string

// MIG modes.
const (
	MIGNone    MIGMode = ""        // whole GPUs (and time-slicing, when enabled)
	MIGStatic  MIGMode = "static"  // layouts are fixed as declared
	MIGDynamic MIGMode = "dynamic" // corral may change the layout of idle slices
)

// Pool purposes and capacity types, kept as node labels.
const (
	PurposeLabel      = "corral.sh/purpose"
	CapacityTypeLabel = "corral.sh/capacity-type"
	CapacityOnDemand  = "on-demand"
	CapacitySpot      = "spot"
	CapacityReserved  = "reserved"
	// SpotTaint keeps work off spot nodes unless it tolerates interruption.
	SpotTaint = "spot"
)

// Purposes and CapacityTypes are the values pools may declare.
var (
	Purposes      = []string{"training", "inference", "development"}
	CapacityTypes = []string{CapacityOnDemand, CapacitySpot, CapacityReserved}
)

// CapacityType is the node's capacity type: its label, else spot when it
// carries the spot taint, else on-demand.
func (n *Node) CapacityType() string {
	if v := n.Labels[CapacityTypeLabel]; v != "" {
		return v
	}
	if slices.Contains(n.Taints, SpotTaint) {
		return CapacitySpot
	}
	return CapacityOnDemand
}

// Node is one machine.
type Node struct {
	Name   string
	Pool   string
	Labels map[string]string
	// Domains holds the node's domain at each of Fleet.Levels, outermost
	// first. Domain names need only be unique among siblings.
	Domains   []string
	CPUMilli  int64
	MemoryMiB int64
	GPUModel  string // catalog name, for example "H100-80GB"
	GPUs      int
	// Islands inside the node, as lists of GPU indices. A task asking for
	// several GPUs prefers one NVLink island, then one PCIe switch, then one
	// NUMA node. Empty means the node has no such structure.
	NVLink [][]int
	PCIe   [][]int
	NUMA   [][]int
	// MIG is the node's MIG mode; MIGLayout, when set, is the initial
	// layout of every GPU (profile names) in static or dynamic mode.
	MIG       MIGMode
	MIGLayout []string
	// TimeSlices offers each GPU as this many time-sliced shares; 0 or 1
	// means no time-slicing. Memory-fraction sharing works on any non-MIG
	// GPU whose node has TimeSlices > 1.
	TimeSlices int
	// Fractional lets tasks share each non-MIG GPU by fractions (GPUMilli
	// or GPUMemoryMiB) without time-sliced shares: GPUs a DRA driver
	// publishes for several allocations with consumable capacity.
	Fractional bool
	Health     Health
	// Spare marks a hot spare: kept free for replacing a failed node of a
	// running gang in the same domain, lent only to short preemptible work.
	Spare bool
	// Taints keep work off the node unless it tolerates every one of them
	// (for example "spot": only work that can be interrupted runs there).
	Taints []string
	// PricePerGPUHour is what one of the node's GPUs costs an hour, in
	// the fleet's currency; 0 when unknown. A job that asks by GPU
	// memory goes to the cheapest model among equally good ones.
	PricePerGPUHour float64
	// Images are the container images the node holds, by reference
	// (registry/repository:tag or @digest), with their sizes in bytes: a
	// job running them starts there without pulling (job.Job.Images).
	Images map[string]int64
}

// Path is the node's domain path joined with "/", for messages.
func (n *Node) Path() string { return strings.Join(n.Domains, "/") }

// Schedulable reports whether n may receive new work.
func (n *Node) Schedulable() bool { return n.Health == Healthy || n.Health == "" }

// LevelIndex returns the index of a level name in f.Levels, len(f.Levels)
// for the node level, or an error naming the levels that exist. The
// NVLink level resolves to NVLinkDomain or the node.
func (f *Fleet) LevelIndex(name string) (int, error) {
	if name == NVLinkLevel {
		if f.NVLinkDomain == "" {
			return len(f.Levels), nil
		}
		name = f.NVLinkDomain
	}
	if name == NodeLevel {
		return len(f.Levels), nil
	}
	for i, l := range f.Levels {
		if l == name {
			return i, nil
		}
	}
	return 0, fmt.Errorf("unknown topology level %q (this fleet has %s)", name, f.levelList())
}

func (f *Fleet) levelList() string {
	names := append(append([]string{}, f.Levels...), NodeLevel)
	if f.NVLinkDomain == "" {
		names = append(names, NVLinkLevel)
	}
	return strings.Join(names, ", ")
}

// GPUs is the number of GPUs in the fleet.
func (f *Fleet) GPUs() int {
	total := 0
	for i := range f.Nodes {
		total += f.Nodes[i].GPUs
	}
	return total
}

// GPUModels are the GPU models of f's nodes, by name.
func (f *Fleet) GPUModels() []string {
	var out []string
	for i := range f.Nodes {
		if n := &f.Nodes[i]; n.GPUs > 0 && !slices.Contains(out, n.GPUModel) {
			out = append(out, n.GPUModel)
		}
	}
	slices.Sort(out)
	return out
}

// Validate reports everything wrong with f, one problem per line.
func (f *Fleet) Validate() error {
	var errs []error
	if err := f.validateLevels(); err != nil {
		errs = append(errs, err)
	}
	seen := make(map[string]bool, len(f.Nodes))
	for i := range f.Nodes {
		n := &f.Nodes[i]
		if seen[n.Name] {
			errs = append(errs, fmt.Errorf("node %q: duplicate name", n.Name))
		}
		seen[n.Name] = true
		if err := n.validate(len(f.Levels)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (f *Fleet) validateLevels() error {
	seen := map[string]bool{NodeLevel: true, NVLinkLevel: true}
	for _, l := range f.Levels {
		if l == "" || seen[l] {
			return fmt.Errorf("topology levels %v: empty, duplicate or reserved name %q", f.Levels, l)
		}
		seen[l] = true
	}
	if f.NVLinkDomain != "" && !seen[f.NVLinkDomain] {
		return fmt.Errorf("nvlink domain level %q is not one of the levels %v", f.NVLinkDomain, f.Levels)
	}
	return nil
}

// Sorted returns the node indices grouped by domain path, each domain in the
// order it first appears among the nodes, nodes in their given order
// within a domain: the order in which every domain is a contiguous range.
func (f *Fleet) Sorted() []int {
	rank := make(map[string]int) // domain path prefix -> order of first appearance
	keys := make([][]int, len(f.Nodes))
	for i := range f.Nodes {
		prefix := ""
		for _, d := range f.Nodes[i].Domains {
			prefix += "\x00" + d
			r, ok := rank[prefix]
			if !ok {
				r = len(rank)
				rank[prefix] = r
			}
			keys[i] = append(keys[i], r)
		}
	}
	order := make([]int, len(f.Nodes))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		ka, kb := keys[order[a]], keys[order[b]]
		for l := range ka {
			if ka[l] != kb[l] {
				return ka[l] < kb[l]
			}
		}
		return false
	})
	return order
}
