// Command gpuspec derives model-constrained variants of an openb pod list:
// it gives a gpu_spec (an allowed GPU-model set) to a share of the GPU pods,
// as the paper's gpuspec traces do, so that placement under model
// constraints can be measured on the public traces, which carry none.
//
//	go run ./bench/fgd/gpuspec -nodes NODES.csv -pods PODS.csv -share 0.33 -out DIR
//
// A constrained pod is allowed one model, or two, drawn in proportion to the
// GPUs of each model among the nodes that could hold it, so every pod keeps
// somewhere to go. The draw is seeded: the same inputs give the same file.
package main

import (
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"

	"github.com/corral-sched/corral/internal/example"
	"github.com/corral-sched/corral/internal/model"
)

func main() {
	nodesPath := flag.String("nodes", "", "openb node list")
	podsPath := flag.String("pods", "", "openb pod list to derive from")
	share := flag.Float64("share", 0.33, "share of GPU pods to constrain, 0..1")
	seed := flag.Int64("seed", 1, "seed of the draw")
	out := flag.String("out", ".", "directory to write <pods>_gpuspecNN.csv into")
	flag.Parse()
	if err := run(*nodesPath, *podsPath, *share, *seed, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gpuspec:", err)
		os.Exit(1)
	}
}

func run(nodesPath, podsPath string, share float64, seed int64, out string) error {
	if share < 0 || share > 1 {
		return fmt.Errorf("share %v outside 0..1", share)
	}
	nodes, err := model.ReadNodesFile(nodesPath)
	if err != nil {
		return err
	}
	pods, err := model.ReadPodsFile(podsPath)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewSource(seed))
	for i := range pods {
		if pods[i].IsGPU() && rng.Float64() < share {
			pods[i].Models = drawModels(rng, nodes, pods[i])
		}
	}
	name := fmt.Sprintf("%s_gpuspec%02d.csv", model.TraceName(podsPath), int(share*100+0.5))
	path := filepath.Join(out, name)
	if err := os.WriteFile(path, example.PodsCSV(pods), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	fmt.Println(path)
	return nil
}

// drawModels picks one or two models that can hold the pod, weighted by
// their GPU counts.
func drawModels(rng *rand.Rand, nodes []model.Node, p model.Pod) []string {
	gpus := map[string]int{}
	for _, n := range nodes {
		if n.GPUs >= p.NumGPU && n.CPUMilli >= p.CPUMilli && n.MemoryMiB >= p.MemoryMiB {
			gpus[n.Model] += n.GPUs
		}
	}
	var models []string
	for m := range gpus {
		models = append(models, m)
	}
	sort.Strings(models)
	want := min(1+rng.Intn(2), len(models))
	picked := map[string]bool{}
	for len(picked) < want {
		picked[weighted(rng, models, gpus)] = true
	}
	var out []string
	for _, m := range models { // sorted: one spelling per model set
		if picked[m] {
			out = append(out, m)
		}
	}
	return out
}

func weighted(rng *rand.Rand, models []string, w map[string]int) string {
	total := 0
	for _, m := range models {
		total += w[m]
	}
	r := rng.Intn(total)
	for _, m := range models {
		if r -= w[m]; r < 0 {
			return m
		}
	}
	return models[len(models)-1]
}
