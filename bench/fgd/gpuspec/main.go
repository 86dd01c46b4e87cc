// Command gpuspec derives model-constrained variants of an openb pod list:
// it gives a gpu_spec (an allowed GPU-model set) to a share of the GPU pods,
// as the paper's gpuspec traces do, so that placement under model
// constraints can be measured on the public traces, which carry none.
//
//	go run ./bench/fgd/gpuspec -nodes NODES.csv -pods PODS.csv -share 0.33 -out DIR
//	go run ./bench/fgd/gpuspec -mode fleet -small 0.7 -nodes NODES.csv -pods PODS.csv -share 0.33 -out DIR
//
// Two modes, chosen with -mode:
//
//   - draw (the default, as before): a constrained pod is allowed one model,
//     or two, drawn in proportion to the GPUs of each model among the nodes
//     that could hold it, so every pod keeps somewhere to go. Writes
//     <pods>_gpuspecNN.csv.
//
//   - fleet: restrictions as real fleets have them. Most restricted pods
//     (the share -small, 0.7 by default) name one model, the commonest
//     small-node model: the model with the most nodes among the nodes with
//     fewer GPUs than the fleet's largest (all GPU nodes if they are all the
//     same size; ties to the name first in order). On the openb fleet that
//     is T4 (404 of the 596 nodes with fewer than 8 GPUs). The others name a
//     model family, two or more models whose names share a prefix. -family
//     says which prefix: series (the default), the name up to the end of
//     its first run of digits (V100M16 and V100M32 are the family V100; G2
//     and G3 are two models), or letter, the name before its first digit
//     (V100M16|V100M32, and also G2|G3). A pod is restricted only to a set
//     with a node that, when empty, holds it (GPUs, CPU and memory), so no
//     pod is impossible by construction. round(share x GPU pods) of the
//     pods that some such set holds are drawn (a seeded permutation) to be
//     restricted, so that share of all GPU pods are, as long as enough can
//     be; pods that no set holds stay unrestricted. A drawn pod that only
//     the small-node model can hold names it; one that it cannot names a
//     family that can; one that both can hold names the small-node model
//     with probability -small, else a family. When several families could
//     hold a pod, one is drawn in proportion to their GPUs. Writes
//     <pods>_fleet<family>NN.csv (<pods>_fleet<family>NN_smallMM.csv when
//     -small is not 0.7) and a line of counts on stderr.
//
// Both draws are seeded (-seed): the same inputs give the same file.
package main

import (
	"flag"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/corral-sched/corral/internal/example"
	"github.com/corral-sched/corral/internal/openb"
	"github.com/corral-sched/corral/internal/placement"
)

func main() {
	nodesPath := flag.String("nodes", "", "openb node list")
	podsPath := flag.String("pods", "", "openb pod list to derive from")
	share := flag.Float64("share", 0.33, "share of GPU pods to constrain, 0..1")
	seed := flag.Int64("seed", 1, "seed of the draw")
	out := flag.String("out", ".", "directory to write <pods>_gpuspecNN.csv (or _fleet<family>NN.csv) into")
	mode := flag.String("mode", "draw", "draw: one or two models in proportion to GPUs; fleet: the commonest small-node model or a model family")
	small := flag.Float64("small", 0.7, "fleet mode: share of restricted pods that name the commonest small-node model, 0..1")
	family := flag.String("family", "series", "fleet mode: models of a family share the name up to the end of its first digits (series: V100M16, V100M32) or before its first digit (letter: also G2, G3)")
	flag.Parse()
	if err := run(*mode, *nodesPath, *podsPath, *share, *small, *family, *seed, *out, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "gpuspec:", err)
		os.Exit(1)
	}
}

func run(mode, nodesPath, podsPath string, share, small float64, family string, seed int64, out string, stderr io.Writer) error {
	if share < 0 || share > 1 {
		return fmt.Errorf("share %v outside 0..1", share)
	}
	if small < 0 || small > 1 {
		return fmt.Errorf("small %v outside 0..1", small)
	}
	nodes, err := openb.ReadNodesFile(nodesPath)
	if err != nil {
		return err
	}
	pods, err := openb.ReadPodsFile(podsPath)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewSource(seed))
	var suffix string
	switch mode {
	case "draw":
		suffix = "gpuspec"
		for i := range pods {
			if pods[i].IsGPU() && rng.Float64() < share {
				pods[i].Models = drawModels(rng, nodes, pods[i])
			}
		}
	case "fleet":
		suffix = "fleet" + family
		key := seriesKey
		switch family {
		case "series":
		case "letter":
			key = letterKey
		default:
			return fmt.Errorf("unknown family rule %q (series, letter)", family)
		}
		f := newFleet(nodes, key)
		if f.small == "" {
			return fmt.Errorf("%s: no GPU nodes", nodesPath)
		}
		fmt.Fprintln(stderr, f.restrict(rng, pods, share, small))
	default:
		return fmt.Errorf("unknown mode %q (draw, fleet)", mode)
	}
	name := fmt.Sprintf("%s_%s%02d.csv", openb.TraceName(podsPath), suffix, int(share*100+0.5))
	if mode == "fleet" && small != 0.7 { // ..._fleetseries70s33.csv would misread
		name = fmt.Sprintf("%s_fleet%s%02d_small%02d.csv", openb.TraceName(podsPath), family, int(share*100+0.5), int(small*100+0.5))
	}
	path := filepath.Join(out, name)
	if err := os.WriteFile(path, example.PodsCSV(pods), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	fmt.Println(path)
	return nil
}

