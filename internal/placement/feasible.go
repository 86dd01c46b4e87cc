package placement

// Reason says why a node cannot take a pod.
type Reason string

// The reasons a node is filtered out, checked in this order.
const (
	Fits           Reason = ""
	ReasonCPU      Reason = "not enough CPU"
	ReasonMemory   Reason = "not enough memory"
	ReasonNoGPU    Reason = "node has no GPUs"
	ReasonModel    Reason = "GPU model not allowed by the pod"
	ReasonGPUs     Reason = "not enough fully free GPUs"
	ReasonGPUShare Reason = "no GPU with enough milli-GPU left"
)

// Check says whether node n can take pod, and if not, why.
//
// A sharing pod needs one GPU with at least GPUMilli left; a whole-GPU pod
// needs NumGPU fully free GPUs. CPU-only pods may land on GPU nodes.
func (c *Cluster) Check(n int, pod *Pod) Reason {
	switch {
	case pod.CPUMilli > c.CPULeft[n]:
		return ReasonCPU
	case pod.MemoryMiB > c.MemLeft[n]:
		return ReasonMemory
	case !pod.IsGPU():
		return Fits
	case c.Nodes[n].GPUs == 0:
		return ReasonNoGPU
	case !pod.Allows(c.Nodes[n].Model):
		return ReasonModel
	}
	if countFitting(c.GPULeft[n], pod.GPUMilli) < pod.NumGPU {
		if pod.IsShare() {
			return ReasonGPUShare
		}
		return ReasonGPUs
	}
	return Fits
}

// Fits reports whether node n can take pod.
func (c *Cluster) Fits(n int, pod *Pod) bool { return c.Check(n, pod) == Fits }

// countFitting counts GPUs with at least milli left.
func countFitting(left []int64, milli int64) int {
	k := 0
	for _, l := range left {
		if l >= milli {
			k++
		}
	}
	return k
}

// bestFitGPUs is the GPU choice of every ported policy but Random and FGD:
// a sharing pod takes the fitting GPU with the least milli left (lowest index
// on ties); a whole-GPU pod takes the lowest-index fully free GPUs.
func bestFitGPUs(left []int64, pod *Pod) []int {
	if !pod.IsGPU() {
		return nil
	}
	if pod.IsShare() {
		best := -1
		for g, l := range left {
			if l >= pod.GPUMilli && (best < 0 || l < left[best]) {
				best = g
			}
		}
		return []int{best}
	}
	return lowestFreeGPUs(left, pod.NumGPU)
}

// lowestFreeGPUs returns the k lowest-index fully free GPUs.
func lowestFreeGPUs(left []int64, k int) []int {
	gpus := make([]int, 0, k)
	for g, l := range left {
		if len(gpus) == k {
			break
		}
		if l == MilliPerGPU {
			gpus = append(gpus, g)
		}
	}
	return gpus
}
