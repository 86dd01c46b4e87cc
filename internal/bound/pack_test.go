package bound

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/corral-sched/corral/internal/placement"
)

// checkPacking verifies from scratch that pk is a feasible placement.
func checkPacking(nodes []placement.Node, pods []placement.Pod, pk packing) error {
	cpu, mem := make([]int64, len(nodes)), make([]int64, len(nodes))
	gpu := make([][]int64, len(nodes))   // milli per GPU
	whole := make([][]bool, len(nodes))  // GPU taken by a whole-GPU pod
	tenants := make([][]int, len(nodes)) // pods per GPU
	for n, node := range nodes {
		gpu[n], whole[n], tenants[n] = make([]int64, node.GPUs), make([]bool, node.GPUs), make([]int, node.GPUs)
	}
	placed := map[int]bool{}
	var milli int64
	for _, a := range pk.assigned {
		p, n := pods[a.pod], a.node
		if placed[a.pod] {
			return fmt.Errorf("pod %d placed twice", a.pod)
		}
		placed[a.pod] = true
		if !p.IsGPU() || !p.Allows(nodes[n].Model) || len(a.gpus) != p.NumGPU {
			return fmt.Errorf("pod %d (%+v) on node %d GPUs %v: wrong model or GPU count", a.pod, p, n, a.gpus)
		}
		cpu[n], mem[n] = cpu[n]+p.CPUMilli, mem[n]+p.MemoryMiB
		seen := map[int]bool{}
		for _, g := range a.gpus {
			if g < 0 || g >= nodes[n].GPUs || seen[g] {
				return fmt.Errorf("pod %d: bad GPU list %v on node %d", a.pod, a.gpus, n)
			}
			seen[g] = true
			gpu[n][g] += p.GPUMilli
			tenants[n][g]++
			whole[n][g] = whole[n][g] || !p.IsShare()
		}
		milli += p.TotalGPUMilli()
	}
	for n, node := range nodes {
		if cpu[n] > node.CPUMilli || mem[n] > node.MemoryMiB {
			return fmt.Errorf("node %d over CPU or memory: %d/%d, %d/%d", n, cpu[n], node.CPUMilli, mem[n], node.MemoryMiB)
		}
		for g := range gpu[n] {
			if gpu[n][g] > placement.MilliPerGPU || (whole[n][g] && tenants[n][g] > 1) {
				return fmt.Errorf("node %d GPU %d over-allocated: %d milli, %d pods", n, g, gpu[n][g], tenants[n][g])
			}
		}
	}
	if milli != pk.milli {
		return fmt.Errorf("packing claims %d milli, holds %d", pk.milli, milli)
	}
	return nil
}

func TestPackIsFeasible(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for i := range 60 {
		nodes, pods := randInstance(rng, 20, 200)
		if err := checkPacking(nodes, pods, pack(nodes, pods, nil)); err != nil {
			t.Fatalf("instance %d: %v", i, err)
		}
		_, h, err := relax(nodes, pods)
		if err != nil {
			t.Fatalf("instance %d: relax: %v", i, err)
		}
		for k, st := range strategies(pods, h) {
			if err := checkPacking(nodes, pods, packRun(nodes, pods, st)); err != nil {
				t.Fatalf("instance %d strategy %d: %v", i, k, err)
			}
		}
	}
	nodes, pods := synthetic(4, 200, 2000, 300)
	if err := checkPacking(nodes, pods, pack(nodes, pods, nil)); err != nil {
		t.Fatalf("synthetic: %v", err)
	}
}

// TestPackFillsSharedGPUs checks the best fit inside a node: small shares
// fill one GPU before opening another, leaving a whole GPU for a 1-GPU pod.
func TestPackFillsSharedGPUs(t *testing.T) {
	nodes, pods := named([]placement.Node{gpuNode(2, 64000, 65536, "A")},
		[]placement.Pod{gpuPod(100, 100, 1, 300), gpuPod(100, 100, 1, 300), gpuPod(100, 100, 1, 400), gpuPod(100, 100, 1, 1000)})
	pk := packRun(nodes, pods, strategy{order: []int{0, 1, 2, 3}})
	if err := checkPacking(nodes, pods, pk); err != nil {
		t.Fatal(err)
	}
	if pk.milli != 2000 {
		t.Errorf("packed %d milli in arrival order, want 2000", pk.milli)
	}
}
