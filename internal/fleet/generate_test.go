package fleet

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestSyntheticDeterministic(t *testing.T) {
	s := Synthetic{Nodes: 1000, GPUsPerNode: 4, NodesPerRack: 7}
	a, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two builds of one Synthetic differ")
	}
}

func TestSyntheticShape(t *testing.T) {
	tests := []struct {
		name    string
		s       Synthetic
		domains []int // zones, blocks, racks
		model   string
		gpus    int
	}{
		{"defaults", Synthetic{Nodes: 10000}, []int{5, 20, 625}, "H100-80GB", 80000},
		{"one node", Synthetic{Nodes: 1, GPUsPerNode: 2}, []int{1, 1, 1}, "H100-80GB", 2},
		{"full zones", Synthetic{Nodes: 16 * 32 * 4 * 2}, []int{2, 8, 256}, "H100-80GB", 16 * 32 * 4 * 2 * 8},
		{"small racks", Synthetic{Nodes: 100, NodesPerRack: 10, RacksPerBlock: 2, BlocksPerZone: 2}, []int{3, 5, 10}, "H100-80GB", 800},
		{"alias", Synthetic{Nodes: 18, GPUsPerNode: 4, GPUModel: "b200", NodesPerRack: 18}, []int{1, 1, 1}, "B200-180GB", 72},
		{"dynamic MIG", Synthetic{Nodes: 3, GPUModel: "A100-40GB", MIG: MIGDynamic}, []int{1, 1, 1}, "A100-40GB", 24},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := tt.s.Build()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(f.Levels, []string{"zone", "block", "rack"}) || len(f.Nodes) != tt.s.Nodes {
				t.Fatalf("levels %v, %d nodes", f.Levels, len(f.Nodes))
			}
			if got := domainCounts(f); !slices.Equal(got, tt.domains) {
				t.Errorf("zones, blocks, racks %v, want %v", got, tt.domains)
			}
			if f.GPUs() != tt.gpus {
				t.Errorf("%d GPUs, want %d", f.GPUs(), tt.gpus)
			}
			last := f.Nodes[len(f.Nodes)-1]
			if last.GPUModel != tt.model || last.MIG != tt.s.MIG || len(last.NVLink) != 1 || len(last.NVLink[0]) != last.GPUs {
				t.Errorf("last node %+v", last)
			}
			checkContiguous(t, f, f.Sorted())
		})
	}
}

func TestSyntheticDefaults(t *testing.T) {
	f, err := Synthetic{Nodes: 17}.Build()
	if err != nil {
		t.Fatal(err)
	}
	n := f.Nodes[16]
	if n.Name != "synthetic-0016" || n.Path() != "zone-0/block-0/rack-1" || n.GPUs != 8 ||
		n.CPUMilli != 192000 || n.MemoryMiB != 2<<20 || n.Pool != SyntheticPool {
		t.Errorf("node 16: %+v", n)
	}
	want := [][]int{{0, 1}, {2, 3}, {4, 5}, {6, 7}}
	if !reflect.DeepEqual(n.PCIe, want) || !reflect.DeepEqual(n.NUMA, [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}}) {
		t.Errorf("islands pcie %v numa %v", n.PCIe, n.NUMA)
	}
}

func TestSyntheticErrors(t *testing.T) {
	tests := []struct {
		s    Synthetic
		want string
	}{
		{Synthetic{}, "0 nodes, want at least 1"},
		{Synthetic{Nodes: 4, NodesPerRack: -1}, "negative size"},
		{Synthetic{Nodes: 4, GPUModel: "H10"}, `unknown GPU model "H10"`},
		{Synthetic{Nodes: 4, GPUModel: "L4", MIG: MIGDynamic}, "does not support MIG"},
		{Synthetic{Nodes: 4, MIG: MIGStatic}, "static MIG mode needs a layout"},
	}
	for _, tt := range tests {
		_, err := tt.s.Build()
		if err == nil || !strings.HasPrefix(err.Error(), "synthetic fleet: ") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: error %v, want %q", tt.s, err, tt.want)
		}
	}
}

// TestNodesShareNoSlices checks that changing one node's slices leaves the
// others alone.
func TestNodesShareNoSlices(t *testing.T) {
	f, err := Synthetic{Nodes: 2}.Build()
	if err != nil {
		t.Fatal(err)
	}
	a, b := &f.Nodes[0], &f.Nodes[1]
	a.NVLink[0][0] = 99
	a.PCIe[0] = append(a.PCIe[0], 99)
	_ = append(a.Domains, "extra")
	a.Domains[0] = "changed"
	if b.NVLink[0][0] != 0 || len(b.PCIe[0]) != 2 || b.Domains[0] != "zone-0" || f.Nodes[1].Path() != "zone-0/block-0/rack-0" {
		t.Errorf("node 1 changed with node 0: %+v", b)
	}
}

func TestSyntheticBuildTime(t *testing.T) {
	start := time.Now()
	if _, err := (Synthetic{Nodes: 10000, GPUsPerNode: 8}).Build(); err != nil {
		t.Fatal(err)
	}
	// Well under a second even under the race detector.
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("10,000 nodes took %v", d)
	}
}

func BenchmarkSyntheticBuild(b *testing.B) {
	s := Synthetic{Nodes: 10000, GPUsPerNode: 8}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Build(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(s.Nodes*b.N)/b.Elapsed().Seconds(), "nodes/s")
}
