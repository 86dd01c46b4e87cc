package bound

import (
	"fmt"
	"math/rand"

	"github.com/corral-sched/corral/internal/placement"
)

func gpuNode(gpus int, cpu, mem int64, gpuModel string) placement.Node {
	return placement.Node{CPUMilli: cpu, MemoryMiB: mem, GPUs: gpus, Model: gpuModel}
}

func gpuPod(cpu, mem int64, numGPU int, milli int64, models ...string) placement.Pod {
	return placement.Pod{CPUMilli: cpu, MemoryMiB: mem, NumGPU: numGPU, GPUMilli: milli, Models: models}
}

func repeat(n int, p placement.Pod) []placement.Pod {
	out := make([]placement.Pod, n)
	for i := range out {
		out[i] = p
	}
	return out
}

// named gives nodes and pods the unique names Validate wants.
func named(nodes []placement.Node, pods []placement.Pod) ([]placement.Node, []placement.Pod) {
	nodes, pods = append([]placement.Node(nil), nodes...), append([]placement.Pod(nil), pods...)
	for i := range nodes {
		nodes[i].Name = fmt.Sprintf("node-%d", i)
	}
	for i := range pods {
		pods[i].Name = fmt.Sprintf("pod-%d", i)
	}
	return nodes, pods
}

var testModels = []string{"A", "B"}

// randInstance draws a small random cluster and pod set.
func randInstance(rng *rand.Rand, maxNodes, maxPods int) ([]placement.Node, []placement.Pod) {
	nodes := make([]placement.Node, 1+rng.Intn(maxNodes))
	for i := range nodes {
		nodes[i] = gpuNode([]int{1, 2, 4}[rng.Intn(3)], int64(2000+2000*rng.Intn(6)),
			int64(4096*(1+rng.Intn(4))), testModels[rng.Intn(2)])
	}
	pods := make([]placement.Pod, rng.Intn(maxPods+1))
	for i := range pods {
		cpu, mem := int64(500*rng.Intn(13)), int64(1024*rng.Intn(9))
		var models []string
		switch rng.Intn(4) {
		case 0:
			models = []string{testModels[rng.Intn(2)]}
		case 1:
			models = []string{"B", "A"}
		}
		switch r := rng.Intn(10); {
		case r < 5:
			pods[i] = gpuPod(cpu, mem, 1, int64(50*(1+rng.Intn(19))), models...)
		case r < 7:
			pods[i] = gpuPod(cpu, mem, 1, 1000, models...)
		case r < 9:
			pods[i] = gpuPod(cpu, mem, []int{2, 4}[rng.Intn(2)], 1000, models...)
		default:
			pods[i] = gpuPod(cpu, mem, 0, 0)
		}
	}
	return named(nodes, pods)
}

// synthetic builds a realistic-size input: nodes of 15 types like the openb
// cluster, and pods drawn from a fixed set of shapes.
func synthetic(seed int64, numNodes, numPods, numShapes int) ([]placement.Node, []placement.Pod) {
	rng := rand.New(rand.NewSource(seed))
	kinds := []struct {
		gpus     int
		cpu, mem int64
		model    string
		weight   int
	}{
		{2, 104000, 524288, "T4", 387}, {1, 128000, 1048576, "A10", 2}, {8, 128000, 786432, "G3", 39},
		{2, 16000, 122880, "P100", 107}, {4, 32000, 131072, "V100M16", 28}, {4, 48000, 376832, "V100M32", 9},
		{2, 64000, 262144, "P100", 22}, {8, 64000, 262144, "V100M16", 7}, {1, 8000, 32768, "V100M16", 19},
		{1, 8000, 61440, "P100", 3}, {2, 8000, 61440, "P100", 2}, {8, 82000, 344064, "V100M16", 1},
		{4, 96000, 393216, "T4", 17}, {8, 96000, 393216, "G2", 549}, {8, 96000, 786432, "V100M32", 21},
	}
	var nodes []placement.Node
	for len(nodes) < numNodes {
		for _, k := range kinds {
			for range max(1, k.weight*numNodes/1213) {
				if len(nodes) < numNodes {
					nodes = append(nodes, gpuNode(k.gpus, k.cpu, k.mem, k.model))
				}
			}
		}
	}
	shapes := make([]placement.Pod, numShapes)
	for i := range shapes {
		cpu, mem := int64(1000*(1+rng.Intn(16))), int64(1024*(1+rng.Intn(64)))
		var models []string
		if rng.Intn(10) == 0 {
			models = []string{kinds[rng.Intn(len(kinds))].model}
		}
		switch r := rng.Intn(100); {
		case r < 48:
			shapes[i] = gpuPod(cpu, mem, 1, 1000, models...)
		case r < 50:
			shapes[i] = gpuPod(cpu, mem, []int{2, 4, 8}[rng.Intn(3)], 1000, models...)
		case r < 87:
			shapes[i] = gpuPod(cpu, mem, 1, int64(10*(5+rng.Intn(95))), models...)
		default:
			shapes[i] = gpuPod(cpu, mem, 0, 0)
		}
	}
	pods := make([]placement.Pod, numPods)
	for i := range pods {
		pods[i] = shapes[rng.Intn(numShapes)]
	}
	return named(nodes, pods)
}