// drawModels picks one or two models that can hold the pod, weighted by
// their GPU counts.
func drawModels(rng *rand.Rand, nodes []placement.Node, p placement.Pod) []string {
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

// fleet is what the fleet mode restricts pods to.
type fleet struct {
	nodes    []placement.Node
	small    string   // the commonest small-node model
	families []family // of two or more models each, in name order
}

type family struct {
	models []string // sorted
	gpus   int
}

// newFleet finds the small-node model and the families, the models of a
// family sharing key(model).
func newFleet(nodes []placement.Node, key func(string) string) fleet {
	f := fleet{nodes: nodes, small: smallModel(nodes)}
	members := map[string][]string{}
	gpus := map[string]int{}
	for _, n := range nodes {
		if n.GPUs == 0 {
			continue
		}
		k := key(n.Model)
		if gpus[n.Model] == 0 {
			members[k] = append(members[k], n.Model)
		}
		gpus[n.Model] += n.GPUs
	}
	var keys []string
	for k, ms := range members {
		if len(ms) >= 2 {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		fam := family{models: members[k]}
		sort.Strings(fam.models)
		for _, m := range fam.models {
			fam.gpus += gpus[m]
		}
		f.families = append(f.families, fam)
	}
	return f
}

// smallModel is the model with the most nodes among the GPU nodes with
// fewer GPUs than the largest (all GPU nodes when they are all one size);
// ties go to the name first in order.
func smallModel(nodes []placement.Node) string {
	largest, smallest := 0, 0
	for _, n := range nodes {
		if n.GPUs > 0 {
			largest = max(largest, n.GPUs)
			if smallest == 0 || n.GPUs < smallest {
				smallest = n.GPUs
			}
		}
	}
	count := map[string]int{}
	for _, n := range nodes {
		if n.GPUs > 0 && (n.GPUs < largest || smallest == largest) {
			count[n.Model]++
		}
	}
	best := ""
	for m, k := range count {
		if best == "" || k > count[best] || k == count[best] && m < best {
			best = m
		}
	}
	return best
}

// seriesKey is a model's name up to the end of its first run of digits:
// V100M16 and V100M32 give V100, A100-40G gives A100, G2 gives G2.
func seriesKey(name string) string {
	i := strings.IndexAny(name, "0123456789")
	if i < 0 {
		return name
	}
	for i < len(name) && name[i] >= '0' && name[i] <= '9' {
		i++
	}
	return name[:i]
}

// letterKey is a model's name up to its first digit: V100M16 gives V, G2
// and G3 give G.
func letterKey(name string) string {
	if i := strings.IndexAny(name, "0123456789"); i > 0 {
		return name[:i]
	}
	return name
}

// fits reports whether an empty node of one of models holds p.
func (f fleet) fits(p placement.Pod, models []string) bool {
	for _, n := range f.nodes {
		if n.GPUs >= p.NumGPU && n.CPUMilli >= p.CPUMilli && n.MemoryMiB >= p.MemoryMiB && (placement.Pod{Models: models}).Allows(n.Model) {
			return true
		}
	}
	return false
}

// restrict gives share of the GPU pods an allowed-model set (as many as it
// can), about a share small of them the small-node model, and says what
// it did.
func (f fleet) restrict(rng *rand.Rand, pods []placement.Pod, share, small float64) string {
	smallSet := []string{f.small}
	type options struct {
		small    bool
		families []int // the families that hold the pod
	}
	opts := make([]options, len(pods))
	gpuPods := 0
	var candidates []int
	for i, p := range pods {
		if !p.IsGPU() {
			continue
		}
		gpuPods++
		o := options{small: f.fits(p, smallSet)}
		for j, fam := range f.families {
			if f.fits(p, fam.models) {
				o.families = append(o.families, j)
			}
		}
		opts[i] = o
		if o.small || len(o.families) > 0 {
			candidates = append(candidates, i)
		}
	}
	want := min(int(share*float64(gpuPods)+0.5), len(candidates))
	chosen := rng.Perm(len(candidates))[:want]
	sort.Ints(chosen) // draw the kinds in file order
	counts := map[string]int{}
	for _, c := range chosen {
		i, o := candidates[c], opts[candidates[c]]
		if o.small && (len(o.families) == 0 || rng.Float64() < small) {
			pods[i].Models = smallSet
		} else {
			pods[i].Models = f.families[f.drawFamily(rng, o.families)].models
		}
		counts[pods[i].ModelSpec()]++
	}
	var specs []string
	for s := range counts {
		specs = append(specs, s)
	}
	sort.Strings(specs)
	var b strings.Builder
	fmt.Fprintf(&b, "fleet: %s small-node model; %d of %d GPU pods restricted (%.1f%%; %d could be)",
		f.small, want, gpuPods, 100*float64(want)/float64(max(gpuPods, 1)), len(candidates))
	for _, s := range specs {
		fmt.Fprintf(&b, ", %s %d", s, counts[s])
	}
	return b.String()
}

// drawFamily draws one of the given families in proportion to its GPUs.
func (f fleet) drawFamily(rng *rand.Rand, among []int) int {
	if len(among) == 1 {
		return among[0]
	}
	total := 0
	for _, j := range among {
		total += f.families[j].gpus
	}
	r := rng.Intn(total)
	for _, j := range among {
		if r -= f.families[j].gpus; r < 0 {
			return j
		}
	}
	return among[len(among)-1]
}
