package example

import (
	"bytes"
	"fmt"
	"math/rand"

	"github.com/corral-sched/corral/internal/placement"
)

// Trace is the name the example's pods report under.
const Trace = "example"

// nodeShape is a group of identical nodes.
type nodeShape struct {
	count     int
	cpu, mem  int64
	gpus      int
	gpuModel  string
	namePrefx string
}

// shapes is the example cluster. specs in Pods must only name models whose
// nodes can host the pods they restrict.
var shapes = []nodeShape{
	{50, 96000, 786432, 8, "A100", "a100"},
	{30, 64000, 262144, 4, "T4", "t4"},
	{25, 32000, 131072, 2, "P100", "p100"},
	{15, 16000, 65536, 1, "V100", "v100"},
}

// Nodes generates the example cluster: 120 nodes, 585 GPUs of four models.
func Nodes() []placement.Node {
	var nodes []placement.Node
	for _, s := range shapes {
		for i := 0; i < s.count; i++ {
			nodes = append(nodes, placement.Node{
				Name: fmt.Sprintf("ex-%s-%02d", s.namePrefx, i), CPUMilli: s.cpu,
				MemoryMiB: s.mem, GPUs: s.gpus, Model: s.gpuModel,
			})
		}
	}
	return nodes
}

// Pods generates the example workload: 750 pods shaped like the openb trace
// (CPU-only, sharing, and 1-, 2-, 4- and 8-GPU pods), about one in six GPU
// pods restricted to some GPU models.
func Pods() []placement.Pod {
	rng := rand.New(rand.NewSource(2023))
	shares := []int64{100, 200, 250, 300, 460, 500, 650, 810}
	cpus := []int64{2000, 4000, 6000, 8000, 12000, 16000}
	specs := [][]string{{"A100"}, {"T4", "P100"}, {"A100", "V100"}, {"T4"}}
	pods := make([]placement.Pod, 750)
	for i := range pods {
		p := placement.Pod{Name: fmt.Sprintf("ex-pod-%04d", i), CPUMilli: cpus[rng.Intn(len(cpus))]}
		p.MemoryMiB = p.CPUMilli / 1000 * 4096
		switch r := rng.Float64(); {
		case r < 0.13: // CPU-only
		case r < 0.48:
			p.NumGPU, p.GPUMilli = 1, shares[rng.Intn(len(shares))]
		case r < 0.95:
			p.NumGPU, p.GPUMilli = 1, 1000
		case r < 0.98:
			p.NumGPU, p.GPUMilli = 2, 1000
		case r < 0.995:
			p.NumGPU, p.GPUMilli = 4, 1000
		default:
			p.NumGPU, p.GPUMilli = 8, 1000
		}
		if p.IsGPU() && rng.Float64() < 0.17 {
			p.Models = specs[rng.Intn(len(specs))]
			if p.NumGPU > 2 {
				p.Models = specs[0] // only the 8-GPU A100 nodes can host it
			}
		}
		pods[i] = p
	}
	return pods
}

// NodesCSV renders nodes in the openb node-list form.
func NodesCSV(nodes []placement.Node) []byte {
	var b bytes.Buffer
	b.WriteString("sn,cpu_milli,memory_mib,gpu,model\n")
	for _, n := range nodes {
		fmt.Fprintf(&b, "%s,%d,%d,%d,%s\n", n.Name, n.CPUMilli, n.MemoryMiB, n.GPUs, n.Model)
	}
	return b.Bytes()
}

// PodsCSV renders pods in the 11-column openb pod-list form.
func PodsCSV(pods []placement.Pod) []byte {
	var b bytes.Buffer
	b.WriteString("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n")
	for i, p := range pods {
		fmt.Fprintf(&b, "%s,%d,%d,%d,%d,%s,LS,Running,%d,,%d\n",
			p.Name, p.CPUMilli, p.MemoryMiB, p.NumGPU, p.GPUMilli, p.ModelSpec(), i*60, i*60)
	}
	return b.Bytes()
}
