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
	changes changeLog
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
	c.touched(n)
}

// Set overwrites what is left on node n, for a caller that keeps the
// allocation in its own state and mirrors it here (gang.State does). The
// pods on the node are not known then, so the clustering baseline, which
// counts them, does not apply to a mirrored cluster.
func (c *Cluster) Set(n int, cpuLeft, memLeft int64, gpuLeft []int64) {
	if len(gpuLeft) != len(c.GPULeft[n]) {
		panic(fmt.Sprintf("placement: set %s with %d GPUs, node has %d", c.Nodes[n].Name, len(gpuLeft), len(c.GPULeft[n])))
	}
	c.cpuLeft += cpuLeft - c.CPULeft[n]
	c.CPULeft[n], c.MemLeft[n] = cpuLeft, memLeft
	for g, l := range gpuLeft {
		c.used -= l - c.GPULeft[n][g]
		c.GPULeft[n][g] = l
	}
	c.touched(n)
}

// touched records a change to node n.
func (c *Cluster) touched(n int) {
	c.gen[n]++
	c.changes.add(n, len(c.Nodes))
}

// ChangedSince lists the nodes changed since position pos of the change
// log (a node may appear more than once) and the position to ask from
// next time. ok is false when the log no longer reaches back to pos: the
// caller must then look at every node. Position 0 is before any change.
func (c *Cluster) ChangedSince(pos int) (nodes []int, next int, ok bool) {
	return c.changes.since(pos)
}

// changeLog lists changed nodes in order, forgetting its oldest entries
// once it outgrows the cluster, so that readers catch up in O(changes)
// instead of scanning every node.
type changeLog struct {
	base  int // position of nodes[0]
	nodes []int
}

func (l *changeLog) add(n, clusterSize int) {
	if len(l.nodes) >= 2*clusterSize+1024 {
		l.base += len(l.nodes)
		l.nodes = l.nodes[:0]
	}
	l.nodes = append(l.nodes, n)
}

func (l *changeLog) since(pos int) ([]int, int, bool) {
	end := l.base + len(l.nodes)
	if pos < l.base {
		return nil, end, false
	}
	return l.nodes[pos-l.base:], end, true
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
