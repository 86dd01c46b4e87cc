package placement

// Spread is what a default Kubernetes scheduler does: least allocated. It
// prefers the node with the largest free share of CPU, memory and GPU after
// placing the pod (integer percentages, averaged over the resources the node
// has), which spreads pods over as many nodes as it can.
type Spread struct{}

func (Spread) Name() string { return "spread" }

func (Spread) Place(c *Cluster, pod *Pod, feasible []int) Choice {
	n := argmax(feasible, func(n int) int64 {
		node := c.Nodes[n]
		sum, dims := freePercent(c.CPULeft[n]-pod.CPUMilli, node.CPUMilli), int64(1)
		if node.MemoryMiB > 0 {
			sum += freePercent(c.MemLeft[n]-pod.MemoryMiB, node.MemoryMiB)
			dims++
		}
		if node.GPUs > 0 {
			sum += freePercent(c.IdleMilli(n)-pod.TotalGPUMilli(), node.GPUMilli())
			dims++
		}
		return sum / dims
	})
	return Choice{Node: n, GPUs: bestFitGPUs(c.GPULeft[n], pod)}
}

func freePercent(free, capacity int64) int64 {
	if capacity <= 0 {
		return 0
	}
	return free * maxScore / capacity
}
