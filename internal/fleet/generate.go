package fleet

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/corral-sched/corral/internal/gpu"
	"github.com/corral-sched/corral/internal/placement"
)

// Synthetic describes a large uniform fleet for benchmarks: Nodes identical
// nodes in levels zone > block > rack, each with one NVLink island of all
// its GPUs, PCIe switches of two GPUs and two NUMA halves (the hgx preset
// of fleet files). Zero fields take the defaults noted on them.
type Synthetic struct {
	Nodes         int    // required, at least 1
	GPUsPerNode   int    // default 8
	GPUModel      string // catalog name or alias; default H100-80GB
	NodesPerRack  int    // default 16
	RacksPerBlock int    // default 32
	BlocksPerZone int    // default 4
	CPUMilli      int64  // default 192 cores
	MemoryMiB     int64  // default 2 TiB
	// MIG is the MIG mode of every node; the layout starts empty, so only
	// MIGNone and MIGDynamic build.
	MIG MIGMode
}

// Synthetic defaults.
const (
	DefaultGPUModel      = "H100-80GB"
	DefaultGPUsPerNode   = 8
	DefaultNodesPerRack  = 16
	DefaultRacksPerBlock = 32
	DefaultBlocksPerZone = 4
	DefaultCPUMilli      = 192_000
	DefaultMemoryMiB     = 2 << 20 // 2 TiB
)

// SyntheticPool is the pool of every node that Synthetic.Build makes; the
// nodes are named SyntheticPool-0000, SyntheticPool-0001, ...
const SyntheticPool = "synthetic"

// Build makes the fleet s describes. It is deterministic: the same s gives
// the same fleet. Nodes fill racks in order (synthetic-0000 to -0015 in
// rack-0 by default), racks fill blocks and blocks fill zones; the last
// domain at each level may be partly filled.
func (s Synthetic) Build() (*Fleet, error) {
	s = s.withDefaults()
	if err := s.check(); err != nil {
		return nil, fmt.Errorf("synthetic fleet: %w", err)
	}
	model, err := gpu.Lookup(s.GPUModel)
	if err != nil {
		return nil, fmt.Errorf("synthetic fleet: %w", err)
	}
	proto := Node{
		Pool:      SyntheticPool,
		CPUMilli:  s.CPUMilli,
		MemoryMiB: s.MemoryMiB,
		GPUModel:  model.Name,
		GPUs:      s.GPUsPerNode,
		MIG:       s.MIG,
	}
	proto.NVLink, proto.PCIe, proto.NUMA, _ = presetIslands(TopologyHGX, s.GPUsPerNode)
	spec := poolSpec{
		proto:  proto,
		nodes:  s.Nodes,
		fanout: []int{s.BlocksPerZone, s.RacksPerBlock, s.NodesPerRack},
		at:     make([]string, 3),
		spares: spareSpec{level: -1},
	}
	f := &Fleet{Levels: []string{"zone", "block", "rack"}}
	f.Nodes = expand(f.Levels, []poolSpec{spec})
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("synthetic fleet: %w", err)
	}
	return f, nil
}

func (s Synthetic) withDefaults() Synthetic {
	orDefault := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	orDefault(&s.GPUsPerNode, DefaultGPUsPerNode)
	orDefault(&s.NodesPerRack, DefaultNodesPerRack)
	orDefault(&s.RacksPerBlock, DefaultRacksPerBlock)
	orDefault(&s.BlocksPerZone, DefaultBlocksPerZone)
	if s.GPUModel == "" {
		s.GPUModel = DefaultGPUModel
	}
	if s.CPUMilli == 0 {
		s.CPUMilli = DefaultCPUMilli
	}
	if s.MemoryMiB == 0 {
		s.MemoryMiB = DefaultMemoryMiB
	}
	return s
}

func (s Synthetic) check() error {
	if s.Nodes < 1 {
		return fmt.Errorf("%d nodes, want at least 1", s.Nodes)
	}
	if s.GPUsPerNode < 0 || s.NodesPerRack < 0 || s.RacksPerBlock < 0 || s.BlocksPerZone < 0 ||
		s.CPUMilli < 0 || s.MemoryMiB < 0 {
		return errors.New("negative size")
	}
	return nil
}

