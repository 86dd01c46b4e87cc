package html

import (
	"fmt"
	"strconv"

	"github.com/corral-sched/corral/internal/cost/plan"
)

// PlanReport is the report of corral plan: demand over time with the
// committed floor, cost by model and capacity type, the cost curve of each
// model, and the plan's tables. demand and unpacked are the series the
// plans were made from (unpacked may be nil).
func PlanReport(out *plan.Output, demand, unpacked *plan.Demand) Report {
	r := Report{
		Title: fmt.Sprintf("GPU commitment plan (%s)", out.Plan.Term),
		Intro: []string{
			fmt.Sprintf("Demand from %s over %d hours. Committed GPUs cost the committed rate every hour; demand above them runs on demand (%.0f%% of it on spot). A committed GPU pays for itself when it is busy in more of the hours than its break-even share, committed/overflow price.",
				out.Demand, out.Plan.Hours, 100*out.Plan.SpotShare),
		},
		Summary: planSummary(out.Plan),
		Data:    out,
	}
	for _, w := range out.Plan.Warnings {
		r.Intro = append(r.Intro, "WARNING "+w.Message)
	}
	for _, m := range out.Plan.Models {
		r.Timelines = append(r.Timelines, timelineOf(m, demand, unpacked, out.Unpacked))
		r.Costs = append(r.Costs, costItems(m, out.Plan)...)
		r.Curves = append(r.Curves, curveOf(m))
	}
	r.Tables = append(r.Tables, planTable("plan-table", "Plan", "plan", out.Plan), commitmentTable(out.Plan), buyTable(out.Plan), pricesTable(out.Plan))
	if out.Unpacked != nil {
		r.Tables = append(r.Tables, planTable("unpacked-table", "Plan for the same work unpacked", "unpacked", out.Unpacked), diffTable(out.Differences))
	}
	return r
}

func timelineOf(m plan.ModelPlan, demand, unpacked *plan.Demand, up *plan.Plan) Timeline {
	t := Timeline{Name: m.Model, Committed: float64(m.Committed)}
	n := 0
	if s := demand.Model(m.Model); s != nil {
		n = len(s.GPUs)
		t.Hours, t.Series = thinHours(n), append(t.Series, Values{Name: "demanded", Values: thinPeaks(s.GPUs)})
		t.Areas = commitmentAreas(t.Series[0].Values, t.Committed)
	}
	if unpacked != nil {
		if s := unpacked.Model(m.Model); s != nil && len(s.GPUs) == n {
			t.Series = append(t.Series, Values{Name: "demanded, unpacked", Values: thinPeaks(s.GPUs)})
		}
	}
	return t
}

// Colours of the shaded capacity: committed and used blue, committed and
// unused grey, on demand above the commitment orange (Okabe-Ito).
const (
	fillCommittedUsed   = "#0072B2"
	fillCommittedUnused = "#999999"
	fillOnDemand        = "#E69F00"
)

// commitmentAreas splits demand at each hour into the committed GPUs it
// uses, the committed GPUs left unused and what runs on demand above
// them; with nothing committed, all of it is on demand.
func commitmentAreas(demand []float64, committed float64) []Area {
	used := Area{Name: "committed, used", Fill: fillCommittedUsed}
	unused := Area{Name: "committed, unused", Fill: fillCommittedUnused}
	over := Area{Name: "on demand", Fill: fillOnDemand}
	for _, d := range demand {
		d = max(0, finiteOr(d, 0))
		in := min(d, committed)
		used.Lo, used.Hi = append(used.Lo, 0), append(used.Hi, in)
		unused.Lo, unused.Hi = append(unused.Lo, in), append(unused.Hi, committed)
		over.Lo, over.Hi = append(over.Lo, committed), append(over.Hi, max(d, committed))
	}
	if committed <= 0 {
		return []Area{over}
	}
	return []Area{used, unused, over}
}

// planSummary is the plan's answer in a sentence per model, and a word
// on the price warnings when there are any.
func planSummary(p *plan.Plan) []string {
	var out []string
	for _, m := range p.Models {
		buy := ""
		if m.Buy.Instances > 0 && m.Buy.Instance != "" {
			buy = fmt.Sprintf(", bought as %d × %s (%d GPUs, $%s an hour of commitment)", m.Buy.Instances, m.Buy.Instance, m.Buy.GPUs,
				group(strconv.FormatFloat(m.Buy.CommitUSDPerHour, 'f', 2, 64)))
		}
		saving := 0.0
		if m.AllOnDemandUSD > 0 {
			saving = 100 * m.SavingUSD / m.AllOnDemandUSD
		}
		if m.Committed == 0 {
			out = append(out, fmt.Sprintf("%s: commit nothing; no level is busy in more of the hours than the break-even of %.1f%%, so on demand costs less: %s over the %d hours.",
				m.Model, 100*m.BreakEven, dollars(m.CostUSD), p.Hours))
			continue
		}
		out = append(out, fmt.Sprintf("%s: commit %d GPUs as %s%s. Over the %d hours of demand that costs %s against %s all on demand, a saving of %s (%.1f%%); the committed GPUs are busy %.1f%% of the time, against a break-even of %.1f%%.",
			m.Model, m.Committed, p.Term, buy, p.Hours, dollars(m.CostUSD), dollars(m.AllOnDemandUSD), dollars(m.SavingUSD), saving,
			100*m.CommittedUsed, 100*m.BreakEven))
	}
	if n := len(p.Warnings); n > 0 {
		out = append(out, fmt.Sprintf("%d price warning(s) below: read them before buying.", n))
	}
	return out
}

