package main

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/corral-sched/corral/internal/cost/plan"
	"github.com/corral-sched/corral/internal/cost/price"
	"github.com/corral-sched/corral/internal/report/html"
	"github.com/corral-sched/corral/internal/sim"
)

// writeSimHTML writes the replay as one self-contained page (simReport).
func writeSimHTML(path string, out *simOutputs, cat *price.Catalog) error {
	return writeHTMLFile(path, simReport(out, cat))
}

// simReport is the replay as a report: GPUs demanded, occupied, allocated
// and used over time per policy, on one scale with the fleet's capacity;
// cost by pool and capacity type, a bar per policy; wait-time
// distributions; fragmentation over time; and the summary and bill
// tables. The page embeds the same document as --json (without per-job
// records and hourly samples), and every number in its tables points into
// it.
func simReport(out *simOutputs, cat *price.Catalog) html.Report {
	r := html.Report{
		Title: "corral sim: " + out.label,
		Intro: []string{
			"The same workload replayed under each policy. Occupied GPUs are cards with anything on them (what must be paid for); allocated and used are GPU amounts held by placements and asked for by running jobs; the charts share one scale, with the fleet's capacity drawn. The dotted line is the commitment (of --reserved-term, a Capacity Block by default) corral plan recommends for the cards occupied while work arrives (the drain after the last arrival left out), where the catalog has a commitment price. Costs use the built-in price catalog unless --prices was given.",
		},
	}
	for _, res := range out.results {
		t := simTimeline(res)
		t.Committed, t.Capacity = committedFloor(res, cat, out.term), out.capacity
		r.Timelines = append(r.Timelines, t)
		r.Waits = append(r.Waits, html.Waits{Policy: res.Policy, Hours: waitHours(res)})
		r.Fragmentation = append(r.Fragmentation, fragmentationLine(res))
		if c := out.costs[res.Policy]; c != nil {
			for _, item := range html.CostsOf(c.Bill) {
				item.Group = res.Policy
				r.Costs = append(r.Costs, item)
			}
		}
	}
	html.ShareScale(r.Timelines)
	r.Efficiency = simEfficiency(out)
	r.Summary = simSummary(out)
	r.Tables = simTables(out)
	r.Data = simDoc(out, stripped(out.results))
	return r
}

// simEfficiency sets each policy's cost beside its cost per useful
// GPU-hour and the work it left undone, then each platform's (--tco).
func simEfficiency(out *simOutputs) []html.Efficiency {
	var es []html.Efficiency
	for _, res := range out.results {
		c := out.costs[res.Policy]
		if c == nil {
			continue
		}
		e := html.Efficiency{Name: res.Policy, TotalUSD: c.Bill.Total.CostUSD, USDPerUsefulGPUH: math.NaN(), UndoneGPUH: c.WorkUndoneGPUH}
		if c.USDPerUsefulGPUH != nil {
			e.USDPerUsefulGPUH = *c.USDPerUsefulGPUH
		}
		es = append(es, e)
	}
	if len(out.platforms) > 0 {
		for _, e := range html.EfficiencyOfTCO(out.platforms) {
			e.Name = "platform: " + e.Name
			es = append(es, e)
		}
	}
	return es
}

// simSummary is the answer first: the policy with the shortest mean wait
// and, where costs were priced, the cheapest per useful GPU-hour beside
// the cheapest in total with the work each left undone.
func simSummary(out *simOutputs) []string {
	if len(out.results) == 0 {
		return nil
	}
	fast := out.results[0]
	for _, r := range out.results[1:] {
		if r.Summary.MeanWaitH < fast.Summary.MeanWaitH {
			fast = r
		}
	}
	lines := []string{fmt.Sprintf("Shortest mean wait: %s, %.2f hours, with %s GPU-hours of work left undone.",
		fast.Policy, fast.Summary.MeanWaitH, groupThousands(fast.Summary.UndoneGPUH))}
	var per, total *html.Efficiency
	es := simEfficiency(out)
	for i := range es {
		e := &es[i]
		if strings.HasPrefix(e.Name, "platform: ") {
			continue
		}
		if !math.IsNaN(e.USDPerUsefulGPUH) && (per == nil || e.USDPerUsefulGPUH < per.USDPerUsefulGPUH) {
			per = e
		}
		if total == nil || e.TotalUSD < total.TotalUSD {
			total = e
		}
	}
	if per != nil {
		lines = append(lines, fmt.Sprintf("Cheapest per useful GPU-hour: %s, $%.2f ($%s in all, %s GPU-hours undone).",
			per.Name, per.USDPerUsefulGPUH, groupThousands(per.TotalUSD), groupThousands(per.UndoneGPUH)))
	}
	if total != nil && total != per {
		lines = append(lines, fmt.Sprintf("Cheapest in total: %s, $%s, but it leaves %s GPU-hours of work undone: its total pays for less work.",
			total.Name, groupThousands(total.TotalUSD), groupThousands(total.UndoneGPUH)))
	}
	return lines
}

// groupThousands formats v with no decimals and thousands separators.
func groupThousands(v float64) string {
	return html.Num(v, 0, "").Text
}

// simTables are the report's tables: the summary, each policy's bill, the
// platforms and the jobs refused.
func simTables(out *simOutputs) []html.Table {
	tables := []html.Table{simSummaryTable(out.results)}
	if ws := costWarnings(out.results, out.costs); len(ws) > 0 {
		for i := range ws {
			ws[i] = "WARNING " + ws[i]
		}
		tables[0].Notes = append(tables[0].Notes, ws...)
	}
	for _, res := range out.results {
		if c := out.costs[res.Policy]; c != nil {
			tables = append(tables, html.BillTable("bill-"+res.Policy, "Cost of "+res.Policy+" by capacity type",
				"costs."+res.Policy+".bill.by_capacity_type", c.Bill.ByCapacity))
		}
	}
	if len(out.platforms) > 0 {
		t := html.TCOTable("tco", out.platforms)
		if out.tcoNote != "" {
			t.Notes = append(t.Notes, "Note: "+out.tcoNote)
		}
		tables = append(tables, t)
	}
	if t, ok := refusedTable(out.results); ok {
		tables = append(tables, t)
	}
	return tables
}