// Node topology presets: how the GPUs inside a node are connected.
const (
	TopologyHGX  = "hgx"  // one NVLink island of all GPUs, PCIe switches of 2, NUMA halves
	TopologyPCIe = "pcie" // no NVLink, PCIe switches of 2, NUMA halves
	TopologyNone = "none" // no islands
)

// presetIslands returns the islands of a node with gpus GPUs under a
// topology preset.
func presetIslands(preset string, gpus int) (nvlink, pcie, numa [][]int, err error) {
	switch preset {
	case TopologyHGX:
		return chunks(gpus, gpus), chunks(gpus, 2), chunks(gpus, (gpus+1)/2), nil
	case TopologyPCIe:
		return nil, chunks(gpus, 2), chunks(gpus, (gpus+1)/2), nil
	case "", TopologyNone:
		return nil, nil, nil, nil
	}
	return nil, nil, nil, fmt.Errorf("unknown node topology %q (want %s, %s or %s)",
		preset, TopologyHGX, TopologyPCIe, TopologyNone)
}

// chunks splits GPUs 0..n-1 into consecutive islands of size (the last may
// be smaller).
func chunks(n, size int) [][]int {
	if n <= 0 || size <= 0 {
		return nil
	}
	var out [][]int
	for start := 0; start < n; start += size {
		island := make([]int, 0, size)
		for g := start; g < n && g < start+size; g++ {
			island = append(island, g)
		}
		out = append(out, island)
	}
	return out
}

// poolSpec is one pool, resolved and checked: the template of its nodes and
// how they spread over the fleet's topology levels.
type poolSpec struct {
	// proto holds everything its nodes share: Pool, Labels, capacity,
	// GPUs, islands, MIG and time-slicing.
	proto Node
	nodes int
	// fanout holds, per level (outermost first), how many domains of the
	// next level in (nodes, at the innermost level) one domain holds; 0
	// means one domain for the whole pool.
	fanout []int
	// at holds, per level, a fixed domain name, or "" for generated names.
	at     []string
	spares spareSpec
	health map[string]Health // node name -> health; absent means healthy
}

// spareSpec marks the last count nodes of every domain at level (an index
// into the levels; -1 for no spares) as hot spares.
type spareSpec struct{ level, count int }

// domainSizes returns, per level, the nodes in one full domain of the pool
// at that level, or 0 when the pool has a single domain there.
func (s *poolSpec) domainSizes() []int {
	sizes := make([]int, len(s.fanout))
	size := 1
	for l := len(s.fanout) - 1; l >= 0; l-- {
		if size == 0 || s.fanout[l] == 0 || size > s.nodes/s.fanout[l] {
			size = 0 // unbounded, or larger than the pool: one domain
		} else {
			size *= s.fanout[l]
		}
		sizes[l] = size
	}
	return sizes
}

// domainCount is the number of domains of the given size that n nodes fill.
func domainCount(n, size int) int {
	if size == 0 {
		return 1
	}
	return (n + size - 1) / size
}

// expand makes the nodes of the pools in order. Generated domain names are
// numbered per level across all pools, so no two pools share a generated
// domain.
func expand(levels []string, specs []poolSpec) []Node {
	total := 0
	for i := range specs {
		total += specs[i].nodes
	}
	nodes := make([]Node, 0, total)
	next := make([]int, len(levels)) // next generated domain number per level
	for i := range specs {
		nodes = specs[i].appendNodes(nodes, levels, next)
	}
	return nodes
}

