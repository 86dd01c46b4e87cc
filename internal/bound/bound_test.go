package bound

import (
	"math"
	"strings"
	"testing"

	"github.com/corral-sched/corral/internal/placement"
)

// Hand-computed cases: the bound and what the heuristic must pack.
var (
	oneGPU = []placement.Node{gpuNode(1, 32000, 65536, "A")}
	whole  = gpuPod(1000, 1024, 1, 1000)
)

func share(milli int64) placement.Pod { return gpuPod(1000, 1024, 1, milli) }

var handCases = []struct {
	name   string
	nodes  []placement.Node
	pods   []placement.Pod
	upper  float64
	packed int64
}{
	{"two 600 shares on one GPU (cut j=1)", oneGPU, repeat(2, share(600)), 600, 600},
	{"three 400 shares on one GPU (cut j=2)", oneGPU, repeat(3, share(400)), 800, 800},
	{"four 300 shares on one GPU (cut j=3)", oneGPU, repeat(4, share(300)), 900, 900},
	{"six 200 shares on one GPU", oneGPU, repeat(6, share(200)), 1000, 1000},
	// Threshold cut k=1, a=810: x810 + 0.23 x230 <= 1, so x230 = 1, x810 = 0.77.
	{"810 and 230 shares on one GPU (threshold cut)", oneGPU,
		[]placement.Pod{share(810), share(230)}, 0.77*810 + 230, 810},
	// Threshold cut k=2, a=470: (x470)/2 + x100/1060 <= 1, so x100 = 1,
	// x470 = 2*960/1060.
	{"two 470 shares and a 100 on one GPU (threshold cut)", oneGPU,
		[]placement.Pod{share(470), share(470), share(100)}, 470*1920.0/1060 + 100, 940},
	{"whole GPU leaves no room for a share", oneGPU, []placement.Pod{whole, share(300)}, 1000, 1000},
	{"whole GPU and two 600 shares on two GPUs",
		[]placement.Node{gpuNode(2, 32000, 65536, "A")},
		[]placement.Pod{whole, share(600), share(600)}, 1600, 1600},
	{"CPU limits whole pods",
		[]placement.Node{gpuNode(4, 8000, 65536, "A")},
		repeat(3, gpuPod(4000, 1024, 1, 1000)), 2000, 2000},
	{"CPU limits fractionally",
		[]placement.Node{gpuNode(2, 8000, 65536, "A")},
		repeat(2, gpuPod(6000, 1024, 1, 1000)), 4000.0 / 3, 1000},
	{"memory limits shares",
		[]placement.Node{gpuNode(2, 64000, 8192, "A")},
		repeat(4, gpuPod(1000, 4096, 1, 500)), 1000, 1000},
	{"model restricted to one node",
		[]placement.Node{gpuNode(1, 32000, 65536, "A"), gpuNode(1, 32000, 65536, "B")},
		repeat(2, gpuPod(1000, 1024, 1, 1000, "A")), 1000, 1000},
	{"model nowhere in the cluster", oneGPU, []placement.Pod{gpuPod(1000, 1024, 1, 1000, "C")}, 0, 0},
	{"multi-GPU pod larger than any node",
		[]placement.Node{gpuNode(2, 32000, 65536, "A"), gpuNode(2, 32000, 65536, "A")},
		[]placement.Pod{gpuPod(1000, 1024, 4, 1000)}, 0, 0},
	{"8-GPU pod and a share",
		[]placement.Node{gpuNode(8, 96000, 393216, "G2")},
		[]placement.Pod{gpuPod(8000, 1024, 8, 1000), share(100)}, 8000, 8000},
	{"CPU-only pods and nodes are ignored",
		[]placement.Node{{CPUMilli: 64000, MemoryMiB: 65536}, gpuNode(1, 4000, 65536, "A")},
		[]placement.Pod{gpuPod(4000, 1024, 0, 0), gpuPod(4000, 1024, 1, 500)}, 500, 500},
	{"no nodes", nil, []placement.Pod{share(500)}, 0, 0},
	{"no pods", oneGPU, nil, 0, 0},
}

func TestComputeHandCases(t *testing.T) {
	for _, tc := range handCases {
		t.Run(tc.name, func(t *testing.T) {
			nodes, pods := named(tc.nodes, tc.pods)
			res, err := Compute(nodes, pods)
			if err != nil {
				t.Fatalf("Compute: %v", err)
			}
			var capacity int64
			for _, n := range nodes {
				capacity += n.GPUMilli()
			}
			if res.CapacityMilli != capacity {
				t.Errorf("CapacityMilli = %d, want %d", res.CapacityMilli, capacity)
			}
			if math.Abs(res.UpperMilli-tc.upper) > 1e-6 {
				t.Errorf("UpperMilli = %.9f, want %.9f", res.UpperMilli, tc.upper)
			}
			if res.PackedMilli != tc.packed {
				t.Errorf("PackedMilli = %d, want %d", res.PackedMilli, tc.packed)
			}
		})
	}
}

func TestResultPercentages(t *testing.T) {
	tests := []struct {
		res          Result
		minPct, pack float64
	}{
		{Result{CapacityMilli: 1000, UpperMilli: 600, PackedMilli: 500}, 40, 50},
		{Result{CapacityMilli: 8000, UpperMilli: 8000, PackedMilli: 8000}, 0, 0},
		{Result{}, 0, 0},
	}
	for _, tc := range tests {
		if got := tc.res.MinUnallocatedPct(); math.Abs(got-tc.minPct) > 1e-9 {
			t.Errorf("%+v: MinUnallocatedPct = %v, want %v", tc.res, got, tc.minPct)
		}
		if got := tc.res.PackedUnallocatedPct(); math.Abs(got-tc.pack) > 1e-9 {
			t.Errorf("%+v: PackedUnallocatedPct = %v, want %v", tc.res, got, tc.pack)
		}
	}
}

func TestComputeRejectsInvalidInput(t *testing.T) {
	nodes, pods := named([]placement.Node{gpuNode(1, 1000, 1000, "A")}, []placement.Pod{gpuPod(-1, 0, 1, 500)})
	if _, err := Compute(nodes, pods); err == nil || !strings.Contains(err.Error(), "bound: pod 0") {
		t.Errorf("Compute with a negative CPU request: err = %v, want a pod 0 error", err)
	}
	nodes[0].Model = ""
	if _, err := Compute(nodes, nil); err == nil || !strings.Contains(err.Error(), "bound: node 0") {
		t.Errorf("Compute with a GPU node without model: err = %v, want a node 0 error", err)
	}
}
