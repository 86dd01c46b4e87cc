package discover

import (
	"fmt"
	"math"
	"strings"

	"github.com/corral-sched/corral/internal/gpu"
)

// memoryTolerance is how far a GPU's reported memory may be from its
// catalog model's: NVML reports the usable memory, a little less (H100:
// 81559 of 81920 MiB) or more than the round figure in the name.
const memoryTolerance = 0.1

// ModelName maps an NVML product name to corral's catalog name: "NVIDIA
// H100 80GB HBM3" to "H100-80GB", "Tesla T4" to "T4". memoryMiB, when
// known (> 0), picks the right size of a family whose product name does
// not say it ("NVIDIA A100-PCIE" with 40 GB is an A100-40GB) and rejects a
// match of the wrong size ("NVIDIA H100 NVL", 94 GB, is no H100-80GB). It
// returns "" for products the catalog does not know.
func ModelName(product string, memoryMiB int64) string {
	for _, m := range candidates(product) {
		if memoryMiB <= 0 || sizeMatches(m.MemoryMiB, memoryMiB) {
			return m.Name
		}
	}
	return ""
}

// candidates are the catalog models a product may be, best first: the
// model the catalog's own lookup finds, then every size of the product's
// family (its first word, "A100").
func candidates(product string) []*gpu.Model {
	var models []*gpu.Model
	if m, err := gpu.Lookup(product); err == nil {
		models = append(models, m)
	}
	words := strings.Fields(strings.NewReplacer("-", " ", "_", " ").Replace(strings.ToUpper(product)))
	if len(words) > 1 && (words[0] == "NVIDIA" || words[0] == "TESLA") {
		words = words[1:]
	}
	if len(words) == 0 {
		return models
	}
	family := words[0]
	for _, m := range gpu.Models() {
		name := strings.ToUpper(m.Name)
		if name == family || strings.HasPrefix(name, family+"-") {
			models = append(models, m)
		}
	}
	return models
}

func sizeMatches(catalogMiB, reportedMiB int64) bool {
	if catalogMiB == 0 {
		return false
	}
	return math.Abs(float64(reportedMiB-catalogMiB)) <= memoryTolerance*float64(catalogMiB)
}

// migProfileName names a GPU instance profile the way NVIDIA does,
// "<compute slices>g.<GB>gb", taking the name from the catalog model's
// profiles when one has the same compute slices and about the same
// memory. model may be "" (unknown).
func migProfileName(model string, computeSlices int, memoryMiB int64) string {
	if m, err := gpu.Lookup(model); err == nil && m.MIG {
		best, bestDiff := "", math.Inf(1)
		for _, p := range m.Profiles {
			diff := math.Abs(float64(p.MemoryMiB - memoryMiB))
			if p.Compute == computeSlices && diff < bestDiff && diff <= memoryTolerance*float64(p.MemoryMiB) {
				best, bestDiff = p.Name, diff
			}
		}
		if best != "" {
			return best
		}
	}
	return fmt.Sprintf("%dg.%dgb", computeSlices, int64(math.Round(float64(memoryMiB)/1024)))
}
