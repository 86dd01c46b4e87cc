package gpu

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestCatalogModels(t *testing.T) {
	// Sorted by name, byte-wise ("A100-40GB" < "A10G").
	want := []struct {
		name         string
		mib          int64
		mem, compute int
		profiles     string
	}{
		{"A10", 24576, 0, 0, ""},
		{"A100-40GB", 40960, 8, 7, "1g.5gb 1g.10gb 2g.10gb 3g.20gb 4g.20gb 7g.40gb"},
		{"A100-80GB", 81920, 8, 7, "1g.10gb 1g.20gb 2g.20gb 3g.40gb 4g.40gb 7g.80gb"},
		{"A10G", 24576, 0, 0, ""},
		{"A30", 24576, 4, 4, "1g.6gb 2g.12gb 4g.24gb"},
		{"B200-180GB", 184320, 8, 7, "1g.23gb 1g.45gb 2g.45gb 3g.90gb 4g.90gb 7g.180gb"},
		{"G2", 0, 0, 0, ""},
		{"G3", 0, 0, 0, ""},
		{"GB200-186GB", 190464, 8, 7, "1g.23gb 1g.47gb 2g.47gb 3g.93gb 4g.93gb 7g.186gb"},
		{"GH200-96GB", 98304, 8, 7, "1g.12gb 1g.24gb 2g.24gb 3g.48gb 4g.48gb 7g.96gb"},
		{"H100-80GB", 81920, 8, 7, "1g.10gb 1g.20gb 2g.20gb 3g.40gb 4g.40gb 7g.80gb"},
		{"H100-NVL", 96256, 8, 7, "1g.12gb 1g.24gb 2g.24gb 3g.47gb 4g.47gb 7g.94gb"},
		{"H200-141GB", 144384, 8, 7, "1g.18gb 1g.35gb 2g.35gb 3g.71gb 4g.71gb 7g.141gb"},
		{"H200-NVL", 144384, 8, 7, "1g.18gb 1g.35gb 2g.35gb 3g.71gb 4g.71gb 7g.141gb"},
		{"L4", 24576, 0, 0, ""},
		{"L40", 49152, 0, 0, ""},
		{"L40S", 49152, 0, 0, ""},
		{"MI300X", 196608, 0, 0, ""},
		{"MI325X", 262144, 0, 0, ""},
		{"P100", 16384, 0, 0, ""},
		{"RTX-6000-Ada", 49152, 0, 0, ""},
		{"T4", 16384, 0, 0, ""},
		{"V100-16GB", 16384, 0, 0, ""},
		{"V100-32GB", 32768, 0, 0, ""},
	}
	got := Models()
	if len(got) != len(want) {
		t.Fatalf("Models() has %d models, want %d", len(got), len(want))
	}
	for i, w := range want {
		m := got[i]
		names := strings.Join(m.profileNames(), " ")
		if m.Name != w.name || m.MemoryMiB != w.mib || m.MemorySlices != w.mem ||
			m.ComputeSlices != w.compute || names != w.profiles || m.MIG != (w.profiles != "") {
			t.Errorf("model %d = %s %d MiB MIG=%v %d/%d slices [%s], want %s %d MiB %d/%d slices [%s]",
				i, m.Name, m.MemoryMiB, m.MIG, m.MemorySlices, m.ComputeSlices, names,
				w.name, w.mib, w.mem, w.compute, w.profiles)
		}
	}
}

func TestModelsReturnsACopy(t *testing.T) {
	a := Models()
	a[0] = nil
	if Models()[0] == nil {
		t.Fatal("changing Models()'s result changed the catalog")
	}
}

func TestCatalogSlotRules(t *testing.T) {
	// compute, memory slices and starts of each profile, smallest first.
	eight := "1/1/[0 1 2 3 4 5 6] 1/2/[0 2 4 6] 2/2/[0 2 4] 3/4/[0 4] 4/4/[0] 7/8/[0]"
	want := map[string]string{
		"A100-40GB":   eight,
		"A100-80GB":   eight,
		"H100-80GB":   eight,
		"H200-141GB":  eight,
		"B200-180GB":  eight,
		"H100-NVL":    eight,
		"GH200-96GB":  eight,
		"H200-NVL":    eight,
		"GB200-186GB": eight,
		"A30":         "1/1/[0 1 2 3] 2/2/[0 2] 4/4/[0]",
	}
	for _, m := range Models() {
		var rules []string
		for _, p := range m.Profiles {
			rules = append(rules, fmt.Sprintf("%d/%d/%v", p.Compute, p.Slices, p.Starts))
		}
		if got := strings.Join(rules, " "); got != want[m.Name] {
			t.Errorf("%s slot rules = %q, want %q", m.Name, got, want[m.Name])
		}
	}
}

