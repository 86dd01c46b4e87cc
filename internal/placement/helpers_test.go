package placement

import (
	"fmt"
)

// gpuNode is a test node with cpu milli, GPUs of a model, and ample memory.
func gpuNode(name string, cpu int64, gpus int, gpuModel string) Node {
	return Node{Name: name, CPUMilli: cpu, MemoryMiB: 1 << 20, GPUs: gpus, Model: gpuModel}
}

// share is a sharing pod; whole a whole-GPU pod; cpuOnly a CPU-only pod.
func share(cpu, milli int64, models ...string) *Pod {
	return &Pod{Name: fmt.Sprintf("share-%d-%d", cpu, milli), CPUMilli: cpu, NumGPU: 1, GPUMilli: milli, Models: models}
}

func whole(cpu int64, gpus int, models ...string) *Pod {
	return &Pod{Name: fmt.Sprintf("whole-%d-%d", cpu, gpus), CPUMilli: cpu, NumGPU: gpus, GPUMilli: 1000, Models: models}
}

func cpuOnly(cpu int64) *Pod {
	return &Pod{Name: fmt.Sprintf("cpu-%d", cpu), CPUMilli: cpu}
}

// withLeft returns a cluster of nodes whose GPUs have the given milli left
// (one slice per node; nil keeps the node empty).
func withLeft(nodes []Node, left ...[]int64) *Cluster {
	c := NewCluster(nodes)
	for n, l := range left {
		if l != nil {
			c.Set(n, c.CPULeft[n], c.MemLeft[n], l)
		}
	}
	return c
}

func allNodes(c *Cluster) []int {
	all := make([]int, len(c.Nodes))
	for i := range all {
		all[i] = i
	}
	return all
}

// fitting is the nodes of c that pod fits on, in index order.
func fitting(c *Cluster, pod *Pod) []int {
	var out []int
	for n := range c.Nodes {
		if c.Fits(n, pod) {
			out = append(out, n)
		}
	}
	return out
}
