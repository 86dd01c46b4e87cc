package bound

import (
	"slices"
	"strings"

	"github.com/corral-sched/corral/internal/placement"
)

// The relaxation groups nodes into types and pods into classes. Grouping
// identical things loses nothing. When there are too many groups, CPU and
// memory are bucketed, always in the direction that enlarges the set of
// feasible placements, so the relaxation's optimum stays an upper bound:
//
//   - a node type has, per node, the largest CPU and memory of its members,
//     so every real node is no bigger than its type;
//   - a pod class asks the least CPU and memory of its members (at least the
//     bucket's floor, so no looser than rounding down), so every real pod
//     asks at least what its class asks.
//
// Any feasible placement of the real pods is then feasible for the grouped
// ones. GPU model, GPU count, GPU milli and allowed models are never bucketed:
// the objective counts each pod's true GPU milli and the cuts see its true
// share size.
const (
	maxNodeTypes = 48  // beyond it node CPU and memory are bucketed (rounded up)
	maxClasses   = 400 // beyond it pod CPU and memory are bucketed (rounded down)
	// Level 0 is exact; level k in 1..numLevels-2 cuts [0, largest node] into
	// 2^(13-k) buckets; the last level puts everything in one bucket.
	numLevels = 12
)

// nodeType is a group of GPU nodes treated as identical.
type nodeType struct {
	model    string
	gpus     int
	cpu, mem int64 // per node, the largest among the members
	count    int
}

// podClass is a group of GPU pods with the same GPU request and allowed
// models, treated as identical.
type podClass struct {
	numGPU   int
	gpuMilli int64 // per GPU, exact
	models   []string
	cpu, mem int64 // the least request among the members
	count    int
}

func (c *podClass) share() bool  { return c.numGPU == 1 && c.gpuMilli < placement.MilliPerGPU }
func (c *podClass) total() int64 { return int64(c.numGPU) * c.gpuMilli }

// fits reports whether one pod of class c fits on an empty node of type t.
func (c *podClass) fits(t *nodeType) bool {
	p := placement.Pod{Models: c.models}
	return p.Allows(t.model) && c.numGPU <= t.gpus && c.cpu <= t.cpu && c.mem <= t.mem
}

type nodeKey struct {
	model      string
	gpus       int
	cpuB, memB int64
}

type classKey struct {
	numGPU     int
	gpuMilli   int64
	spec       string
	cpuB, memB int64
}

// steps returns the CPU and memory bucket widths at a coarsening level.
func steps(maxCPU, maxMem int64, level int) (cpu, mem int64) {
	switch {
	case level <= 0:
		return 1, 1
	case level >= numLevels-1:
		return maxCPU + 1, maxMem + 1
	}
	shift := 13 - level
	return max(1, maxCPU>>shift), max(1, maxMem>>shift)
}

// coarsen returns the first level at which there are at most limit groups.
func coarsen[K comparable](limit int, key func(i, level int) K, n int) int {
	for level := 0; level < numLevels-1; level++ {
		seen := map[K]struct{}{}
		for i := 0; i < n && len(seen) <= limit; i++ {
			seen[key(i, level)] = struct{}{}
		}
		if len(seen) <= limit {
			return level
		}
	}
	return numLevels - 1
}

// groupNodes groups the nodes with GPUs into types. nodesOf lists the nodes
// (indices into nodes) of each type.
func groupNodes(nodes []placement.Node) (types []nodeType, nodesOf [][]int) {
	var gpuNodes []placement.Node
	var index []int // gpuNodes[i] is nodes[index[i]]
	var maxCPU, maxMem int64
	for i, n := range nodes {
		if n.GPUs > 0 {
			gpuNodes = append(gpuNodes, n)
			index = append(index, i)
			maxCPU, maxMem = max(maxCPU, n.CPUMilli), max(maxMem, n.MemoryMiB)
		}
	}
	key := func(i, level int) nodeKey {
		n := gpuNodes[i]
		cs, ms := steps(maxCPU, maxMem, level)
		return nodeKey{n.Model, n.GPUs, ceilDiv(n.CPUMilli, cs), ceilDiv(n.MemoryMiB, ms)}
	}
	level := coarsen(maxNodeTypes, key, len(gpuNodes))
	seen := map[nodeKey]int{}
	for i, n := range gpuNodes {
		k := key(i, level)
		j, ok := seen[k]
		if !ok {
			j = len(types)
			seen[k] = j
			types = append(types, nodeType{model: n.Model, gpus: n.GPUs})
			nodesOf = append(nodesOf, nil)
		}
		t := &types[j]
		t.cpu, t.mem = max(t.cpu, n.CPUMilli), max(t.mem, n.MemoryMiB)
		t.count++
		nodesOf[j] = append(nodesOf[j], index[i])
	}
	return types, nodesOf
}

// groupPods groups the GPU pods into classes; maxCPU and maxMem (the largest
// node) scale the buckets. classOf gives each pod's class, -1 for CPU-only
// pods.
func groupPods(pods []placement.Pod, maxCPU, maxMem int64) (classes []podClass, classOf []int) {
	var gpuPods []placement.Pod
	var specs []string
	var index []int // gpuPods[i] is pods[index[i]]
	for i, p := range pods {
		if p.IsGPU() {
			gpuPods = append(gpuPods, p)
			specs = append(specs, strings.Join(slices.Sorted(slices.Values(p.Models)), "|"))
			index = append(index, i)
		}
	}
	key := func(i, level int) classKey {
		p := gpuPods[i]
		cs, ms := steps(maxCPU, maxMem, level)
		return classKey{p.NumGPU, p.GPUMilli, specs[i], p.CPUMilli / cs, p.MemoryMiB / ms}
	}
	level := coarsen(maxClasses, key, len(gpuPods))
	seen := map[classKey]int{}
	classOf = make([]int, len(pods))
	for i := range classOf {
		classOf[i] = -1
	}
	for i, p := range gpuPods {
		k := key(i, level)
		j, ok := seen[k]
		if !ok {
			j = len(classes)
			seen[k] = j
			classes = append(classes, podClass{numGPU: p.NumGPU, gpuMilli: p.GPUMilli,
				models: p.Models, cpu: p.CPUMilli, mem: p.MemoryMiB})
		}
		c := &classes[j]
		c.cpu, c.mem = min(c.cpu, p.CPUMilli), min(c.mem, p.MemoryMiB)
		c.count++
		classOf[index[i]] = j
	}
	return classes, classOf
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }
