package costexample

import (
	"fmt"

	"github.com/corral-sched/corral/internal/cost/plan"
	"github.com/corral-sched/corral/internal/report/html"
)

// report is the example's HTML page.
func report(s series, moves []move, packed, unpacked plan.Optimum, lockedIn float64) html.Report {
	hs := make([]float64, len(s.whole))
	for i := range hs {
		hs[i] = float64(i)
	}
	final := moves[len(moves)-1]
	r := html.Report{
		Title: "Worked example: a 100-GPU team, move by move",
		Intro: []string{
			"A month of a team's H100 demand: inference services on whole cards and training gangs on shared on-demand capacity, then three moves: MIG-packed inference, spot training and a reserved floor under the packed inference. Prices come from corral's catalog with their sources; the demand is generated (see README.md for the assumptions).",
		},
		Timelines: []html.Timeline{
			{Name: "inference (H100-80GB)", Hours: hs, Committed: float64(packed.Level), Series: []html.Values{
				{Name: "whole cards", Values: s.whole}, {Name: "MIG-packed", Values: s.packed}, {Name: "used (card-equivalents)", Values: s.used}}},
			{Name: "training (H100-80GB)", Hours: hs, Series: []html.Values{{Name: "GPUs", Values: s.training}}},
		},
		Costs: html.CostsOf(final.Bill),
		Curves: []html.Curve{
			curve("inference, MIG-packed", packed), curve("inference, whole cards", unpacked),
		},
		Data: struct {
			Moves         []move  `json:"moves"`
			PackedFloor   int     `json:"packed_floor"`
			UnpackedFloor int     `json:"unpacked_floor"`
			LockedInWaste float64 `json:"locked_in_waste_usd"`
		}{moves, packed.Level, unpacked.Level, lockedIn},
	}
	t := html.Table{ID: "moves", Title: "The saving, move by move (one month)", Columns: []string{"step", "change", "monthly cost (USD)",
		"saving vs previous (USD)", "saving vs baseline (USD)", "GPU-hours bought", "USD per useful GPU-hour"}}
	for i, m := range moves {
		at := fmt.Sprintf("moves.%d.", i)
		t.Rows = append(t.Rows, []html.Cell{html.Text(m.Step), html.Text(m.Change), html.Num(m.CostUSD, 0, at+"monthly_cost_usd"),
			html.Num(m.SavingUSD, 0, at+"saving_vs_previous_usd"), html.Num(m.CumulSaving, 0, at+"saving_vs_baseline_usd"),
			html.Num(m.BoughtGPUH, 0, at+"gpu_hours_bought"), html.Num(m.PerUseful, 2, at+"usd_per_useful_gpu_hour")})
	}
	last := fmt.Sprintf("moves.%d.bill.", len(moves)-1)
	t.Notes = append(t.Notes, fmt.Sprintf("Best reserved floor: %d GPUs for the packed inference, %d for the same inference on whole cards. Reserving the whole-card floor and then packing would cost $%s a month more than the packed floor.",
		packed.Level, unpacked.Level, usd(lockedIn)))
	r.Tables = append(r.Tables, t,
		html.BillTable("bill-by-pool", "After all three moves: bill by pool", last+"by_pool", final.Bill.ByPool),
		html.BillTable("bill-by-capacity", "After all three moves: bill by capacity type", last+"by_capacity_type", final.Bill.ByCapacity))
	return r
}

func curve(name string, o plan.Optimum) html.Curve {
	c := html.Curve{Name: name, Chosen: o.Level}
	for _, p := range o.Curve {
		c.Levels = append(c.Levels, float64(p.Committed))
		c.Cost = append(c.Cost, p.CostUSD)
	}
	return c
}