// maxTimelinePoints bounds the points of a plan's demand timeline: ten
// years of hours drawn one point each would make the report tens of
// megabytes for no more than a chart's width of pixels.
const maxTimelinePoints = 2000

// timelineStep is how many hours one point of a timeline of n hours stands for.
func timelineStep(n int) int { return max(1, (n+maxTimelinePoints-1)/maxTimelinePoints) }

// thinHours is the first hour of each point of a timeline of n hours.
func thinHours(n int) []float64 {
	step := timelineStep(n)
	h := make([]float64, 0, n/step+1)
	for i := 0; i < n; i += step {
		h = append(h, float64(i))
	}
	return h
}

// thinPeaks is the highest demand of each point's hours, so that peaks
// above the committed floor stay visible.
func thinPeaks(v []float64) []float64 {
	step := timelineStep(len(v))
	if step == 1 {
		return v
	}
	out := make([]float64, 0, len(v)/step+1)
	for i := 0; i < len(v); i += step {
		peak := v[i]
		for _, x := range v[i:min(i+step, len(v))] {
			peak = max(peak, x)
		}
		out = append(out, peak)
	}
	return out
}

func costItems(m plan.ModelPlan, p *plan.Plan) []CostItem {
	items := []CostItem{{Pool: m.Model, Capacity: string(p.Term), USD: m.CommittedCostUSD},
		{Pool: m.Model, Capacity: "on-demand", USD: m.OnDemandCostUSD}}
	if p.SpotShare > 0 {
		items = append(items, CostItem{Pool: m.Model, Capacity: "spot", USD: m.SpotCostUSD})
	}
	return items
}

func curveOf(m plan.ModelPlan) Curve {
	c := Curve{Name: m.Model, Chosen: m.Committed}
	for _, p := range m.Curve {
		c.Levels = append(c.Levels, float64(p.Committed))
		c.Cost = append(c.Cost, p.CostUSD)
	}
	return c
}

func planTable(id, title, key string, p *plan.Plan) Table {
	t := Table{ID: id, Title: title, Columns: []string{"GPU model", "peak GPUs", "break-even", "commit GPUs",
		"committed used", "cost (USD)", "all on demand (USD)", "no commitment (USD)", "saving (USD)", "+10%: best level", "+10%: regret (USD)", "-10%: best level", "-10%: regret (USD)"}}
	for i, m := range p.Models {
		at := fmt.Sprintf("%s.models.%d.", key, i)
		row := []Cell{Text(m.Model), Num(m.PeakGPUs, 1, at+"peak_gpus"), Pct(m.BreakEven, 1, at+"break_even_utilisation"),
			Num(float64(m.Committed), 0, at+"recommended_committed_gpus"), Pct(m.CommittedUsed, 1, at+"committed_utilisation"),
			Num(m.CostUSD, 0, at+"expected_cost_usd"), Num(m.AllOnDemandUSD, 0, at+"all_on_demand_cost_usd"),
			Num(m.NoCommitmentUSD, 0, at+"no_commitment_cost_usd"), Num(m.SavingUSD, 0, at+"saving_vs_all_on_demand_usd")}
		for j, s := range m.Sensitivity {
			sp := fmt.Sprintf("%ssensitivity.%d.", at, j)
			row = append(row, Num(float64(s.BestLevel), 0, sp+"best_level"), Num(s.RegretUSD, 0, sp+"regret_usd"))
		}
		t.Rows = append(t.Rows, row)
	}
	for _, s := range p.Skipped {
		t.Notes = append(t.Notes, fmt.Sprintf("Not planned: %s: %s", s.Model, s.Reason))
	}
	return t
}

