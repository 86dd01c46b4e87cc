package bound

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"gonum.org/v1/gonum/mat"
	gonumlp "gonum.org/v1/gonum/optimize/convex/lp"

	"github.com/corral-sched/corral/internal/placement"
)

// bruteForce returns the most GPU milli any placement of a subset of pods
// allocates, by exhaustive search. It shares no code with the package.
func bruteForce(nodes []placement.Node, pods []placement.Pod) int64 {
	cpu, mem := make([]int64, len(nodes)), make([]int64, len(nodes))
	used := make([][]int64, len(nodes))
	for i, n := range nodes {
		cpu[i], mem[i], used[i] = n.CPUMilli, n.MemoryMiB, make([]int64, n.GPUs)
	}
	rest := make([]int64, len(pods)+1) // GPU milli of pods[i:]
	for i := len(pods) - 1; i >= 0; i-- {
		rest[i] = rest[i+1] + pods[i].TotalGPUMilli()
	}
	var best int64
	var place func(i int, got int64)
	try := func(i int, got int64, n int, gpus []int) {
		p := pods[i]
		cpu[n], mem[n] = cpu[n]-p.CPUMilli, mem[n]-p.MemoryMiB
		for _, g := range gpus {
			used[n][g] += p.GPUMilli
		}
		place(i+1, got+p.TotalGPUMilli())
		cpu[n], mem[n] = cpu[n]+p.CPUMilli, mem[n]+p.MemoryMiB
		for _, g := range gpus {
			used[n][g] -= p.GPUMilli
		}
	}
	place = func(i int, got int64) {
		best = max(best, got)
		if i == len(pods) || got+rest[i] <= best {
			return
		}
		if p := pods[i]; p.IsGPU() {
			for n, node := range nodes {
				if p.CPUMilli > cpu[n] || p.MemoryMiB > mem[n] || !p.Allows(node.Model) {
					continue
				}
				for _, gpus := range gpuChoices(p, used[n]) {
					try(i, got, n, gpus)
				}
			}
		}
		place(i+1, got)
	}
	place(0, 0)
	return best
}

// gpuChoices lists the distinct ways p can take GPUs given their use: a
// sharing pod any GPU with room (one per distinct use, as equal GPUs are
// interchangeable), any other pod NumGPU free GPUs (which ones is immaterial).
func gpuChoices(p placement.Pod, used []int64) [][]int {
	var out [][]int
	if p.IsShare() {
		seen := map[int64]bool{}
		for g, u := range used {
			if u+p.GPUMilli <= placement.MilliPerGPU && !seen[u] {
				seen[u] = true
				out = append(out, []int{g})
			}
		}
		return out
	}
	var free []int
	for g, u := range used {
		if u == 0 {
			free = append(free, g)
		}
	}
	if len(free) >= p.NumGPU {
		out = append(out, free[:p.NumGPU])
	}
	return out
}

func TestBoundsSandwichBruteForce(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for i := range 400 {
		nodes, pods := randInstance(rng, 3, 6)
		res, err := Compute(nodes, pods)
		if err != nil {
			t.Fatalf("instance %d: Compute: %v", i, err)
		}
		exact := bruteForce(nodes, pods)
		if res.PackedMilli > exact || float64(exact) > res.UpperMilli+1e-6 {
			t.Fatalf("instance %d: want packed %d <= exact %d <= upper %.6f\nnodes %+v\npods %+v",
				i, res.PackedMilli, exact, res.UpperMilli, nodes, pods)
		}
	}
}

// TestSimplexMatchesGonum checks the solver's optimum, and the certified
// dual bound, against gonum's dense simplex on random relaxations. gonum's
// solver now and then gives up on a degenerate basis; those instances are
// skipped, but only a few may be.
func TestSimplexMatchesGonum(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	compared, skipped := 0, 0
	for i := range 40 {
		nodes, pods := randInstance(rng, 6, 30)
		classes, _ := groupPods(pods, 12000, 16384)
		types, _ := groupNodes(nodes)
		p := buildLP(types, classes, chooseCuts(classes))
		if len(p.cols) == 0 {
			continue
		}
		x, y, err := solve(p)
		if err != nil {
			t.Fatalf("instance %d: solve: %v", i, err)
		}
		want, err := gonumOptimum(p)
		if err != nil {
			t.Logf("instance %d: skipped: %v", i, err)
			skipped++
			continue
		}
		compared++
		var obj float64
		for j, v := range x {
			obj += p.w[j] * v
		}
		if math.Abs(obj-want) > 1e-7 {
			t.Errorf("instance %d: simplex optimum %.9f, gonum %.9f", i, obj, want)
		}
		if dual := dualBound(p, y); dual < want-1e-9 || dual > want+1e-7 {
			t.Errorf("instance %d: certified dual %.9f, optimum %.9f", i, dual, want)
		}
	}
	if skipped > compared/10 {
		t.Errorf("gonum failed on %d instances, solved %d", skipped, compared)
	}
}

// gonumOptimum solves max wᵀx, Ax <= b, x >= 0 with lp.Simplex in standard
// form [A I][x s]ᵀ = b, starting from the slack basis.
func gonumOptimum(p *lp) (float64, error) {
	m, n := len(p.b), len(p.cols)
	a := mat.NewDense(m, n+m, nil)
	c := make([]float64, n+m)
	for j, col := range p.cols {
		for _, e := range col {
			a.Set(e.row, j, e.val)
		}
		c[j] = -p.w[j]
	}
	basic := make([]int, m)
	for i := range m {
		a.Set(i, n+i, 1)
		basic[i] = n + i
	}
	opt, _, err := gonumlp.Simplex(c, a, p.b, 1e-10, basic)
	if err != nil {
		return 0, fmt.Errorf("gonum simplex: %w", err)
	}
	return -opt, nil
}
