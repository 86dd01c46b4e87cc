package discover

import (
	"strconv"
	"testing"
)

func itoa(i int) string { return strconv.Itoa(i) }

func TestModelName(t *testing.T) {
	tests := []struct {
		product   string
		memoryMiB int64
		want      string
	}{
		{"NVIDIA H100 80GB HBM3", 81559, "H100-80GB"},
		{"NVIDIA H100 PCIe", 81559, "H100-80GB"},
		{"NVIDIA H100 NVL", 95830, "H100-NVL"}, // 94 GB: its own model, not the H100-80GB
		{"NVIDIA H200", 143771, "H200-141GB"},
		{"NVIDIA H200 141GB HBM3e", 143771, "H200-141GB"},
		{"NVIDIA B200", 183359, "B200-180GB"},
		{"NVIDIA A100-SXM4-80GB", 81920, "A100-80GB"},
		{"NVIDIA A100-SXM4-40GB", 40536, "A100-40GB"},
		{"NVIDIA A100-PCIE-40GB", 40536, "A100-40GB"},
		{"NVIDIA A100 80GB PCIe", 81920, "A100-80GB"},
		{"NVIDIA A100-PCIE", 40536, "A100-40GB"}, // the size comes from the memory
		{"NVIDIA A30", 24576, "A30"},
		{"NVIDIA A30-PCIE-24GB", 24576, "A30"},
		{"NVIDIA L4", 23034, "L4"},
		{"NVIDIA L40S", 46068, "L40S"},
		{"NVIDIA L40", 46068, "L40"},
		{"NVIDIA A10G", 23028, "A10G"},
		{"NVIDIA A10", 23028, "A10"},
		{"Tesla T4", 15360, "T4"},
		{"Tesla V100-SXM2-16GB", 16160, "V100-16GB"},
		{"Tesla V100-SXM2-32GB", 32510, "V100-32GB"},
		{"Tesla P100-PCIE-16GB", 16280, "P100"},
		{"NVIDIA GH200 480GB", 97871, "GH200-96GB"},
		{"NVIDIA GeForce RTX 4090", 24564, ""},
		{"NVIDIA H100 80GB HBM3", 0, "H100-80GB"}, // memory unknown: trust the name
		{"", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.product, func(t *testing.T) {
			if got := ModelName(tt.product, tt.memoryMiB); got != tt.want {
				t.Errorf("ModelName(%q, %d) = %q, want %q", tt.product, tt.memoryMiB, got, tt.want)
			}
		})
	}
}

func TestMIGProfileName(t *testing.T) {
	tests := []struct {
		model     string
		compute   int
		memoryMiB int64
		want      string
	}{
		{"H100-80GB", 1, 9856, "1g.10gb"},
		{"H100-80GB", 1, 19968, "1g.20gb"},
		{"H100-80GB", 2, 19968, "2g.20gb"},
		{"H100-80GB", 3, 40192, "3g.40gb"},
		{"H100-80GB", 7, 80384, "7g.80gb"},
		{"A100-40GB", 1, 4864, "1g.5gb"},
		{"A30", 2, 11968, "2g.12gb"},
		{"H200-141GB", 1, 18176, "1g.18gb"},
		{"", 3, 46080, "3g.45gb"},          // model unknown: named from the numbers
		{"H100-80GB", 5, 40960, "5g.40gb"}, // no such profile in the catalog
	}
	for _, tt := range tests {
		if got := migProfileName(tt.model, tt.compute, tt.memoryMiB); got != tt.want {
			t.Errorf("migProfileName(%q, %d, %d) = %q, want %q", tt.model, tt.compute, tt.memoryMiB, got, tt.want)
		}
	}
}
