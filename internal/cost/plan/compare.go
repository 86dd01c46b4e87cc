package plan

import "github.com/corral-sched/corral/internal/cost/price"

// Output is the document corral plan writes as JSON and embeds in its HTML
// report: the plan, and with an unpacked demand its plan and the
// differences.
type Output struct {
	Version        int             `json:"version"`
	Demand         string          `json:"demand"`
	Plan           *Plan           `json:"plan"`
	UnpackedDemand string          `json:"unpacked_demand,omitempty"`
	Unpacked       *Plan           `json:"unpacked,omitempty"`
	Differences    []Difference    `json:"differences,omitempty"`
	Unknown        []price.Unknown `json:"prices_not_known"`
}

// Difference is what packing changes in one model's plan.
type Difference struct {
	Model            string  `json:"gpu_model"`
	PackedLevel      int     `json:"packed_committed_gpus"`
	UnpackedLevel    int     `json:"unpacked_committed_gpus"`
	PackedCostUSD    float64 `json:"packed_cost_usd"`
	UnpackedCostUSD  float64 `json:"unpacked_cost_usd"`
	SavingUSD        float64 `json:"saving_usd"`
	LockedInWasteUSD float64 `json:"locked_in_waste_usd"`
}

// Comparison sets the plan for packed demand beside the plan for the same
// work unpacked.
type Comparison struct {
	Packed      *Plan        `json:"packed"`
	Unpacked    *Plan        `json:"unpacked"`
	Differences []Difference `json:"differences"`
}

// Compare lines up two plans model by model. LockedInWasteUSD is what
// committing at the unpacked level costs once the work is packed, above the
// packed plan: the waste a commitment bought before packing locks in.
func Compare(packed, unpacked *Plan, packedDemand *Demand, r map[string]Rates) *Comparison {
	c := &Comparison{Packed: packed, Unpacked: unpacked}
	for _, pm := range packed.Models {
		for _, um := range unpacked.Models {
			if um.Model != pm.Model {
				continue
			}
			d := Difference{Model: pm.Model, PackedLevel: pm.Committed, UnpackedLevel: um.Committed,
				PackedCostUSD: pm.CostUSD, UnpackedCostUSD: um.CostUSD, SavingUSD: um.CostUSD - pm.CostUSD}
			if s := packedDemand.Model(pm.Model); s != nil {
				if rates, ok := r[pm.Model]; ok {
					d.LockedInWasteUSD = Cost(s.GPUs, float64(um.Committed), rates) - pm.CostUSD
				}
			}
			c.Differences = append(c.Differences, d)
		}
	}
	return c
}

// RatesOf returns the rates a plan used, by model.
func RatesOf(p *Plan) map[string]Rates {
	out := map[string]Rates{}
	for _, m := range p.Models {
		r := Rates{Committed: m.Prices.Committed.USDPerGPUHour, OnDemand: m.Prices.OnDemand.USDPerGPUHour, SpotShare: p.SpotShare}
		if m.Prices.Spot != nil {
			r.Spot = m.Prices.Spot.USDPerGPUHour
		}
		out[m.Model] = r
	}
	return out
}
