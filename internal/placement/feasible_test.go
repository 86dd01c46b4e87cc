package placement

import (
	"testing"
)

func TestCheck(t *testing.T) {
	nodes := []Node{
		gpuNode("g", 16000, 4, "A"),
		{Name: "cpu", CPUMilli: 64000, MemoryMiB: 1 << 20},
		{Name: "small-mem", CPUMilli: 64000, MemoryMiB: 100, GPUs: 1, Model: "A"},
	}
	c := withLeft(nodes, []int64{1000, 1000, 600, 0})
	cases := []struct {
		name string
		node int
		pod  *Pod
		want Reason
	}{
		{"sharing pod fits on a partly used GPU", 0, share(1000, 600), Fits},
		{"sharing pod needs one GPU with enough left", 0, share(1000, 1000), Fits},
		{"two whole GPUs fit on two free GPUs", 0, whole(1000, 2), Fits},
		{"three whole GPUs need three fully free GPUs", 0, whole(1000, 3), ReasonGPUs},
		{"cpu is checked first", 0, whole(17000, 1), ReasonCPU},
		{"model outside the allowed set", 0, share(1000, 100, "B", "C"), ReasonModel},
		{"model inside the allowed set", 0, share(1000, 100, "C", "A"), Fits},
		{"CPU-only pod may use a GPU node", 0, cpuOnly(16000), Fits},
		{"CPU-only pod on a CPU node", 1, cpuOnly(1000), Fits},
		{"GPU pod on a CPU node", 1, share(1000, 100), ReasonNoGPU},
		{"memory", 2, &Pod{Name: "m", CPUMilli: 1, MemoryMiB: 101}, ReasonMemory},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := c.Check(tc.node, tc.pod); got != tc.want {
				t.Errorf("Check = %q, want %q", got, tc.want)
			}
		})
	}
	full := withLeft(nodes, []int64{500, 400, 300, 0})
	if got := full.Check(0, share(1, 600)); got != ReasonGPUShare {
		t.Errorf("no GPU with 600 left: Check = %q, want %q", got, ReasonGPUShare)
	}
}

func TestBestFitGPUs(t *testing.T) {
	cases := []struct {
		name string
		left []int64
		pod  *Pod
		want []int
	}{
		{"sharing pod takes the fitting GPU with least left", []int64{1000, 700, 400, 650}, share(1, 300), []int{2}},
		{"ties go to the lowest index", []int64{1000, 500, 500}, share(1, 500), []int{1}},
		{"whole pod takes lowest-index free GPUs", []int64{500, 1000, 1000, 1000}, whole(1, 2), []int{1, 2}},
		{"CPU-only pod takes none", []int64{1000}, cpuOnly(1), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := bestFitGPUs(tc.left, tc.pod)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
}

func TestBindUpdatesState(t *testing.T) {
	c := NewCluster([]Node{gpuNode("n", 8000, 2, "A")})
	gen := c.Generation(0)
	c.Bind(*share(3000, 250), Choice{Node: 0, GPUs: []int{1}})
	if c.CPULeft[0] != 5000 || c.GPULeft[0][1] != 750 || c.UsedGPUMilli() != 250 || c.IdleMilli(0) != 1750 {
		t.Fatalf("after bind: cpu %d, gpus %v, used %d", c.CPULeft[0], c.GPULeft[0], c.UsedGPUMilli())
	}
	if c.CPULeftMilli() != 5000 {
		t.Errorf("cluster CPU left %d, want 5000", c.CPULeftMilli())
	}
	if c.Generation(0) == gen {
		t.Error("bind did not change the node's generation")
	}
	if c.FreeGPUs(0) != 1 {
		t.Errorf("free GPUs %d, want 1", c.FreeGPUs(0))
	}
	defer func() {
		if recover() == nil {
			t.Error("binding past a GPU's milli did not panic")
		}
	}()
	c.Bind(*share(1, 800), Choice{Node: 0, GPUs: []int{1}})
}
