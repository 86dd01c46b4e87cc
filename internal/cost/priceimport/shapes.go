package priceimport

import "strings"

// shape is what an instance has of GPUs: corral's model, its form and
// how many.
type shape struct {
	GPU  string
	Form string
	GPUs int
}

// awsShapes are the GPU instances of EC2, from the accelerated computing
// instance table of https://aws.amazon.com/ec2/instance-types/ (P and G
// families).
var awsShapes = map[string]shape{
	"p6-b200.48xlarge": {"B200", "SXM", 8},
	"p5en.48xlarge":    {"H200-141GB", "SXM", 8},
	"p5e.48xlarge":     {"H200-141GB", "SXM", 8},
	"p5.48xlarge":      {"H100-80GB", "SXM", 8},
	"p5.4xlarge":       {"H100-80GB", "SXM", 1},
	"p4de.24xlarge":    {"A100-80GB", "SXM", 8},
	"p4d.24xlarge":     {"A100-40GB", "SXM", 8},
	"g6e.xlarge":       {"L40S", "PCIe", 1},
	"g6e.12xlarge":     {"L40S", "PCIe", 4},
	"g6e.48xlarge":     {"L40S", "PCIe", 8},
	"g6.xlarge":        {"L4", "PCIe", 1},
	"g6.12xlarge":      {"L4", "PCIe", 4},
	"g6.48xlarge":      {"L4", "PCIe", 8},
	"g5.xlarge":        {"A10G", "PCIe", 1},
	"g5.12xlarge":      {"A10G", "PCIe", 4},
	"g5.48xlarge":      {"A10G", "PCIe", 8},
	"g4dn.xlarge":      {"T4", "PCIe", 1},
	"g4dn.12xlarge":    {"T4", "PCIe", 4},
}

// azureShapes are the GPU sizes of Azure, from the GPU-optimized sizes of
// https://learn.microsoft.com/azure/virtual-machines/sizes/overview (ND
// and NC families), by armSkuName.
var azureShapes = map[string]shape{
	"Standard_ND96isr_H200_v5":   {"H200-141GB", "SXM", 8},
	"Standard_ND96isr_H100_v5":   {"H100-80GB", "SXM", 8},
	"Standard_ND96asr_v4":        {"A100-40GB", "SXM", 8},
	"Standard_ND96amsr_A100_v4":  {"A100-80GB", "SXM", 8},
	"Standard_NC24ads_A100_v4":   {"A100-80GB", "PCIe", 1},
	"Standard_NC48ads_A100_v4":   {"A100-80GB", "PCIe", 2},
	"Standard_NC96ads_A100_v4":   {"A100-80GB", "PCIe", 4},
	"Standard_NC40ads_H100_v5":   {"H100-NVL", "PCIe", 1},
	"Standard_NC80adis_H100_v5":  {"H100-NVL", "PCIe", 2},
	"Standard_NC4as_T4_v3":       {"T4", "PCIe", 1},
	"Standard_ND96is_MI300X_v5":  {"MI300X", "OAM", 8},
	"Standard_ND96isr_MI300X_v5": {"MI300X", "OAM", 8},
}

// gcpGPUs are the GPU SKUs of Compute Engine, matched by the words of
// their description ("Nvidia H100 80GB GPU running in Americas"), from
// https://cloud.google.com/compute/gpus-pricing; the first match wins, so
// longer names come first.
var gcpGPUs = []struct{ words, gpu, form string }{
	{"H200", "H200-141GB", "SXM"},
	{"H100 80GB Mega", "H100-80GB", "SXM"},
	{"H100 80GB", "H100-80GB", "SXM"},
	{"A100 80GB", "A100-80GB", "SXM"},
	{"A100", "A100-40GB", "SXM"},
	{"B200", "B200", "SXM"},
	{"L4", "L4", "PCIe"},
	{"T4", "T4", "PCIe"},
	{"V100", "V100-16GB", "SXM"},
	{"P100", "P100", "PCIe"},
}

// gcpGPU finds the GPU a GCP SKU description names.
func gcpGPU(description string) (shape, string, bool) {
	d := strings.ToUpper(description)
	for _, g := range gcpGPUs {
		if strings.Contains(d, strings.ToUpper(" "+g.words+" ")) {
			return shape{GPU: g.gpu, Form: g.form, GPUs: 1}, "gpu-" + strings.ToLower(strings.ReplaceAll(g.words, " ", "-")), true
		}
	}
	return shape{}, "", false
}