func TestProfileMemory(t *testing.T) {
	tests := []struct {
		model, profile string
		mib            int64
	}{
		{"A100-40GB", "1g.5gb", 5 * 1024},
		{"H100-80GB", "3g.40gb", 40 * 1024},
		{"H200-141GB", "7g.141gb", 141 * 1024},
		{"B200-180GB", "1g.23gb", 23 * 1024},
		{"A30", "2g.12gb", 12 * 1024},
	}
	for _, tt := range tests {
		m := mustLookup(t, tt.model)
		if got := m.Profiles[mustProfile(t, m, tt.profile)].MemoryMiB; got != tt.mib {
			t.Errorf("%s %s memory = %d MiB, want %d", tt.model, tt.profile, got, tt.mib)
		}
	}
}

// TestCatalogInvariants checks what the layout engine relies on: starts
// ascending and inside the GPU, profiles smallest first, and no profile
// larger than its GPU.
func TestCatalogInvariants(t *testing.T) {
	for _, m := range append(Models(), tight) {
		if !m.MIG {
			if m.Profiles != nil || m.MemorySlices != 0 || m.ComputeSlices != 0 {
				t.Errorf("%s is not MIG but has MIG slices or profiles", m.Name)
			}
			continue
		}
		for i, p := range m.Profiles {
			if !slices.IsSorted(p.Starts) || p.Starts[0] < 0 || p.Starts[len(p.Starts)-1]+p.Slices > m.MemorySlices {
				t.Errorf("%s %s: starts %v for %d slices do not fit %d slices ascending", m.Name, p.Name, p.Starts, p.Slices, m.MemorySlices)
			}
			if p.Compute > m.ComputeSlices || p.MemoryMiB > m.MemoryMiB {
				t.Errorf("%s %s is larger than the GPU", m.Name, p.Name)
			}
			if i > 0 && (p.Compute < m.Profiles[i-1].Compute || p.Slices < m.Profiles[i-1].Slices) {
				t.Errorf("%s %s is smaller than the profile before it", m.Name, p.Name)
			}
		}
	}
}

// TestComputeBudgetNeverBindsInCatalog enumerates every set of catalog
// instances with valid, disjoint memory slices and checks that their compute
// fits the GPU's: NVIDIA's start rules already keep it in budget (slice 7
// can only be reached by 1g.20gb, 3g or 7g, whose compute is below their
// memory slices). So Validate's compute check is exercised with the made-up
// model tight instead.
func TestComputeBudgetNeverBindsInCatalog(t *testing.T) {
	for _, m := range Models() {
		if !m.MIG {
			continue
		}
		layouts := 0
		var walk func(held uint32, compute, from int)
		walk = func(held uint32, compute, from int) {
			layouts++
			if compute > m.ComputeSlices {
				t.Errorf("%s: memory-valid instances use %d compute slices", m.Name, compute)
			}
			for s := from; s < m.MemorySlices; s++ {
				for _, p := range m.Profiles {
					if mask := span(p, s); slices.Contains(p.Starts, s) && held&mask == 0 {
						walk(held|mask, compute+p.Compute, s+1)
					}
				}
			}
		}
		walk(0, 0, 0)
		t.Logf("%s: %d memory-valid layouts", m.Name, layouts)
	}
}

func TestLookup(t *testing.T) {
	tests := []struct{ in, want string }{
		{"H100-80GB", "H100-80GB"},
		{"h100-80gb", "H100-80GB"},
		{"H100", "H100-80GB"},
		{"h200", "H200-141GB"},
		{"B200", "B200-180GB"},
		{"A100", "A100-80GB"},
		{"V100", "V100-32GB"},
		{" l40s ", "L40S"},
		{"a30", "A30"},
		// GPU feature discovery product strings.
		{"NVIDIA-H100-80GB-HBM3", "H100-80GB"},
		{"NVIDIA-H100-PCIe", "H100-80GB"},
		{"NVIDIA-A100-SXM4-40GB", "A100-40GB"},
		{"NVIDIA-A100-SXM4-80GB", "A100-80GB"},
		{"NVIDIA A100-PCIE-40GB", "A100-40GB"},
		{"NVIDIA-H200", "H200-141GB"},
		{"NVIDIA-B200", "B200-180GB"},
		{"Tesla-V100-SXM2-16GB", "V100-16GB"},
		{"Tesla-T4", "T4"},
		{"NVIDIA-A10G", "A10G"},
		{"NVIDIA-L4", "L4"},
	}
	for _, tt := range tests {
		m, err := Lookup(tt.in)
		if err != nil {
			t.Errorf("Lookup(%q): %v", tt.in, err)
			continue
		}
		if m.Name != tt.want {
			t.Errorf("Lookup(%q) = %s, want %s", tt.in, m.Name, tt.want)
		}
		if m != mustLookup(t, tt.want) {
			t.Errorf("Lookup(%q) is not the catalog's %s", tt.in, tt.want)
		}
	}
}