// commitmentTable is each model's commitment billed hour by hour at the
// planner's level: its kind, coverage and utilisation.
func commitmentTable(p *plan.Plan) Table {
	t := Table{ID: "commitment-table", Title: "The commitment billed hour by hour", Columns: []string{"GPU model", "kind", "committed GPUs",
		"coverage", "utilisation", "covered GPU-hours", "usage GPU-hours", "unused commitment (USD)"}}
	for i, m := range p.Models {
		b, at := m.Billing, fmt.Sprintf("plan.models.%d.", i)
		t.Rows = append(t.Rows, []Cell{Text(m.Model), Text(string(m.Kind)), Num(float64(m.Committed), 0, at+"recommended_committed_gpus"),
			Pct(b.Coverage, 1, at+"billing.coverage"), Pct(b.Utilisation, 1, at+"billing.utilisation"), Num(b.CoveredGPUH, 0, at+"billing.covered_gpu_hours"),
			Num(b.UsageGPUH, 0, at+"billing.usage_gpu_hours"), Num(b.UnusedUSD, 0, at+"billing.unused_commitment_usd")})
	}
	t.Notes = append(t.Notes, "A discount commitment (savings plans, reserved instances, committed use discounts) applies to matching usage in any node of its scope, up to its amount each hour; a capacity commitment (Capacity Blocks, capacity reservations) is nodes to fill, and its coverage here assumes the scheduler fills them first. Coverage: share of the usage covered; utilisation: share of the commitment used.")
	return t
}

// buyTable is the plan in whole instances beyond what is held, with the
// hourly commitment, the term's obligation and how the sample was
// extrapolated.
func buyTable(p *plan.Plan) Table {
	t := Table{ID: "buy-table", Title: "To buy, in whole instances", Columns: []string{"GPU model", "instance", "GPUs each", "held GPUs",
		"instances to buy", "GPUs to buy", "commitment (USD/hour)", "term obligation (USD)", "cost over the term (USD)"}}
	for i, m := range p.Models {
		b, at := m.Buy, fmt.Sprintf("plan.models.%d.buy.", i)
		t.Rows = append(t.Rows, []Cell{Text(m.Model), Text(b.Instance), Num(float64(b.GPUsPerInstance), 0, at+"gpus_per_instance"),
			Num(float64(b.HeldGPUs), 0, at+"held_gpus"), Num(float64(b.Instances), 0, at+"instances_to_buy"), Num(float64(b.GPUs), 0, at+"gpus_to_buy"),
			Num(b.CommitUSDPerHour, 2, at+"commitment_usd_per_hour"), Num(b.TermObligationUSD, 0, at+"term_obligation_usd"),
			Num(b.TermCostUSD, 0, at+"term_cost_usd")})
		t.Notes = append(t.Notes, m.Model+": "+b.Extrapolation+".")
		if b.Note != "" {
			t.Notes = append(t.Notes, m.Model+": "+b.Note+".")
		}
	}
	return t
}

func pricesTable(p *plan.Plan) Table {
	t := Table{ID: "prices-table", Title: "Prices used (per GPU-hour)", Columns: []string{"GPU model", "capacity", "offer", "USD", "source", "seen", "how"}}
	for i, m := range p.Models {
		at := fmt.Sprintf("plan.models.%d.prices.", i)
		t.Rows = append(t.Rows,
			[]Cell{Text(m.Model), Text(string(p.Term)), Text(m.Prices.Committed.Instance), Num(m.Prices.Committed.USDPerGPUHour, 4, at+"committed.usd_per_gpu_hour"),
				Text(m.Prices.Committed.Source), Text(m.Prices.Committed.Seen), Text(m.Prices.Committed.How)},
			[]Cell{Text(m.Model), Text("on-demand"), Text(m.Prices.OnDemand.Instance), Num(m.Prices.OnDemand.USDPerGPUHour, 4, at+"on_demand.usd_per_gpu_hour"),
				Text(m.Prices.OnDemand.Source), Text(m.Prices.OnDemand.Seen), Text(m.Prices.OnDemand.How)})
		if sp := m.Prices.Spot; sp != nil {
			t.Rows = append(t.Rows, []Cell{Text(m.Model), Text("spot"), Text(sp.Instance), Num(sp.USDPerGPUHour, 4, at+"spot.usd_per_gpu_hour"),
				Text(sp.Source), Text(sp.Seen), Text(sp.How)})
		}
	}
	return t
}

func diffTable(ds []plan.Difference) Table {
	t := Table{ID: "difference-table", Title: "Packed vs unpacked", Columns: []string{"GPU model", "commit packed", "commit unpacked",
		"cost packed (USD)", "cost unpacked (USD)", "saving (USD)", "waste locked in by the unpacked level (USD)"},
		Notes: []string{"Waste locked in: the cost of committing at the unpacked level once the work is packed, above the packed plan."}}
	for i, d := range ds {
		at := fmt.Sprintf("differences.%d.", i)
		t.Rows = append(t.Rows, []Cell{Text(d.Model), Num(float64(d.PackedLevel), 0, at+"packed_committed_gpus"),
			Num(float64(d.UnpackedLevel), 0, at+"unpacked_committed_gpus"), Num(d.PackedCostUSD, 0, at+"packed_cost_usd"),
			Num(d.UnpackedCostUSD, 0, at+"unpacked_cost_usd"), Num(d.SavingUSD, 0, at+"saving_usd"), Num(d.LockedInWasteUSD, 0, at+"locked_in_waste_usd")})
	}
	return t
}