// committedFloor is the commitment (of term) the planner recommends for the
// cards a policy occupied while work arrived, summed over GPU models (0
// when no model has a commitment price): the floor drawn on its timeline.
// The drain after the last arrival is left out: a commitment is sized for
// the steady state, not for the tail of a replay.
func committedFloor(res *sim.Result, cat *price.Catalog, term price.Capacity) float64 {
	d := cardDemand(arrivalWindow(res))
	p, err := plan.Build(d, cat, plan.Options{Term: term})
	if err != nil {
		return 0
	}
	floor := 0
	for _, m := range p.Models {
		floor += m.Committed
	}
	return float64(floor)
}

// arrivalWindow is the hourly samples taken while work arrived.
func arrivalWindow(res *sim.Result) []sim.Hour {
	for i, h := range res.Hours {
		if float64(h.Hour) >= res.Summary.HorizonH {
			return res.Hours[:i]
		}
	}
	return res.Hours
}

// refusedTable lists the jobs refused at arrival (the same under every
// policy), if any.
func refusedTable(results []*sim.Result) (html.Table, bool) {
	if len(results) == 0 || len(results[0].Refused) == 0 {
		return html.Table{}, false
	}
	t := html.Table{ID: "refused", Title: "Refused: over quota forever", Columns: []string{"job", "tenant", "class", "GPUs", "arrived (h)", "reason"},
		Notes: []string{"Jobs whose tenant's quota, with everything its cohort could lend, can never admit them: refused at arrival under every policy, and left out of every other figure."}}
	for i, j := range results[0].Refused {
		at := fmt.Sprintf("results.0.refused.%d.", i)
		t.Rows = append(t.Rows, []html.Cell{html.Text(j.Name), html.Text(j.Tenant), html.Text(j.Class), html.Num(j.GPUs, 2, at+"gpus"),
			html.Text(fmt.Sprintf("%.2f", j.Arrive.Hours())), html.Text(j.Reason)})
	}
	return t, true
}

// stripped copies results without per-job records and hourly samples.
func stripped(results []*sim.Result) []*sim.Result {
	out := make([]*sim.Result, len(results))
	for i, r := range results {
		c := *r
		c.Jobs, c.Hours = nil, nil
		out[i] = &c
	}
	return out
}

// simTimeline sums the hourly samples over the fleet's groups.
func simTimeline(res *sim.Result) html.Timeline {
	t := html.Timeline{Name: res.Policy}
	series := []html.Values{{Name: "demanded"}, {Name: "occupied"}, {Name: "allocated"}, {Name: "used"}}
	for _, h := range res.Hours {
		t.Hours = append(t.Hours, float64(h.Hour))
		occupied, allocated, used := 0.0, 0.0, 0.0
		for _, g := range h.Groups {
			occupied += float64(g.Occupied)
			allocated += g.Allocated
			used += g.Used
		}
		for i, v := range []float64{h.Demanded, occupied, allocated, used} {
			series[i].Values = append(series[i].Values, v)
		}
	}
	t.Series = series
	return t
}

func fragmentationLine(res *sim.Result) html.Line {
	l := html.Line{Name: res.Policy}
	for _, h := range res.Hours {
		frag := 0
		for _, g := range h.Groups {
			frag += g.Fragmented
		}
		l.X = append(l.X, float64(h.Hour))
		l.Y = append(l.Y, float64(frag))
	}
	return l
}

func waitHours(res *sim.Result) []float64 {
	end := durationOfHours(res.Summary.MakespanH) // waits of jobs never started run to the end
	out := make([]float64, 0, len(res.Jobs))
	for _, j := range res.Jobs {
		out = append(out, j.Wait(end).Hours())
	}
	sort.Float64s(out)
	return out
}

// simSummaryTable shows the stable per-policy numbers.
func simSummaryTable(results []*sim.Result) html.Table {
	t := html.Table{ID: "summary", Title: "Summary per policy", Columns: []string{"policy", "mean wait (h)", "p99 wait (h)",
		"mean JCT (h)", "GPU allocation", "GPU utilisation", "lost GPU-hours", "preemptions", "deadlocked gangs", "work undone (GPU-hours)"}}
	hours := func(v float64, path string) html.Cell {
		return html.Cell{Text: fmt.Sprintf("%.2f", v/3600), Path: path, Value: v, Scale: 1.0 / 3600}
	}
	for _, r := range results {
		st := stableFields(r.Summary)
		at := "policies." + r.Policy + "."
		t.Rows = append(t.Rows, []html.Cell{html.Text(r.Policy), hours(st.MeanWaitS, at+"mean_wait_s"), hours(st.P99WaitS, at+"p99_wait_s"),
			hours(st.MeanJCTS, at+"mean_jct_s"), html.Num(st.GPUAllocationPct, 1, at+"gpu_allocation_pct"),
			html.Num(st.GPUUtilisationPct, 1, at+"gpu_utilisation_pct"), html.Num(st.LostGPUHours, 0, at+"lost_gpu_hours"),
			html.Num(float64(st.Preemptions), 0, at+"preemptions"), html.Num(float64(st.DeadlockedGangs), 0, at+"deadlocked_gangs"),
			html.Num(st.WorkUndoneGPUH, 0, at+"work_undone_gpu_hours")})
	}
	return t
}
