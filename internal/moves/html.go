package moves

import (
	"fmt"
	"strings"

	"github.com/corral-sched/corral/internal/report/html"
	"github.com/corral-sched/corral/internal/report/svg"
)

// HTML is the report as a self-contained page: each replay's cost by pool
// and capacity type, the table of moves with every number pointing into
// the embedded report, the floors and the catalog lines used.
func (rep *Report) HTML() html.Report {
	r := html.Report{
		Title: "corral sim --moves: " + rep.Input,
		Intro: []string{
			fmt.Sprintf("One workload replayed under %s once for a baseline (one on-demand pool, whole GPUs for every task), once per move alone and once with all moves together. Pools scale from zero up to %d nodes of 8 %s each; every replay is priced over the arrival window at the catalog's prices for %s.",
				rep.Policy, rep.Nodes, rep.GPUModel, rep.Offer),
			fmt.Sprintf("Alone, %s saves most on this workload. Spot nodes are interrupted at the catalog's band (%s a month, the high end simulated) and an interrupted node's capacity is missing for a mean of %.1f hours (an assumption).",
				rep.Best, rep.SpotBand, rep.SpotOutageH),
		},
		Summary:   rep.summary(),
		Waterfall: rep.waterfall(),
		CostGroup: "replay",
		Data:      rep,
	}
	for _, sk := range rep.Skipped {
		r.Intro = append(r.Intro, fmt.Sprintf("The %s move is skipped: %s.", sk.Move, sk.Why))
	}
	rows := rep.rows()
	for _, x := range rows {
		for _, l := range x.m.ByCapacity {
			r.Costs = append(r.Costs, html.CostItem{Group: x.m.Name, Pool: "all pools", Capacity: l.Key, USD: l.CostUSD})
		}
		r.Efficiency = append(r.Efficiency, html.Efficiency{Name: x.m.Name, TotalUSD: x.m.CostUSD, USDPerUsefulGPUH: x.m.USDPerWorkGPUH, UndoneGPUH: x.m.BacklogGPUH})
	}
	t := html.Table{ID: "moves", Title: "The moves: saving, waits and lost work", Columns: []string{"move", "what", "cost (USD)", "saving (USD)",
		"saving", "GPU-hours bought", "work done (GPU-hours)", "USD per GPU-hour of work", "mean wait (h)", "p99 wait (h)", "stops", "lost GPU-hours", "lost (USD)", "backlog GPU-hours"}}
	for _, x := range rows {
		m, at := x.m, x.path+"."
		t.Rows = append(t.Rows, []html.Cell{html.Text(m.Name), html.Text(m.What), html.Num(m.CostUSD, 0, at+"cost_usd"),
			html.Num(m.SavingUSD, 0, at+"saving_usd"), html.Num(m.SavingPct, 1, at+"saving_pct"), html.Num(m.BoughtGPUH, 0, at+"bought_gpu_hours"),
			html.Num(m.WorkGPUH, 0, at+"work_done_gpu_hours"), html.Num(m.USDPerWorkGPUH, 2, at+"usd_per_work_gpu_hour"), html.Num(m.MeanWaitH, 2, at+"mean_wait_h"),
			html.Num(m.P99WaitH, 2, at+"p99_wait_h"), html.Num(float64(m.Interruptions), 0, at+"interruptions"),
			html.Num(m.LostGPUH, 1, at+"lost_gpu_hours"), html.Num(m.LostUSD, 0, at+"lost_usd"), html.Num(m.BacklogGPUH, 0, at+"backlog_gpu_hours")})
	}
	t.Notes = append(t.Notes, fmt.Sprintf("Alone, %s saves most: %.1f%% of the baseline's cost. All together: %.1f%%.", rep.Best, rep.move(rep.Best).SavingPct, rep.All.SavingPct))
	t.Notes = append(t.Notes, rep.Warnings...)
	r.Tables = append(r.Tables, t, rep.floorsTable(), rep.linesTable(rows))
	return r
}

// combined are the moves "all" makes together: every move but the floors
// of the terms it did not use (a floor of another kind is an alternative,
// not a further saving), and those left out.
func (rep *Report) combined() (in []Move, out []string) {
	used := ""
	for _, f := range rep.Floors {
		if f.After == rep.AllButFloor.Name && f.Skipped == "" {
			used = floorName(f.Term)
		}
	}
	for _, m := range rep.Moves {
		if strings.HasPrefix(m.Name, "floor-") && m.Name != used {
			out = append(out, m.Name)
			continue
		}
		in = append(in, m)
	}
	return in, out
}

// overlap is how much less the moves save together than the sum of what
// each saves alone (negative when together they save more).
func (rep *Report) overlap() float64 {
	alone := 0.0
	in, _ := rep.combined()
	for _, m := range in {
		alone += m.SavingUSD
	}
	return alone - rep.All.SavingUSD
}

