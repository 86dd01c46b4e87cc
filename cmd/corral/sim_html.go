package main

import (
	"fmt"
	"sort"

	"github.com/corral-sched/corral/internal/cost/plan"
	"github.com/corral-sched/corral/internal/cost/price"
	"github.com/corral-sched/corral/internal/cost/tco"
	"github.com/corral-sched/corral/internal/report/html"
	"github.com/corral-sched/corral/internal/sim"
)

// writeSimHTML writes the replay as one self-contained page: GPUs
// demanded, occupied, allocated and used over time per policy, cost by
// pool and capacity type, wait-time distributions, fragmentation over
// time, and the summary and bill tables. The page embeds the same
// document as --json (without per-job records and hourly samples), and
// every number in its tables points into it.
func writeSimHTML(path, label string, results []*sim.Result, costs map[string]*simCost, platforms []tco.Row, cat *price.Catalog) error {
	r := html.Report{
		Title: "corral sim: " + label,
		Intro: []string{
			"The same workload replayed under each policy. Occupied GPUs are cards with anything on them (what must be paid for); allocated and used are GPU amounts held by placements and asked for by running jobs. The dotted line is the 1-year commitment corral plan recommends for the occupied cards, where the catalog has a commitment price. Costs use the built-in price catalog unless --prices was given.",
		},
	}
	for _, res := range results {
		t := simTimeline(res)
		t.Committed = committedFloor(res, cat)
		r.Timelines = append(r.Timelines, t)
		r.Waits = append(r.Waits, html.Waits{Policy: res.Policy, Hours: waitHours(res)})
		r.Fragmentation = append(r.Fragmentation, fragmentationLine(res))
		if c := costs[res.Policy]; c != nil {
			for _, item := range html.CostsOf(c.Bill) {
				item.Pool = res.Policy + " / " + item.Pool
				r.Costs = append(r.Costs, item)
			}
		}
	}
	r.Tables = append(r.Tables, simSummaryTable(results))
	for _, res := range results {
		if c := costs[res.Policy]; c != nil {
			r.Tables = append(r.Tables, html.BillTable("bill-"+res.Policy, "Cost of "+res.Policy+" by capacity type",
				"costs."+res.Policy+".bill.by_capacity_type", c.Bill.ByCapacity))
		}
	}
	if len(platforms) > 0 {
		r.Tables = append(r.Tables, html.TCOTable("tco", platforms))
	}
	doc := simDoc(label, stripped(results), costs, platforms)
	r.Data = doc
	return writeHTMLFile(path, r)
}

// committedFloor is the 1-year commitment the planner recommends for the
// cards a policy occupied, summed over GPU models (0 when no model has a
// commitment price): the floor drawn on its timeline.
func committedFloor(res *sim.Result, cat *price.Catalog) float64 {
	d := cardDemand(res.Hours)
	p, err := plan.Build(d, cat, plan.Options{Term: price.Reserved1y})
	if err != nil {
		return 0
	}
	floor := 0
	for _, m := range p.Models {
		floor += m.Committed
	}
	return float64(floor)
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
		"mean JCT (h)", "GPU allocation", "GPU utilisation", "lost GPU-hours", "preemptions", "deadlocked gangs"}}
	hours := func(v float64, path string) html.Cell {
		return html.Cell{Text: fmt.Sprintf("%.2f", v/3600), Path: path, Value: v, Scale: 1.0 / 3600}
	}
	for _, r := range results {
		st := stableFields(r.Summary)
		at := "policies." + r.Policy + "."
		t.Rows = append(t.Rows, []html.Cell{html.Text(r.Policy), hours(st.MeanWaitS, at+"mean_wait_s"), hours(st.P99WaitS, at+"p99_wait_s"),
			hours(st.MeanJCTS, at+"mean_jct_s"), html.Num(st.GPUAllocationPct, 1, at+"gpu_allocation_pct"),
			html.Num(st.GPUUtilisationPct, 1, at+"gpu_utilisation_pct"), html.Num(st.LostGPUHours, 0, at+"lost_gpu_hours"),
			html.Num(float64(st.Preemptions), 0, at+"preemptions"), html.Num(float64(st.DeadlockedGangs), 0, at+"deadlocked_gangs")})
	}
	return t
}
