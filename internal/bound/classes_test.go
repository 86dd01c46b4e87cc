package bound

import (
	"math"
	"math/rand"
	"slices"
	"testing"

	"github.com/corral-sched/corral/internal/placement"
)

// TestGroupPodsOnlyRoundsDown checks the coarsening invariants behind the
// bound: few enough classes, and every pod asks at least what its class
// asks, with the same GPU request and allowed models.
func TestGroupPodsOnlyRoundsDown(t *testing.T) {
	for _, numShapes := range []int{10, 3000} {
		_, pods := synthetic(int64(numShapes), 10, 6000, numShapes)
		classes, classOf := groupPods(pods, 128000, 1048576)
		if len(classes) > maxClasses && numShapes > 10 {
			t.Errorf("%d shapes: %d classes, want at most %d", numShapes, len(classes), maxClasses)
		}
		count := make([]int, len(classes))
		for i, p := range pods {
			c := classOf[i]
			if !p.IsGPU() {
				if c != -1 {
					t.Fatalf("CPU-only pod %d has class %d", i, c)
				}
				continue
			}
			k := classes[c]
			if k.numGPU != p.NumGPU || k.gpuMilli != p.GPUMilli || !slices.Equal(slices.Sorted(slices.Values(k.models)), slices.Sorted(slices.Values(p.Models))) ||
				k.cpu > p.CPUMilli || k.mem > p.MemoryMiB {
				t.Fatalf("pod %+v in class %+v", p, k)
			}
			count[c]++
		}
		for c, k := range classes {
			if k.count != count[c] {
				t.Errorf("class %d counts %d pods, holds %d", c, k.count, count[c])
			}
		}
	}
}

// TestGroupNodesOnlyRoundsUp checks that every node is no bigger than its
// type, and that types are capped.
func TestGroupNodesOnlyRoundsUp(t *testing.T) {
	rng := rand.New(rand.NewSource(6))
	nodes := make([]placement.Node, 500)
	for i := range nodes {
		nodes[i] = gpuNode(1+rng.Intn(8), int64(1000+rng.Intn(127000)), int64(1024+rng.Intn(1<<20)), testModels[rng.Intn(2)])
	}
	nodes = append(nodes, placement.Node{Name: "cpu-only", CPUMilli: 1000, MemoryMiB: 1000})
	types, nodesOf := groupNodes(nodes)
	if len(types) > maxNodeTypes {
		t.Errorf("%d types, want at most %d", len(types), maxNodeTypes)
	}
	seen := 0
	for ti, members := range nodesOf {
		tt := types[ti]
		if tt.count != len(members) {
			t.Errorf("type %d counts %d nodes, lists %d", ti, tt.count, len(members))
		}
		for _, n := range members {
			nd := nodes[n]
			if nd.Model != tt.model || nd.GPUs != tt.gpus || nd.CPUMilli > tt.cpu || nd.MemoryMiB > tt.mem {
				t.Fatalf("node %+v in type %+v", nd, tt)
			}
			seen++
		}
	}
	if seen != len(nodes)-1 {
		t.Errorf("types hold %d nodes, want the %d GPU nodes", seen, len(nodes)-1)
	}
}

// TestSolveOptimalAtScale checks that the simplex reaches the optimum on a
// realistic relaxation: x is feasible and its value meets the certified
// dual bound.
func TestSolveOptimalAtScale(t *testing.T) {
	nodes, pods := synthetic(7, 150, 1000, 250)
	types, _ := groupNodes(nodes)
	classes, _ := groupPods(pods, 128000, 1048576)
	p := buildLP(types, classes, chooseCuts(classes))
	x, y, err := solve(p)
	if err != nil {
		t.Fatal(err)
	}
	var primal float64
	rows := make([]float64, len(p.b))
	for j, v := range x {
		if v < -1e-9 {
			t.Fatalf("x[%d] = %g", j, v)
		}
		primal += p.w[j] * v
		for _, e := range p.cols[j] {
			rows[e.row] += e.val * v
		}
	}
	for i, v := range rows {
		if v > p.b[i]*(1+1e-9)+1e-9 {
			t.Errorf("row %d: %.9f > %.9f", i, v, p.b[i])
		}
	}
	if dual := dualBound(p, y); math.Abs(dual-primal) > 1e-6*max(1, primal) {
		t.Errorf("%d rows, %d columns: primal %.6f, certified dual %.6f", len(p.b), len(p.cols), primal, dual)
	}
}
