package html

import (
	"fmt"
	"math"

	"github.com/corral-sched/corral/internal/cost"
	"github.com/corral-sched/corral/internal/cost/tco"
)

// CostsOf turns a bill's rows into the cost section's items.
func CostsOf(b *cost.Bill) []CostItem {
	var items []CostItem
	for _, r := range b.Rows {
		items = append(items, CostItem{Pool: r.Pool, Capacity: r.CapacityType, USD: r.CostUSD})
	}
	return items
}

// BillTable is a bill's lines grouped one way (by pool, capacity type,
// tenant or class). path is where the lines sit in the report's data, for
// example "bill.by_pool".
func BillTable(id, title, path string, lines []cost.Line) Table {
	t := Table{ID: id, Title: title, Columns: []string{"", "cost (USD)", "GPU-hours bought", "used", "wasted",
		"idle", "fragmented", "lost to preemption", "lost to interruption", "USD per useful GPU-hour"}}
	for i, l := range lines {
		at := fmt.Sprintf("%s.%d.", path, i)
		row := []Cell{Text(l.Key), Num(l.CostUSD, 0, at+"cost_usd"), Num(l.BoughtGPUH, 0, at+"bought_gpu_hours"),
			Num(l.UsedGPUH, 0, at+"used_gpu_hours"), Num(l.WastedGPUH, 0, at+"wasted_gpu_hours"), Num(l.IdleGPUH, 0, at+"idle_gpu_hours"),
			Num(l.FragmentedGPUH, 0, at+"fragmented_gpu_hours"), Num(l.PreemptedLostGPUH, 0, at+"preempted_lost_gpu_hours"),
			Num(l.InterruptedLostGPUH, 0, at+"interrupted_lost_gpu_hours")}
		if l.USDPerUsefulGPUH != nil {
			row = append(row, Num(*l.USDPerUsefulGPUH, 3, at+"usd_per_useful_gpu_hour"))
		} else {
			row = append(row, Text("-"))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// TCOTable is the platform comparison: compute, storage and networking,
// operations, tools and total per month, and the waits. path is where the
// rows sit in the report's data.
func TCOTable(path string, rows []tco.Row) Table {
	t := Table{ID: "tco-table", Title: "Monthly cost per platform", Columns: []string{"platform", "GPU-hours bought", "compute (USD)",
		"storage and networking (USD)", "operations (USD)", "tools (USD)", "total (USD)", "USD per useful GPU-hour",
		"work undone (GPU-hours)", "mean wait (h)", "p99 wait (h)"},
		Notes: []string{"Fixed monthly costs and compute premiums are assumptions from the platform profiles (internal/cost/tco/profiles.yaml): edit them to your situation.",
			"USD per useful GPU-hour: the total over the GPU-hours of work done and kept. Work undone: GPU-hours of work asked for and not done; totals compare equal work only where it is equal."}}
	for i, r := range rows {
		at := fmt.Sprintf("%s.%d.", path, i)
		per := Text("-")
		if r.USDPerUsefulGPUHour != nil {
			per = Num(*r.USDPerUsefulGPUHour, 2, at+"usd_per_useful_gpu_hour")
		}
		t.Rows = append(t.Rows, []Cell{Text(r.Title), Num(r.GPUHoursBought, 0, at+"gpu_hours_bought"), Num(r.ComputeUSD, 0, at+"compute_usd"),
			Num(r.StorageNetworkingUSD, 0, at+"storage_networking_usd"), Num(r.OperationsUSD, 0, at+"operations_usd"),
			Num(r.ToolsUSD, 0, at+"tools_usd"), Num(r.TotalUSD, 0, at+"total_usd"), per, Num(r.UndoneGPUHours, 0, at+"work_undone_gpu_hours"),
			Num(r.MeanWaitHours, 2, at+"mean_wait_hours"), Num(r.P99WaitHours, 2, at+"p99_wait_hours")})
	}
	return t
}

// EfficiencyOfTCO sets each platform's monthly total beside its cost per
// useful GPU-hour and the work it left undone.
func EfficiencyOfTCO(rows []tco.Row) []Efficiency {
	out := make([]Efficiency, 0, len(rows))
	for _, r := range rows {
		e := Efficiency{Name: r.Title, TotalUSD: r.TotalUSD, USDPerUsefulGPUH: math.NaN(), UndoneGPUH: r.UndoneGPUHours}
		if r.USDPerUsefulGPUHour != nil {
			e.USDPerUsefulGPUH = *r.USDPerUsefulGPUHour
		}
		out = append(out, e)
	}
	return out
}
