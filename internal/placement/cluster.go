package placement

import (
	"fmt"
)

// Cluster is the state of a fleet while pods are placed on it: the one
// store of what is left on every node and GPU. The policies read it; Bind
// writes it, and so does a caller that keeps its own allocation (gang.State
// writes every task it places or releases here, and saves and restores
// nodes around its what-ifs with SaveNode and RestoreNode).
type Cluster struct {
	Nodes   []Node
	CPULeft []int64
	MemLeft []int64
	GPULeft [][]int64 // milli-GPU left on each GPU of each node, 0..1000

	tags    [][]int // per node: pods by GPU tag (0 = sharing, k = k whole GPUs)
	used    int64   // milli-GPU allocated in the whole cluster
	cpuLeft int64   // milli-CPU left in the whole cluster
	changes changes
}

// NewCluster returns an empty cluster of the given nodes.
func NewCluster(nodes []Node) *Cluster {
	c := &Cluster{
		Nodes:   nodes,
		CPULeft: make([]int64, len(nodes)),
		MemLeft: make([]int64, len(nodes)),
		GPULeft: make([][]int64, len(nodes)),
		tags:    make([][]int, len(nodes)),
		changes: newChanges(len(nodes)),
	}
	for i, n := range nodes {
		c.CPULeft[i] = n.CPUMilli
		c.cpuLeft += n.CPUMilli
		c.MemLeft[i] = n.MemoryMiB
		c.GPULeft[i] = make([]int64, n.GPUs)
		for g := range c.GPULeft[i] {
			c.GPULeft[i][g] = MilliPerGPU
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
func (c *Cluster) Bind(pod Pod, ch Choice) {
	n := ch.Node
	if pod.CPUMilli > c.CPULeft[n] || pod.MemoryMiB > c.MemLeft[n] || len(ch.GPUs) != gpuCount(pod) {
		panic(fmt.Sprintf("placement: bind %s on %s does not fit", pod.Name, c.Nodes[n].Name))
	}
	c.AddHost(n, -pod.CPUMilli, -pod.MemoryMiB)
	for _, g := range ch.GPUs {
		if c.GPULeft[n][g] < pod.GPUMilli {
			panic(fmt.Sprintf("placement: GPU %d of %s has %d milli left, pod %s needs %d",
				g, c.Nodes[n].Name, c.GPULeft[n][g], pod.Name, pod.GPUMilli))
		}
		c.SetGPULeft(n, g, c.GPULeft[n][g]-pod.GPUMilli)
	}
	if t := tag(pod); t >= 0 {
		c.tags[n][t]++
	}
}

// AddHost adds cpu milli-CPU and mem MiB to what is left on node n
// (negative amounts take them).
func (c *Cluster) AddHost(n int, cpu, mem int64) {
	c.setHost(n, c.CPULeft[n]+cpu, c.MemLeft[n]+mem)
	c.changes.changed(n)
}

// SetGPULeft sets the milli-GPU left on GPU g of node n.
func (c *Cluster) SetGPULeft(n, g int, left int64) {
	c.setGPU(n, g, left)
	c.changes.changed(n)
}

// Set overwrites what is left on node n. The pods on the node are not
// known then, so the clustering baseline, which counts them, does not
// apply to a cluster written this way.
func (c *Cluster) Set(n int, cpuLeft, memLeft int64, gpuLeft []int64) {
	if len(gpuLeft) != len(c.GPULeft[n]) {
		panic(fmt.Sprintf("placement: set %s with %d GPUs, node has %d", c.Nodes[n].Name, len(gpuLeft), len(c.GPULeft[n])))
	}
	c.setNode(n, cpuLeft, memLeft, gpuLeft)
	c.changes.changed(n)
}

// NodeLeft is what was left on one node when SaveNode took it.
type NodeLeft struct {
	CPU, Mem int64
	GPU      []int64
	gen      uint32
}

// SaveNode returns what is left on node n, its GPUs copied into buf's
// memory when it is large enough.
func (c *Cluster) SaveNode(n int, buf []int64) NodeLeft {
	return NodeLeft{CPU: c.CPULeft[n], Mem: c.MemLeft[n], GPU: append(buf[:0], c.GPULeft[n]...), gen: c.changes.gen[n]}
}

// RestoreNode puts node n back as SaveNode took it, undoing every change
// since. The node's generation is restored too, so that the policies'
// scores of the node as it was stay valid and a node changed and restored
// between two placements is not scored again.
func (c *Cluster) RestoreNode(n int, saved NodeLeft) {
	c.setNode(n, saved.CPU, saved.Mem, saved.GPU)
	c.changes.restored(n, saved.gen)
}

// setNode, setHost and setGPU write what is left on node n and keep the
// cluster's totals; the caller says what became of the node's generation.
func (c *Cluster) setNode(n int, cpu, mem int64, gpus []int64) {
	c.setHost(n, cpu, mem)
	for g, l := range gpus {
		c.setGPU(n, g, l)
	}
}

func (c *Cluster) setHost(n int, cpu, mem int64) {
	c.cpuLeft += cpu - c.CPULeft[n]
	c.CPULeft[n], c.MemLeft[n] = cpu, mem
}

func (c *Cluster) setGPU(n, g int, left int64) {
	c.used -= left - c.GPULeft[n][g]
	c.GPULeft[n][g] = left
}

// ChangedSince lists the nodes changed since position pos of the change
// log (a node may appear more than once) and the position to ask from
// next time. ok is false when the log no longer reaches back to pos: the
// caller must then look at every node. Position 0 is before any change.
func (c *Cluster) ChangedSince(pos int) (nodes []int, next int, ok bool) {
	return c.changes.since(pos)
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
		if l == MilliPerGPU {
			free++
		}
	}
	return free
}

// Generation names what is left on node n: it changes whenever the node
// changes, and a value is never given to two different contents of a node.
func (c *Cluster) Generation(n int) uint32 { return c.changes.gen[n] }

// gpuCount is the number of GPUs a pod occupies.
func gpuCount(p Pod) int {
	if !p.IsGPU() {
		return 0
	}
	return p.NumGPU
}

// tag is the GPU clustering tag of a pod: 0 for sharing, k for k whole GPUs,
// -1 for CPU-only pods.
func tag(p Pod) int {
	switch {
	case !p.IsGPU():
		return -1
	case p.IsShare():
		return 0
	default:
		return p.NumGPU
	}
}