// waterfall is the baseline's cost, each move's saving alone, what the
// moves undo of each other's savings together, and the cost with all of
// them: every figure at the baseline's work, as the savings are.
func (rep *Report) waterfall() *html.Waterfall {
	w := &html.Waterfall{ID: "savings", Title: "Savings from the baseline", YLabel: "cost at the baseline's work (USD)",
		Caption: []string{"The baseline's cost, then each move's saving when made alone (green, down; a move that costs more goes up, red), then the difference made by making them together, and the cost with all moves (blue). Savings are at equal work: each replay's cost of a GPU-hour of work times the baseline's work, so a replay that does less work does not look cheaper for it."}}
	w.Steps = append(w.Steps, svg.Step{Label: "baseline", Value: rep.Baseline.CostUSD, Total: true})
	in, out := rep.combined()
	for _, m := range in {
		w.Steps = append(w.Steps, svg.Step{Label: m.Name, Value: -m.SavingUSD})
	}
	w.Steps = append(w.Steps, svg.Step{Label: "together", Value: rep.overlap()}, svg.Step{Label: "all moves", Total: true})
	if len(out) > 0 {
		w.Caption = append(w.Caption, fmt.Sprintf("Left out: %s, a floor of another kind of commitment than the one all moves use: an alternative to it, not a further saving (its saving alone is in the table).", strings.Join(out, ", ")))
	}
	if o := rep.overlap(); o > 0 {
		w.Caption = append(w.Caption, fmt.Sprintf("Together the moves save %s less than the sum of their savings alone: they act on the same GPU-hours, and an hour one move has removed cannot be saved again by another.", usd(o)))
	}
	return w
}

// summary is the answer first: what the best move saves alone, what all
// of them save, and how the two compare.
func (rep *Report) summary() []string {
	best := rep.move(rep.Best)
	out := []string{fmt.Sprintf("The baseline costs %s over the arrival window. Alone, %s saves most: %s (%.1f%%). All moves together save %s (%.1f%%), for %s at the baseline's work.",
		usd(rep.Baseline.CostUSD), rep.Best, usd(best.SavingUSD), best.SavingPct, usd(rep.All.SavingUSD), rep.All.SavingPct, usd(rep.Baseline.CostUSD-rep.All.SavingUSD))}
	if rep.All.SavingUSD < best.SavingUSD {
		out = append(out, fmt.Sprintf("All moves together save less than %s alone: the moves undo part of each other's savings (see the waterfall).", rep.Best))
	}
	if n := len(rep.Warnings); n > 0 {
		out = append(out, fmt.Sprintf("%d warning(s) under the table of moves: read them before acting on these figures.", n))
	}
	return out
}

// usd formats dollars with no cents.
func usd(v float64) string {
	if v < 0 {
		return "-" + usd(-v)
	}
	s := fmt.Sprintf("%.0f", v)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return "$" + s
}

// row is a replay and where it sits in the report's JSON.
type row struct {
	m    Move
	path string
}

func (rep *Report) rows() []row {
	out := []row{{rep.Baseline, "baseline"}}
	for i, m := range rep.Moves {
		out = append(out, row{m, fmt.Sprintf("moves.%d", i)})
	}
	return append(out, row{rep.AllButFloor, "all_but_floor"}, row{rep.All, "all"})
}

// linesTable lists the catalog lines each replay used.
func (rep *Report) linesTable(rows []row) html.Table {
	t := html.Table{ID: "lines", Title: "Catalog lines used", Columns: []string{"move", "offer", "capacity", "USD per GPU-hour", "data of", "how", "source"}}
	for _, x := range rows {
		for i, p := range x.m.Prices {
			t.Rows = append(t.Rows, []html.Cell{html.Text(x.m.Name), html.Text(p.Provider + " " + p.Instance + " " + p.Region),
				html.Text(string(p.Capacity)), html.Num(p.USDPerGPUHour, 3, fmt.Sprintf("%s.catalog_lines.%d.usd_per_gpu_hour", x.path, i)),
				html.Text(p.Seen), html.Text(p.How), html.Text(p.Source)})
		}
	}
	return t
}

// floorsTable sets the floor of each kind side by side: the planner's
// level against the brute-force search, coverage and utilisation.
func (rep *Report) floorsTable() html.Table {
	t := html.Table{ID: "floors", Title: "The floor, by kind of commitment", Columns: []string{"planned on", "term", "kind", "pool", "series",
		"planner GPUs", "brute-force GPUs", "committed GPUs", "coverage", "utilisation", "unused commitment (USD)", "note"}}
	for i, f := range rep.Floors {
		at := fmt.Sprintf("floors.%d.", i)
		t.Rows = append(t.Rows, []html.Cell{html.Text(f.After), html.Text(string(f.Term)), html.Text(string(f.Kind)), html.Text(f.Pool),
			html.Text(f.Series), html.Num(float64(f.PlannerGPUs), 0, at+"planner_gpus"), html.Num(f.BruteForceGPUs, 0, at+"brute_force_gpus"),
			html.Num(float64(f.committed()), 0, ""), html.Pct(f.Billing.Coverage, 1, at+"billing.coverage"), html.Pct(f.Billing.Utilisation, 1, at+"billing.utilisation"),
			html.Num(f.Billing.UnusedUSD, 0, at+"billing.unused_commitment_usd"), html.Text(f.Skipped)})
	}
	t.Notes = append(t.Notes, "A discount commitment (savings plans, reserved instances, committed use discounts) is applied after the fact to the on-demand GPUs billed each hour in every pool; a capacity commitment (Capacity Blocks, capacity reservations) is committed nodes the scheduler must fill, in whole 8-GPU nodes. Brute force: every level from 0 to the peak billed hour by hour on the same series.")
	return t
}