// appendNodes appends the pool's nodes to nodes and advances next past the
// domain numbers it used.
func (s *poolSpec) appendNodes(nodes []Node, levels []string, next []int) []Node {
	sizes := s.domainSizes()
	names := s.domainNames(levels, sizes, next)
	domains := make([]string, s.nodes*len(levels)) // one backing array for all nodes
	for i := 0; i < s.nodes; i++ {
		n := s.proto
		n.Name = nodeName(s.proto.Pool, i)
		n.Labels = cloneLabels(s.proto.Labels)
		n.NVLink, n.PCIe, n.NUMA = cloneIslands(n.NVLink), cloneIslands(n.PCIe), cloneIslands(n.NUMA)
		n.MIGLayout = append([]string(nil), n.MIGLayout...)
		n.Domains = domains[i*len(levels) : (i+1)*len(levels) : (i+1)*len(levels)]
		for l := range levels {
			n.Domains[l] = names[l][indexIn(i, sizes[l])]
		}
		n.Spare = s.isSpare(i, sizes)
		if h, ok := s.health[n.Name]; ok {
			n.Health = h
		}
		nodes = append(nodes, n)
	}
	return nodes
}

// domainNames returns, per level, the names of the pool's domains there,
// and advances next past the generated ones.
func (s *poolSpec) domainNames(levels []string, sizes, next []int) [][]string {
	names := make([][]string, len(levels))
	for l, level := range levels {
		count := domainCount(s.nodes, sizes[l])
		names[l] = make([]string, count)
		for d := range names[l] {
			if s.at[l] != "" {
				names[l][d] = s.at[l]
			} else {
				names[l][d] = level + "-" + strconv.Itoa(next[l]+d)
			}
		}
		if s.at[l] == "" {
			next[l] += count
		}
	}
	return names
}

// isSpare reports whether node i of the pool is among the last
// s.spares.count nodes of its domain at the spare level.
func (s *poolSpec) isSpare(i int, sizes []int) bool {
	if s.spares.level < 0 || s.spares.count == 0 {
		return false
	}
	size := sizes[s.spares.level]
	if size == 0 {
		return i >= s.nodes-s.spares.count
	}
	start := i / size * size
	end := min(start+size, s.nodes)
	return i >= end-s.spares.count
}

// smallestDomain is the number of nodes in the pool's smallest domain at
// level l (the last one, which may be partly filled).
func (s *poolSpec) smallestDomain(l int) int {
	size := s.domainSizes()[l]
	if size == 0 {
		return s.nodes
	}
	if rest := s.nodes % size; rest != 0 {
		return rest
	}
	return size
}

// indexIn is the index of the domain of the given size that holds node i.
func indexIn(i, size int) int {
	if size == 0 {
		return 0
	}
	return i / size
}

// nodeName is "<pool>-<index>", the index zero-padded to four digits.
func nodeName(pool string, i int) string {
	digits := strconv.Itoa(i)
	for len(digits) < 4 {
		digits = "0" + digits
	}
	return pool + "-" + digits
}

func cloneLabels(labels map[string]string) map[string]string {
	if labels == nil {
		return nil
	}
	out := make(map[string]string, len(labels))
	for k, v := range labels {
		out[k] = v
	}
	return out
}

// cloneIslands copies islands into one backing array.
func cloneIslands(islands [][]int) [][]int {
	if islands == nil {
		return nil
	}
	total := 0
	for _, island := range islands {
		total += len(island)
	}
	flat := make([]int, 0, total)
	out := make([][]int, len(islands))
	for i, island := range islands {
		start := len(flat)
		flat = append(flat, island...)
		out[i] = flat[start:len(flat):len(flat)]
	}
	return out
}

// FromTrace is a node of a trace's node list (the openb form) as a fleet
// declares it, without topology: a GPU node shares its GPUs by fractions,
// as the trace's pods ask for thousandths of a GPU (Node.Fractional).
// The simulator and the packing benchmark's live path both convert so.
func FromTrace(n placement.Node) Node {
	return Node{Name: n.Name, CPUMilli: n.CPUMilli, MemoryMiB: n.MemoryMiB, GPUs: n.GPUs, GPUModel: n.Model, Fractional: n.GPUs > 0}
}

// PlacementNode is n as the packing policy sees it (placement's terms):
// its CPU, memory and GPU count, and gpuModel, the catalog name of its GPU
// model ("" for a CPU-only node). It is FromTrace's inverse for what the
// policy reads.
func (n Node) PlacementNode(gpuModel string) placement.Node {
	return placement.Node{Name: n.Name, CPUMilli: n.CPUMilli, MemoryMiB: n.MemoryMiB, GPUs: n.GPUs, Model: gpuModel}
}