func TestLookupUnknown(t *testing.T) {
	const known = "(known: A10, A100-40GB, A100-80GB, A10G, A30, B200-180GB, G2, G3, GB200-186GB, GH200-96GB, H100-80GB, " +
		"H100-NVL, H200-141GB, H200-NVL, L4, L40, L40S, MI300X, MI325X, P100, RTX-6000-Ada, T4, V100-16GB, V100-32GB; " +
		"aliases: A100=A100-80GB, AMD-INSTINCT-MI300X=MI300X, AMD-INSTINCT-MI325X=MI325X, B200=B200-180GB, " +
		"GB200=GB200-186GB, GH200-480GB=GH200-96GB, GH200=GH200-96GB, H100-94GB=H100-NVL, H100=H100-80GB, " +
		"H200=H200-141GB, INSTINCT-MI300X=MI300X, INSTINCT-MI325X=MI325X, RTX-6000-ADA-GENERATION=RTX-6000-Ada, " +
		"V100=V100-32GB, V100M16=V100-16GB, V100M32=V100-32GB)"
	// A MIG product string names a slice, not a model.
	for _, in := range []string{"", "X100", "NVIDIA", "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb"} {
		m, err := Lookup(in)
		if err == nil {
			t.Errorf("Lookup(%q) = %s, want an error", in, m.Name)
			continue
		}
		if want := fmt.Sprintf("gpu: unknown GPU model %q %s", in, known); err.Error() != want {
			t.Errorf("Lookup(%q) error:\n got %s\nwant %s", in, err, want)
		}
	}
}

// The H100 NVL (94 GB) is a model of its own, never the H100-80GB; the
// H100 PCIe is the H100-80GB; AMD models are advertised as amd.com/gpu.
func TestNewerModelsByProductName(t *testing.T) {
	tests := []struct{ in, want, resource string }{
		{"NVIDIA-H100-NVL", "H100-NVL", "nvidia.com/gpu"},
		{"H100-94GB", "H100-NVL", "nvidia.com/gpu"},
		{"NVIDIA H100 PCIe", "H100-80GB", "nvidia.com/gpu"},
		{"NVIDIA-H200-NVL", "H200-NVL", "nvidia.com/gpu"},
		{"NVIDIA-GH200-480GB", "GH200-96GB", "nvidia.com/gpu"},
		{"NVIDIA-GB200", "GB200-186GB", "nvidia.com/gpu"},
		{"NVIDIA-L40", "L40", "nvidia.com/gpu"},
		{"NVIDIA-RTX-6000-Ada-Generation", "RTX-6000-Ada", "nvidia.com/gpu"},
		{"AMD_Instinct_MI300X", "MI300X", "amd.com/gpu"},
		{"AMD_Instinct_MI325X", "MI325X", "amd.com/gpu"},
	}
	for _, tt := range tests {
		m, err := Lookup(tt.in)
		if err != nil || m.Name != tt.want || m.ResourceName() != tt.resource {
			t.Errorf("Lookup(%q) = %v %v, want %s (%s)", tt.in, m, err, tt.want, tt.resource)
		}
	}
}

func TestProfileIndex(t *testing.T) {
	h100 := mustLookup(t, "H100")
	tests := []struct {
		model   *Model
		name    string
		want    int
		wantErr string
	}{
		{h100, "1g.10gb", 0, ""},
		{h100, "7G.80GB", 5, ""},
		{mustLookup(t, "A30"), "4g.24gb", 2, ""},
		{h100, "1g.5gb", -1, `gpu: H100-80GB has no MIG profile "1g.5gb" (valid: 1g.10gb, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb)`},
		{mustLookup(t, "L4"), "1g.10gb", -1, `gpu: L4 does not support MIG, so has no profile "1g.10gb"`},
	}
	for _, tt := range tests {
		got, err := tt.model.ProfileIndex(tt.name)
		errText := ""
		if err != nil {
			errText = err.Error()
		}
		if got != tt.want || errText != tt.wantErr {
			t.Errorf("%s.ProfileIndex(%q) = %d, %q; want %d, %q", tt.model.Name, tt.name, got, errText, tt.want, tt.wantErr)
		}
	}
}
