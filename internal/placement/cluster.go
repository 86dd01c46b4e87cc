package placement

import (
	"fmt"

	"github.com/corral-sched/corral/internal/model"
)

// Cluster is the state of a fleet while pods are placed on it.
type Cluster struct {
	Nodes   []model.Node
	CPULeft []int64
	MemLeft []int64
	GPULeft [][]int64 // milli-GPU left on each GPU of each node, 0..1000

	gen     []uint32 // bumped on every change to a node; keys policy caches
	tags    [][]int  // per node: pods by GPU tag (0 = sharing, k = k whole GPUs)
	used    int64    // milli-GPU allocated in the whole cluster
	cpuLeft int64    // milli-CPU left in the whole cluster
}

// NewCluster returns an empty cluster of the given nodes.
func NewCluster(nodes []model.Node) *Cluster {
	c := &Cluster{
		Nodes:   nodes,
		CPULeft: make([]int64, len(nodes)),
		MemLeft: make([]int64, len(nodes)),
		GPULeft: make([][]int64, len(nodes)),
		gen:     make([]uint32, len(nodes)),
		tags:    make([][]int, len(nodes)),
	}
	for i, n := range nodes {
		c.CPULeft[i] = n.CPUMilli
		c.cpuLeft += n.CPUMilli
		c.MemLeft[i] = n.MemoryMiB
		c.GPULeft[i] = make([]int64, n.GPUs)
		for g := range c.GPULeft[i] {
			c.GPULeft[i][g] = model.MilliPerGPU
		}
		c.tags[i] = make([]int, n.GPUs+1)
	}
	return c
}

// Choice is where a pod goes: a node index and the GPUs it takes there.
type Choice struct {
	Node int
	GPUs []int
}

// Bind applies a choice. It panics if the choice does not fit: policies must
// only return feasible choices.
func (c *Cluster) Bind(pod model.Pod, ch Choice) {
	n := ch.Node
	if pod.CPUMilli > c.CPULeft[n] || pod.MemoryMiB > c.MemLeft[n] || len(ch.GPUs) != gpuCount(pod) {
		panic(fmt.Sprintf("placement: bind %s on %s does not fit", pod.Name, c.Nodes[n].Name))
	}
	c.CPULeft[n] -= pod.CPUMilli
	c.cpuLeft -= pod.CPUMilli
	c.MemLeft[n] -= pod.MemoryMiB
	for _, g := range ch.GPUs {
		if c.GPULeft[n][g] < pod.GPUMilli {
			panic(fmt.Sprintf("placement: GPU %d of %s has %d milli left, pod %s needs %d",
				g, c.Nodes[n].Name, c.GPULeft[n][g], pod.Name, pod.GPUMilli))
		}
		c.GPULeft[n][g] -= pod.GPUMilli
		c.used += pod.GPUMilli
	}
	if t := tag(pod); t >= 0 {
		c.tags[n][t]++
	}
	c.gen[n]++
}

// UsedGPUMilli is the milli-GPU allocated across the cluster.
func (c *Cluster) UsedGPUMilli() int64 { return c.used }

// CPULeftMilli is the milli-CPU left across the cluster.
func (c *Cluster) CPULeftMilli() int64 { return c.cpuLeft }

// IdleMilli is the milli-GPU left on node n.
func (c *Cluster) IdleMilli(n int) int64 {
	var idle int64
	for _, l := range c.GPULeft[n] {
		idle += l
	}
	return idle
}

// FreeGPUs is the number of fully free GPUs on node n.
func (c *Cluster) FreeGPUs(n int) int {
	free := 0
	for _, l := range c.GPULeft[n] {
		if l == model.MilliPerGPU {
			free++
		}
	}
	return free
}

// Generation changes whenever node n changes.
func (c *Cluster) Generation(n int) uint32 { return c.gen[n] }

// gpuCount is the number of GPUs a pod occupies.
func gpuCount(p model.Pod) int {
	if !p.IsGPU() {
		return 0
	}
	return p.NumGPU
}

// tag is the GPU clustering tag of a pod: 0 for sharing, k for k whole GPUs,
// -1 for CPU-only pods.
func tag(p model.Pod) int {
	switch {
	case !p.IsGPU():
		return -1
	case p.IsShare():
		return 0
	default:
		return p.NumGPU
	}
}
