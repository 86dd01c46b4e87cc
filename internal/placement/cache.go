package placement

// scoreCache remembers a policy's score of each (node, pod class) until the
// node changes. Pods of one class (same CPU, GPU shape and allowed models;
// memory does not enter these scores) score the same on the same node state, so a cluster of N nodes is scored
// in O(changed nodes) per pod instead of O(N).
type scoreCache struct {
	podClasses
	entries [][]cached // per node, per class
}

type classKey struct {
	cpu, gpu int64
	num      int
	spec     string
}

type cached struct {
	gen   uint32 // node generation + 1; zero means empty
	score float64
	gpu   int
}

// podClasses numbers the classes of pods a cache keeps scores for.
type podClasses struct{ classes map[classKey]int }

// class interns pod's shape.
func (s *podClasses) class(pod *Pod) int {
	if s.classes == nil {
		s.classes = map[classKey]int{}
	}
	k := classKey{pod.CPUMilli, pod.GPUMilli, pod.NumGPU, pod.ModelSpec()}
	id, ok := s.classes[k]
	if !ok {
		id = len(s.classes)
		s.classes[k] = id
	}
	return id
}

// get returns the cached entry of node n for class, computing it with
// compute when the node changed since. compute may be nil when the caller
// knows the entry is fresh.
func (s *scoreCache) get(c *Cluster, n, class int, compute func() (float64, int)) cached {
	if s.entries == nil {
		s.entries = make([][]cached, len(c.Nodes))
	}
	row := s.entries[n]
	if class >= len(row) {
		row = append(row, make([]cached, class+1-len(row))...)
		s.entries[n] = row
	}
	gen := c.Generation(n) + 1
	if row[class].gen != gen {
		score, gpu := compute()
		row[class] = cached{gen: gen, score: score, gpu: gpu}
	}
	return row[class]
}

// gpus is the GPU choice of a cached policy on node n: the cached GPU for a
// sharing pod (the entry must be fresh), the lowest-index free GPUs otherwise.
func (s *scoreCache) gpus(c *Cluster, n, class int, pod *Pod) []int {
	if pod.IsShare() {
		return []int{s.get(c, n, class, nil).gpu}
	}
	return bestFitGPUs(c.GPULeft[n], pod)
}
