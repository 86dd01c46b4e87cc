package main

import (
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// A reserved commitment of a discount kind (reserved-1y: Savings Plans,
// reserved instances) pays, while reserved nodes are away, for on-demand
// cards of the model; a capacity commitment (a Capacity Block) covers
// nothing. Both at the same rate (examples/cost/discount.yaml sets the 1y
// rate to the block's), on the same replay, the discount costs less by
// the on-demand price of the hours it covered: the commitment was paid
// either way.
func TestSimReservedDiscountCoversOnDemand(t *testing.T) {
	type bill struct {
		Costs map[string]struct {
			Bill struct {
				Total struct {
					CostUSD     float64 `json:"cost_usd"`
					CoveredGPUH float64 `json:"covered_gpu_hours"`
				} `json:"total"`
			} `json:"bill"`
		} `json:"costs"`
	}
	run := func(term string) (bill, string) {
		path := filepath.Join(t.TempDir(), "sim.json")
		out, errOut, code := runCLI(t, "sim", "--fleet", "testdata/reserved-and-on-demand.yaml", "--autoscale", "0:", "--days", "3", "--load", "0.5",
			"--policies", "corral", "--reserved-term", term, "--prices", "../../examples/cost/discount.yaml", "--now", "2026-12-01", "--json", path)
		if code != 0 {
			t.Fatalf("--reserved-term %s: exit %d: %s", term, code, errOut)
		}
		var b bill
		readJSONFile(t, path, &b)
		return b, out
	}
	discount, text := run("1y")
	block, blockText := run("block")
	d, c := discount.Costs["corral"].Bill.Total, block.Costs["corral"].Bill.Total
	if d.CoveredGPUH <= 0 || c.CoveredGPUH != 0 {
		t.Fatalf("covered %g GPU-h by the discount, %g by the block; want some, and none", d.CoveredGPUH, c.CoveredGPUH)
	}
	if !strings.Contains(text, "the reserved commitment is a discount") || strings.Contains(blockText, "is a discount") {
		t.Errorf("the note on covered hours: want it with 1y only; 1y:\n%s", text)
	}
	const onDemand = 55.04 / 8 // the catalog's p5 on-demand, per GPU-hour
	if want := c.CostUSD - d.CoveredGPUH*onDemand; math.Abs(d.CostUSD-want) > 1e-6*want {
		t.Errorf("discount bill %.0f USD, block bill %.0f with %.0f GPU-h covered; want %.0f", d.CostUSD, c.CostUSD, d.CoveredGPUH, want)
	}
}
